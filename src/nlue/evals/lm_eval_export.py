"""Export the tasks as lm-evaluation-harness task YAMLs, so that `lm_eval --include_path DIR` runs them.

That is how a user spreads a large model over many GPUs (lm-eval's vLLM backend) without
nlue writing a distributed engine. Each exported task is a ``multiple_choice`` task whose
``doc_to_text`` is the kind's own Jinja template (:meth:`~nlue.registry.kinds.TaskKind.llm_template`)
and whose ``doc_to_choice`` are the verbalised labels: the very strings nlue's own
log-likelihood evaluator scores, so that the two agree (a test runs both on a tiny model).

Written per task and language: ``nlue_<task>_<lang>.yaml`` (task name ``nlue_<task>_<lang>``),
plus a group ``nlue_<benchmark>_<lang>`` per benchmark and language. The dataset is the
one given (a Hub id or a local built repo; lm-eval loads it with ``datasets.load_dataset``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from nlue.errors import NlueError
from nlue.registry.kinds import CAUSAL_LM_LOGLIKELIHOOD
from nlue.registry.tasks import TaskSpec, get_task

logger = logging.getLogger(__name__)

TARGET_DELIMITER = " "  # lm-eval puts it between the prompt and each choice; so does nlue's evaluator
FEWSHOT_DELIMITER = "\n\n"
EXPORT_VERSION = 1.0


def exportable(task: TaskSpec) -> bool:
    """Tasks scored by causal-LM log-likelihood over labelled choices that have prompts."""
    return CAUSAL_LM_LOGLIKELIHOOD in task.kind.evaluators and bool(task.prompts)


def task_name(task: TaskSpec, language: str) -> str:
    return f"nlue_{task.name}_{language}"


def task_config(task: TaskSpec, language: str, dataset: str) -> dict[str, Any]:
    """One lm-eval task as a dict (what the YAML holds)."""
    template, choices = task.kind.llm_template(task, language)
    splits = task.splits
    fewshot = "train" if "train" in splits else ("demo" if "demo" in splits else None)
    config: dict[str, Any] = {
        "task": task_name(task, language),
        "dataset_path": dataset,
        "dataset_name": task.name,
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": template,
        "doc_to_choice": list(choices),
        "doc_to_target": f"{{{{ {task.label_field} }}}}",
        "target_delimiter": TARGET_DELIMITER,
        "fewshot_delimiter": FEWSHOT_DELIMITER,
        "metric_list": [
            {"metric": "acc", "aggregation": "mean", "higher_is_better": True},
            {"metric": "acc_norm", "aggregation": "mean", "higher_is_better": True},
        ],
        "metadata": {"version": EXPORT_VERSION, "exported_by": "nlue", "language": language},
    }
    if fewshot:
        config["fewshot_split"] = fewshot
    if "validation" in splits:
        config["validation_split"] = "validation"
    return config


def export_lm_eval(
    out: Path, dataset: str, tasks: Sequence[str] | None = None, languages: Iterable[str] = ("en", "ne")
) -> list[Path]:
    """Write the YAMLs of ``tasks`` (default: every exportable task) into ``out``; return their paths."""
    from nlue.registry.tasks import TASKS, benchmark_of

    chosen = [get_task(name) for name in tasks] if tasks else [t for t in TASKS.values() if exportable(t)]
    refused = [t.name for t in chosen if not exportable(t)]
    if refused:
        raise NlueError(
            f"cannot export {', '.join(refused)}: only tasks scored by log-likelihood over labelled choices "
            "(with prompts in the registry) go to lm-evaluation-harness"
        )
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    groups: dict[str, list[str]] = {}
    for task in chosen:
        for language in languages:
            if language not in task.prompts:
                continue
            config = task_config(task, language, dataset)
            path = out / f"{config['task']}.yaml"
            _write_yaml(path, config)
            written.append(path)
            groups.setdefault(f"nlue_{benchmark_of(task).name}_{language}", []).append(config["task"])
    for group, members in groups.items():
        path = out / f"{group}.yaml"
        _write_yaml(path, {"group": group, "task": members, "metadata": {"version": EXPORT_VERSION}})
        written.append(path)
    logger.info("wrote %d lm-eval task files to %s", len(written), out)
    return written


def _write_yaml(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000), encoding="utf-8")
    tmp.replace(path)
