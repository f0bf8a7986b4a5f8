"""The Hub's benchmark file, ``eval.yaml``, of a built dataset repo: written from the registry, checked when read.

A dataset repo with an ``eval.yaml`` at its root is what the Hub calls a benchmark: it gathers the
scores that model repos declare for it (their ``.eval_results/*.yaml``, see
:mod:`nlue.data.hub_eval_results`) into one leaderboard per task. The format is the Hub's
(https://huggingface.co/docs/hub/eval-results, "Eval.yaml specification"; source
huggingface/hub-docs ``docs/hub/eval-results.md``):

* ``name``: the benchmark's display name; ``description``: what it measures;
* ``evaluation_framework``: one identifier per benchmark, from the list the Hub keeps
  (huggingface/huggingface.js ``packages/tasks/src/eval.ts``); the Hub refuses a framework
  that is not on that list, so ``nlue`` has to be registered there before the Hub takes ours;
* ``tasks``: one leaderboard each, with ``id`` (required: what an ``.eval_results`` entry names
  as its ``task_id``), ``config`` (default: the dataset's default config) and ``split``
  (default: ``test``).

nlue writes one task per config whose test split was built, its id the config's name
(:func:`hub_task_id`), so that a results file of any command maps onto exactly one leaderboard.
The format has no field for the metric: the value of each leaderboard is the task's primary
metric, which the description says. huggingface_hub has no class for this file, so
:func:`benchmark_problems` checks what the specification documents.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from nlue.errors import NlueError
from nlue.text.safe import terminal_safe

if TYPE_CHECKING:
    from nlue.data.report import ConfigReport
    from nlue.registry.kinds.base import CardText

logger = logging.getLogger(__name__)

BENCHMARK_FILE = "eval.yaml"
EVALUATION_FRAMEWORK = "nlue"
EVAL_SPLIT = "test"  # the split every leaderboard ranks on (the Hub's default split too)
_TOP_KEYS = ("name", "description", "evaluation_framework", "tasks")
# Documented for every framework (id, config, split) and for inspect-ai only (the rest; the prose says
# `scores`, its example `scorers`).
_TASK_KEYS = ("id", "config", "split", "field_spec", "solvers", "scorers", "scores")
_INSPECT_KEYS = ("field_spec", "solvers")
MAX_FILE_BYTES = 1 << 20  # a benchmark file is a few hundred bytes per task


def hub_task_id(config: str) -> str:
    """The Hub task (leaderboard) id of a config: the config's own name, in eval.yaml and in .eval_results."""
    return config


def benchmark_file(
    configs: Mapping[str, ConfigReport], name: str, card_text: CardText, is_sample: bool
) -> dict[str, Any] | None:
    """The eval.yaml of a build, or None when no config has a test split to rank on."""
    tasks = []
    for config, report in configs.items():
        split = report.splits.get(EVAL_SPLIT)
        if split is None or split.left_out:
            logger.warning("eval.yaml: config %s has no %s split, so no leaderboard", config, EVAL_SPLIT)
            continue
        tasks.append({"id": hub_task_id(config), "config": config, "split": EVAL_SPLIT})
    if not tasks:
        return None
    metrics = ", ".join(f"{cfg.task.name} {cfg.task.primary_metric}" for cfg in configs.values())
    description = (
        f"{card_text.intro} Each task's leaderboard value is the task's primary metric on its {EVAL_SPLIT} split, "
        f"on a 0-1 scale ({metrics}), as nlue scores it; the dataset card says which are the paper's."
    )
    if is_sample:
        description = "SAMPLE DATA written to try the tools, not the benchmark: no score on it means anything. " + (
            description
        )
    return {"name": name, "description": description, "evaluation_framework": EVALUATION_FRAMEWORK, "tasks": tasks}


def write_benchmark_file(repo_dir: Path, data: Mapping[str, Any] | None) -> Path | None:
    """Write ``data`` as eval.yaml in ``repo_dir`` (a build's staging folder) and read it back checked."""
    if data is None:
        logger.warning("no eval.yaml written: no config has a %s split", EVAL_SPLIT)
        return None
    path = repo_dir / BENCHMARK_FILE
    text = yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100)
    path.write_text(text, encoding="utf-8")
    read_benchmark_file(repo_dir)  # what we write is what the specification takes, and names our configs
    return path


