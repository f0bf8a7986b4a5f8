"""The model card of a fine-tuned checkpoint, through huggingface_hub's card classes, and its Hub eval results.

The YAML model-index comes from ModelCardData + EvalResult, so the Hub shows the
scores; the body says what was trained, how, on what (sample data is called so), and
how the score compares with the paper's for the same base model. Beside the card,
``.eval_results/<name>.yaml`` gives the primary score in the Hub's newer format, which puts
it on the benchmark's leaderboard (:mod:`nlue.data.hub_eval_results`).
"""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import EvalResult, ModelCard, ModelCardData
from huggingface_hub.constants import EVAL_RESULTS_FOLDER

from nlue.data.hub_benchmark import hub_task_id
from nlue.data.hub_eval_results import EvalResultsFile, eval_results_file, read_eval_results, write_eval_results
from nlue.errors import NlueError
from nlue.registry.paper import PAPER_CITATION
from nlue.registry.tasks import TaskSpec
from nlue.results import RunResult

# Hub metric ids for our metric names (the model-index's `type` field).
_METRIC_TYPES = {
    "accuracy": "accuracy",
    "macro_f1": "f1",
    "pearson": "pearsonr",
    "spearman": "spearmanr",
    "r2": "r_squared",
    "pearson_spearman_mean": "pearson_spearman_mean",
}


def eval_results(result: RunResult, task: TaskSpec) -> list[EvalResult]:
    dataset_id = str(result.dataset.get("id", "nlue"))
    out = []
    for name in (*task.metrics, task.primary_metric):
        value = result.metrics.get(name)
        if value is None or any(r.metric_name == name for r in out):
            continue
        out.append(
            EvalResult(
                task_type=task.hub_task_category,
                task_name=task.title,
                dataset_type=dataset_id,
                dataset_name=f"NLUE {task.name}" + (" (sample data)" if result.dataset.get("is_sample") else ""),
                dataset_config=task.name,
                dataset_split=str(result.dataset.get("split", "test")),
                metric_type=_METRIC_TYPES.get(name, name),
                metric_name=name,
                metric_value=round(float(value), 4),
            )
        )
    return out


def _metrics_table(result: RunResult, task: TaskSpec) -> str:
    lines = ["| metric | test | 95% CI |", "|---|---|---|"]
    for name, value in result.metrics.items():
        if name.endswith(("_ci_low", "_ci_high")):
            continue
        low, high = result.metrics.get(f"{name}_ci_low"), result.metrics.get(f"{name}_ci_high")
        ci = f"{low:.4f} - {high:.4f}" if low is not None and high is not None else "-"
        marker = " (primary)" if name == task.primary_metric else ""
        lines.append(f"| {name}{marker} | {value:.4f} | {ci} |")
    return "\n".join(lines)


def _cell(value: object) -> str:
    """A hyperparameter value for a table cell: nested records flattened to ``key: value`` pairs."""
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_cell(v)}" for k, v in value.items())
    return str(value).replace("|", "/")


