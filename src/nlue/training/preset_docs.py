"""The presets and families as Markdown: the table in trainers/README.md (a test checks it agrees)."""

from __future__ import annotations

from nlue.lm.families import FAMILIES
from nlue.training.presets import PRESETS, PresetSpec


def _layers_cell(spec: PresetSpec, total: int) -> str:
    layers = spec.layers(total)
    if not layers:
        return "none"
    span = f"{layers[0]}–{layers[-1]}" if len(layers) > 1 else str(layers[0])
    text = f"{span} (all {total})" if len(layers) == total else f"{span} (top {len(layers)})"
    return text + " + embeddings" if spec.train_embeddings else text


def presets_markdown_table() -> str:
    """Markdown: the presets (layers for 12-, 6- and 24-layer bases) and, per family, head and embeddings."""
    lines = [
        "Presets I–VIII are our reading of the paper's eight configurations (the figures that define them",
        'are not in its text; see "How presets I–VIII were derived" below). They run from the most to the',
        "fewest trainable parameters. L = number of encoder layers; layers are 0-based, top = last; fractions",
        "round up; the head always trains. The extra fully connected layer belongs to no preset: `--extra_fc`",
        "adds it to any of them.",
        "",
        "| preset | what trains | layers trained, 12-layer base (BERT, RoBERTa, XLM-R, DeBERTa) "
        "| layers trained, 6-layer DistilBERT | layers trained, 24-layer large base |",
        "|---|---|---|---|---|",
    ]
    for spec in PRESETS.values():
        lines.append(
            f"| {spec.name} | {spec.description} | {_layers_cell(spec, 12)} | {_layers_cell(spec, 6)} "
            f"| {_layers_cell(spec, 24)} |"
        )
    lines += [
        "",
        "| family (model types) | layers | head (always trains) | embeddings (train in I only) "
        "| extra FC (Linear d→d, GELU, dropout) sits at |",
        "|---|---|---|---|---|",
    ]
    for fam in FAMILIES:
        base = {"roberta": "roberta", "deberta": "deberta"}.get(fam.name, fam.name)
        head = ", ".join(f"`{prefix.format(base=base)}`" for prefix in fam.head)
        lines.append(
            f"| {fam.name} ({', '.join(fam.model_types)}) | `{fam.layers.format(base=base)}.{{i}}` | {head} "
            f"| {fam.embeddings_doc} | {fam.extra_fc_doc} |"
        )
    lines.append(
        "| other (generic rule) | the one ModuleList of `num_hidden_layers` modules in the base model "
        "| everything outside the base model, and `<base>.pooler` | the rest of the base model "
        "| input of the last Linear outside the base model with `num_labels` outputs |"
    )
    return "\n".join(lines) + "\n"