def benchmark_problems(data: Any, card_configs: Mapping[str, set[str]] | None = None) -> list[str]:
    """Every way ``data`` departs from the Hub's eval.yaml specification (key: what was expected).

    ``card_configs`` (config -> its splits, from the dataset card's YAML ``configs``) also checks that
    each task names a config and split the repo has.
    """
    if not isinstance(data, Mapping):
        return [f"the file holds {type(data).__name__}, expected a mapping with {', '.join(_TOP_KEYS)}"]
    problems = [f"{key}: not in the Hub's eval.yaml specification" for key in data if key not in _TOP_KEYS]
    for key in ("name", "description", "evaluation_framework"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            problems.append(f"{key}: required, a non-empty string")
    tasks = data.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        return [*problems, "tasks: required, a non-empty list of tasks (each with an id)"]
    seen: set[str] = set()
    for number, task in enumerate(tasks):
        where = f"tasks[{number}]"
        if not isinstance(task, Mapping):
            problems.append(f"{where}: expected a mapping with id (and config, split)")
            continue
        problems += [
            f"{where}.{key}: not in the Hub's eval.yaml specification" for key in task if key not in _TASK_KEYS
        ]
        task_id = task.get("id")
        if not isinstance(task_id, str) or not task_id.strip():
            problems.append(f"{where}.id: required, a non-empty string")
        elif task_id in seen:
            problems.append(f"{where}.id: {task_id!r} is used by an earlier task; each task is its own leaderboard")
        else:
            seen.add(task_id)
        for key in ("config", "split"):
            if key in task and (not isinstance(task[key], str) or not task[key].strip()):
                problems.append(f"{where}.{key}: a non-empty string when given")
        if data.get("evaluation_framework") == "inspect-ai":
            missing = [key for key in _INSPECT_KEYS if key not in task]
            missing += [] if "scorers" in task or "scores" in task else ["scorers"]
            problems += [f"{where}.{key}: required with evaluation_framework inspect-ai" for key in missing]
        if card_configs is not None:
            config, split = str(task.get("config", "default")), str(task.get("split", EVAL_SPLIT))
            if config not in card_configs:
                problems.append(f"{where}.config: {config!r} is not a config of the dataset card")
            elif split not in card_configs[config]:
                problems.append(f"{where}.split: config {config!r} has no {split!r} split in the dataset card")
    return problems


def card_configs(repo_dir: Path) -> dict[str, set[str]]:
    """The configs the dataset card's YAML declares, each with its splits (through ``datasets``' own reader)."""
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(repo_dir / "README.md")
    try:
        configs = MetadataConfigs.from_dataset_card_data(card.data)
    except ValueError as exc:
        raise NlueError(f"{repo_dir / 'README.md'}: its YAML configs cannot be read ({exc})") from None
    return {
        name: {str(entry.get("split")) for entry in config.get("data_files") or [] if isinstance(entry, Mapping)}
        for name, config in configs.items()
    }


def read_benchmark_file(repo_dir: Path) -> dict[str, Any] | None:
    """The repo's eval.yaml checked against the specification and the card; None when there is none.

    A file that breaks the specification is refused with every problem at once, since the Hub checks
    it at push time too.
    """
    path = repo_dir / BENCHMARK_FILE
    if not path.is_file():
        return None
    if path.stat().st_size > MAX_FILE_BYTES:
        raise NlueError(f"{path}: {path.stat().st_size:,} bytes, more than a benchmark file holds ({MAX_FILE_BYTES:,})")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise NlueError(f"{path}: not readable YAML ({exc})") from None
    problems = benchmark_problems(data, card_configs(repo_dir) if (repo_dir / "README.md").is_file() else None)
    if problems:
        shown = "\n  ".join(problems)
        raise NlueError(f"{path}: not a benchmark file the Hub takes ({len(problems)} problems):\n  {shown}")
    return data


def benchmark_summary(data: Mapping[str, Any]) -> list[str]:
    """What a dry run says of an eval.yaml: its framework and each task's config and split."""
    tasks = data["tasks"]
    lines = [
        f"{BENCHMARK_FILE} (the Hub's benchmark file, checked): {data['name']!r}, evaluation_framework "
        f"{data['evaluation_framework']}, {len(tasks)} tasks (leaderboards):"
    ]
    lines += [
        f"    {task['id']}: config {task.get('config', 'default')}, split {task.get('split', EVAL_SPLIT)}"
        for task in tasks
    ]
    return [terminal_safe(line, 300) for line in lines]  # a folder's file may be anyone's