def render_model_card(result: RunResult, task: TaskSpec) -> ModelCard:
    is_sample = bool(result.dataset.get("is_sample"))
    data = ModelCardData(
        language="ne",
        license="apache-2.0",
        library_name="peft" if result.lora else "transformers",
        base_model=result.base_model,
        tags=["nlue", "nepali", task.name, "text-classification"] + (["lora"] if result.lora else []),
        datasets=[str(result.dataset.get("id"))] if not is_sample else None,
        metrics=sorted({_METRIC_TYPES.get(m, m) for m in task.metrics}),
        model_name=result.model,
        eval_results=eval_results(result, task),
    )
    extra_fc = (
        " with an extra fully connected layer before the classifier" if result.hyperparameters.get("extra_fc") else ""
    )
    trained = (
        f"LoRA adapters (r={result.lora['r']}, alpha={result.lora['alpha']}) and the head"
        if result.lora
        else f"parameter preset {result.preset}{extra_fc} (our reading of the paper's configuration "
        f"{result.preset}; see nlue's trainers/README.md)"
    )
    hp_lines = "\n".join(f"| {k} | {_cell(v)} |" for k, v in result.hyperparameters.items())
    notes = f"\n{result.notes}\n" if result.notes else ""
    paper = result.paper_reference
    paper_line = (
        "The NLUE paper reports "
        + ", ".join(f"{k} = {100 * v:.2f}" for k, v in (paper.get("metrics") or {}).items())
        + f" for {paper['model']} on {task.name} (full test set); the primary metric here, {task.primary_metric}, "
        f"is {task.primary_note}."
        + "".join(f" Flag on the paper's cells: {flag['explanation']}" for flag in paper.get("flags") or [])
        + (
            ""
            if paper.get("hub_id_confirmed", True)
            else f" (Matching this base model to the paper's row is a guess: {paper.get('hub_id_note')}.)"
        )
        if paper and paper.get("primary_score") is not None
        else "The NLUE paper reports no score for this base model."
    )
    warning = (
        "\n> **Trained and scored on the nlue SAMPLE data** (a few dozen items written to try the tools). "
        "These numbers say nothing about the model's Nepali.\n"
        if is_sample
        else ""
    )
    usage = (
        f'from peft import AutoPeftModelForSequenceClassification\nmodel = AutoPeftModelForSequenceClassification.from_pretrained("{result.model}")'
        if result.lora
        else f'from transformers import pipeline\nclassify = pipeline("text-classification", model="{result.model}")'
    )
    body = f"""
# {result.model}: {task.title} ({task.name})
{warning}
A fine-tune of `{result.base_model}` on the NLUE `{task.name}` task ({task.description.rstrip(".")}), trained with
the nlue recipes: {trained}.

Labels: {", ".join(f"{i} = {n}" for i, n in task.id2label.items()) if task.label_names else "one regression output (0-5)"}.

## Results ({result.dataset.get("split", "test")} split)

{_metrics_table(result, task)}

{paper_line}

## Training

| hyperparameter | value |
|---|---|
{hp_lines}
| seed | {result.seed} |
{notes}
Trained with transformers' Trainer: evaluation every epoch, early stopping on the validation loss, the best
checkpoint restored before scoring. Package versions: {", ".join(f"{k} {v}" for k, v in result.versions.items())}.

## Use

```python
{usage}
```

## Limitations

NLUE's data is largely machine-translated from English benchmarks and checked on samples; expect translation
artefacts. A score on one task says little about others; compare models on all tasks (the NLUE score, the mean of the
tasks' primary metrics, is an nlue convention: the paper defines no overall score).

## Citation

```bibtex
{PAPER_CITATION}
```
"""
    return ModelCard(f"---\n{data.to_yaml()}\n---\n{body}")


def write_model_card(path: Path, result: RunResult, task: TaskSpec) -> Path:
    card = render_model_card(result, task)
    path.write_text(str(card), encoding="utf-8")
    return path


def checkpoint_eval_results(
    result: RunResult, dataset_id: str | None, model_id: str | None, whole_split: bool
) -> tuple[EvalResultsFile | None, str]:
    """The checkpoint's ``.eval_results`` file (its own results file's primary score), or None and why not."""
    source = f"https://huggingface.co/{model_id}" if model_id else None
    return eval_results_file(result.to_dict(), dataset_id, source, "Model card (nlue results)", whole_split)


def write_checkpoint_eval_results(folder: Path, task: TaskSpec, planned: EvalResultsFile | None) -> Path | None:
    """Replace the folder's ``.eval_results`` file(s) of ``task`` by ``planned`` (none: a run that may not have one).

    A file an earlier run of the same task left there is removed first, so that a push never sends a
    score this run did not make.
    """
    for path in sorted((folder / EVAL_RESULTS_FOLDER).glob("*.yaml")):
        try:
            entries = read_eval_results(path)
        except NlueError:
            continue  # not ours to judge: the push refuses it with its problems
        if entries and all(entry.task_id == hub_task_id(task.name) for entry in entries):
            path.unlink()
    return write_eval_results(folder, planned) if planned is not None else None
