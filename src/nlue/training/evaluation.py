"""`nlue evaluate`: score a checkpoint, or a folder of per-task checkpoints, on NLUE test sets.

A single checkpoint is scored on the task(s) asked for; with ``--task all`` and a folder
holding ``<task>/`` checkpoints (as `nlue train --output_dir runs/<model>/<task>` makes),
each task is scored with its own checkpoint. Each task's result goes to the results
folder, and the NLUE score over the tasks scored is printed with the missing ones named.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from nlue.data.access import dataset_description, load_task
from nlue.errors import NlueError
from nlue.lm.checkpoints import is_checkpoint
from nlue.lm.slug import model_slug
from nlue.predictions import attach
from nlue.registry.tasks import TASK_NAMES, TaskSpec, get_task
from nlue.results import ResultExists, RunResult, check_replace, default_results_dir, task_result_path, write_result
from nlue.run_identity import local_model, run_identity, split_facts

logger = logging.getLogger(__name__)


def checkpoints_for(model: str, tasks: list[str]) -> dict[str, str]:
    """Which checkpoint scores which task: ``<model>/<task>/`` when present, else ``model`` itself."""
    root = Path(model)
    per_task = {t: str(root / t) for t in tasks if is_checkpoint(root / t)}
    if per_task:
        return per_task
    return dict.fromkeys(tasks, model)


def evaluate_task(
    checkpoint: str,
    task: TaskSpec,
    dataset: str | None,
    split: str,
    batch_size: int,
    bootstrap_resamples: int,
    seed: int,
    *,
    show_progress: bool = True,
    results_path: Path | None = None,
    overwrite: bool = False,
) -> tuple[RunResult, list[dict[str, Any]]]:
    """The task's results and its per-item prediction rows (nlue.predictions).

    ``results_path``: the results file the result will replace, checked before the model loads
    (:func:`nlue.results.check_replace`; ``overwrite`` replaces one of another identity).
    """
    from transformers import AutoConfig

    from nlue.lm.backends import CLASSIFIER
    from nlue.lm.checkpoints import is_adapter_folder
    from nlue.lm.factory import load_model
    from nlue.lm.modeling import check_label_mapping, has_task_labels
    from nlue.lm.spec import ModelSpec
    from nlue.scores import score_task
    from nlue.training.predict import logit_rows, logits_to_predictions, predict_logits

    if not is_adapter_folder(checkpoint):
        config = AutoConfig.from_pretrained(checkpoint)
        if not has_task_labels(config) and task.kind.has_classes:
            raise NlueError(f"{checkpoint}: has no trained classifier labels; fine-tune it first (`nlue train`)")
        check_label_mapping(config, task, checkpoint)
    data = load_task(dataset, task)
    if split not in data:
        raise NlueError(f"dataset has no {split!r} split for {task.name}; it has {', '.join(data)}")
    rows = data[split]
    identity = run_identity(task.name, local_model(str(checkpoint), CLASSIFIER), split_facts(rows, rows.num_rows),
                            mode="classify", seed=seed, split=split,
                            settings={"bootstrap_resamples": bootstrap_resamples})  # fmt: skip
    if results_path is not None:
        check_replace(results_path, identity, overwrite=overwrite)
    model, tokenizer = load_model(ModelSpec(str(checkpoint)), CLASSIFIER)
    started = time.perf_counter()
    logits = predict_logits(model, tokenizer, task, list(rows), batch_size=batch_size, show_progress=show_progress)
    seconds = time.perf_counter() - started
    predictions = logits_to_predictions(task, logits)
    metrics = score_task(
        task.name, predictions, rows[task.label_field], bootstrap_resamples=bootstrap_resamples or None, seed=seed
    )
    result = RunResult(
        task=task.name,
        model=checkpoint,
        kind="fine-tune",
        metrics={k: v for k, v in metrics.items() if isinstance(v, float)},
        dataset=dataset_description(dataset, task.name, split),
        identity=identity,
        timings={"predict_seconds": round(seconds, 3), "items_per_second": round(len(rows) / max(seconds, 1e-9), 1)},
        seed=seed,
    )
    return result, logit_rows(task, list(rows), logits)


def run_evaluation(
    model: str,
    tasks: list[str],
    dataset: str | None = None,
    split: str = "test",
    results_dir: Path | None = None,
    batch_size: int = 64,
    bootstrap_resamples: int = 1000,
    seed: int = 42,
    name: str | None = None,
    *,
    show_progress: bool = True,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Score ``model`` on ``tasks``; write one results file per task; return the NLUE score summary."""
    from nlue.scores import nlue_score

    results_dir = Path(results_dir) if results_dir is not None else default_results_dir()

    if bootstrap_resamples < 0:
        raise NlueError(f"--bootstrap-resamples must be 0 (no intervals) or more, got {bootstrap_resamples}")

    wanted = list(TASK_NAMES) if tasks == ["all"] else [get_task(t).name for t in tasks]
    wanted = [t for t in wanted if get_task(t).kind.trainable]
    checkpoints = checkpoints_for(model, wanted)
    scored: dict[str, dict[str, float]] = {}
    skipped: dict[str, str] = {}
    slug = name or model_slug(model)
    for task_name, checkpoint in checkpoints.items():
        task = get_task(task_name)
        try:
            result, item_rows = evaluate_task(
                checkpoint, task, dataset, split, batch_size, bootstrap_resamples, seed, show_progress=show_progress,
                results_path=task_result_path(results_dir, slug, task.name), overwrite=overwrite,
            )  # fmt: skip
        except ResultExists:
            raise  # a results file this run may not replace stops the run: never a task "skipped"
        except NlueError as exc:
            if len(wanted) == 1:
                raise
            skipped[task_name] = str(exc)  # reported by the caller
            continue
        attach(result, item_rows, results_dir, slug)
        write_result(result, results_dir, slug, overwrite=overwrite)
        scored[task_name] = result.metrics
    # The NLUE score is the mean over NLUE's tasks; a task of a task file is scored beside it, never in it.
    of_nlue = [t for t in wanted if t in TASK_NAMES]
    summary = nlue_score({t: m for t, m in scored.items() if t in of_nlue}, tasks=of_nlue).as_dict()
    summary["task_scores"].update({t: get_task(t).primary_from(m) for t, m in scored.items() if t not in of_nlue})
    summary["nlue_tasks"] = of_nlue
    summary["skipped"] = skipped
    return summary
