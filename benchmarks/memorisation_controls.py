"""Why `nlue memorisation` holds items against natural unseen text, not their own words shuffled.

    python benchmarks/memorisation_controls.py                 1,500 training steps (about a minute on one core)
    python benchmarks/memorisation_controls.py --steps 300

A tiny Llama-style model is trained on the train splits of the NLUE sample's tasks only (it learns their
words and how they follow each other, and never sees a test item), then `nlue memorisation` probes the
test items twice: against each item's words shuffled (``--controls shuffled``) and against the sample's
validation texts, unseen by the model as the test items are (``--controls FILE``). Nothing was memorised,
so a sound control gives an AUC about 0.5; a control that is merely less fluent than the items gives more.
Printed: each run's table, and the AUC of every measure pooled over the tasks.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

TASKS = ("sa", "cola", "mnli", "qnli", "rte", "mrpc", "qqp", "cr", "stsb", "wg", "qadsm")


def train_fluent_model(out: Path, steps: int, seed: int = 5) -> Path:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from nlue.evals.contamination.items import task_items
    from nlue.evals.memorisation.controls import item_text
    from nlue.evals.memorisation.forward import encode, prefix_token
    from nlue.lm.tiny import save_tiny_causal_lm
    from nlue.registry.tasks import TASKS as REGISTRY

    torch.set_num_threads(1)
    base = save_tiny_causal_lm(out / "base", "llama", seed=seed)
    tokenizer, model = AutoTokenizer.from_pretrained(base), AutoModelForCausalLM.from_pretrained(base)
    texts = [item_text(item.texts) for task in TASKS for item in task_items("sample", REGISTRY[task], "train")]
    rows = [[prefix_token(tokenizer), *encode(tokenizer, text)][:96] for text in texts]
    torch.manual_seed(0)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    started = time.perf_counter()
    for _ in range(steps):
        batch = [rows[i] for i in torch.randint(0, len(rows), (32,)).tolist()]
        ids = torch.full((len(batch), max(map(len, batch))), tokenizer.pad_token_id)
        labels = torch.full_like(ids, -100)
        for n, row in enumerate(batch):
            ids[n, : len(row)] = labels[n, : len(row)] = torch.tensor(row)
        loss = model(input_ids=ids, attention_mask=(labels != -100).long(), labels=labels).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    print(f"trained on {len(texts)} train texts, {steps} steps, {time.perf_counter() - started:.0f} s, "
          f"last loss {loss.item():.3f}")  # fmt: skip
    model.eval()
    model.save_pretrained(out / "fluent")
    tokenizer.save_pretrained(out / "fluent")
    return out / "fluent"


def validation_file(path: Path) -> Path:
    from nlue.evals.contamination.items import task_items
    from nlue.evals.memorisation.controls import item_text
    from nlue.registry.tasks import TASKS as REGISTRY

    items = [item for task in TASKS for item in task_items("sample", REGISTRY[task], "validation")]
    path.write_text("".join(json.dumps({"text": item_text(i.texts)}, ensure_ascii=False) + "\n" for i in items),
                    encoding="utf-8")  # fmt: skip
    return path


def main() -> None:
    from nlue.cli import main as nlue
    from nlue.evals.memorisation.minkpp import MEASURES
    from nlue.evals.memorisation.probes_file import read_probes
    from nlue.evals.memorisation.summary import auc, scored_pairs

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1500, help="training steps (%(default)s)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nlue-memorisation-controls-"))
    model = train_fluent_model(work, args.steps)
    for controls in ("shuffled", str(validation_file(work / "validation.jsonl"))):
        print(f"\n== --controls {Path(controls).name}")
        out = work / "probes.json"
        nlue(["memorisation", "-q", "--model", str(model), "--dataset", "sample", "--tasks", ",".join(TASKS),
              "--controls", controls, "--no-cache", "--out", str(out)])  # fmt: skip
        records = [r for entry in read_probes(out)["tasks"].values() for r in entry["items"]]
        pooled = {measure: auc(*scored_pairs(records, measure)[:2]) for measure in MEASURES}
        print("pooled over the tasks: " + ", ".join(f"{m} AUC {v:.2f}" for m, v in pooled.items()) +
              f" ({len(records)} items)")  # fmt: skip
    print(f"\nfiles: {work}")


if __name__ == "__main__":
    main()
