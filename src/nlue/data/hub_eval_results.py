"""A run's score as the Hub's model-repo evaluation results: ``.eval_results/<name>.yaml``.

The Hub reads every ``.eval_results/*.yaml`` of a model repo and shows each entry on the model page
and on the leaderboard of the benchmark dataset it names (https://huggingface.co/docs/hub/eval-results;
the specification is huggingface/hub-docs ``eval_results.yaml``). huggingface_hub writes and parses the
entries (:class:`huggingface_hub.EvalResultEntry`, ``eval_result_entries_to_yaml``,
``parse_eval_result_entries``); this module decides what a results file may say there and checks a
file before it is pushed. An entry is a list item with

* ``dataset.id`` (required): the benchmark dataset on the Hub, a repo with an ``eval.yaml``
  (:mod:`nlue.data.hub_benchmark`); ``dataset.task_id`` (required): a task id of that eval.yaml;
  ``dataset.revision`` (optional): the dataset's git revision;
* ``value`` (required): the score. The format has no metric name: it is the task's leaderboard
  value, which for nlue's benchmark files is the task's primary metric (0-1), said again in ``notes``;
* ``verifyToken`` (optional): a signature the Hub issues for runs on HF Jobs; nlue never writes one;
* ``date`` (optional): when the evaluation ran, ISO-8601, as a string;
* ``source`` (optional): ``url`` (required with a source), ``name``, ``user``, ``org``;
* ``notes`` (optional): how the evaluation was set up.

Only a score a leaderboard can rank is written: the results file's own primary metric on the whole
test split of a benchmark named by its Hub id; never sample data, a diagnostic, human-judged GMET
(not comparable with automatic scores) or a partial test split. Each refusal comes with its reason.
"""

from __future__ import annotations

import logging
import math
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml, parse_eval_result_entries
from huggingface_hub.constants import EVAL_RESULTS_FOLDER
from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id

from nlue.data.hub_benchmark import EVAL_SPLIT, hub_task_id
from nlue.errors import NlueError
from nlue.registry.tasks import get_task
from nlue.text.safe import terminal_safe

logger = logging.getLogger(__name__)

_ENTRY_KEYS = ("dataset", "value", "verifyToken", "date", "source", "notes")
_DATASET_KEYS = ("id", "task_id", "revision")
_SOURCE_KEYS = ("url", "name", "user", "org")
MAX_FILE_BYTES = 1 << 20  # an entry is a few lines
_NAME_PART = re.compile(r"[^A-Za-z0-9._-]+")


def looks_like_hub_id(value: object) -> bool:
    """``owner/name`` as the Hub spells repo ids, and not a folder on this machine."""
    text = str(value or "")
    if text.count("/") != 1 or Path(text).exists():
        return False
    try:
        validate_repo_id(text)
    except HFValidationError:
        return False
    return True


@dataclass(frozen=True)
class EvalResultsFile:
    """One ``.eval_results/<name>.yaml`` for a model repo: where it goes and its entries."""

    path: str  # in the model repo: .eval_results/<name>.yaml
    entries: tuple[EvalResultEntry, ...]

    @property
    def text(self) -> str:
        return yaml.safe_dump(eval_result_entries_to_yaml(list(self.entries)), sort_keys=False, allow_unicode=True)

    def summary(self) -> str:
        return f"{self.path}: " + "; ".join(entry_summary(entry) for entry in self.entries)


def entry_summary(entry: EvalResultEntry) -> str:
    """An entry in one line, for a dry run."""
    parts = [f"{entry.dataset_id} task {entry.task_id} = {entry.value}"]
    parts += [f"notes: {entry.notes}"] if entry.notes else []
    parts += [f"date {entry.date}"] if entry.date else []
    parts += [f"source {entry.source_url}"] if entry.source_url else []
    return terminal_safe(", ".join(parts), 400)


def _setup(result: Mapping[str, Any]) -> list[str]:
    """How an LLM run was set up (mode, prompt language, shots), where the results file says."""
    hyper = result.get("hyperparameters") if isinstance(result.get("hyperparameters"), Mapping) else {}
    parts = [str(hyper["mode"])] if hyper.get("mode") else []
    parts += [f"prompt language {hyper['prompt_language']}"] if hyper.get("prompt_language") else []
    parts += [f"{hyper['shots']}-shot"] if isinstance(hyper.get("shots"), int) else []
    return parts


def _refusal(result: Mapping[str, Any], dataset_id: str | None, whole_split: bool) -> str | None:
    dataset = result.get("dataset") if isinstance(result.get("dataset"), Mapping) else {}
    if dataset.get("is_sample"):
        return "scored on the SAMPLE data, which says nothing about a model"
    if result.get("kind") == "diagnostic":
        return "a diagnostic saw the answers; it is never a score"
    if result.get("verdicts") == "human":
        return "human-judged GMET scores are not comparable with the automatic ones a leaderboard ranks"
    if not whole_split:
        return f"scored on part of the {EVAL_SPLIT} split, not all of it"
    if dataset.get("split", EVAL_SPLIT) != EVAL_SPLIT:
        return f"scored on the {dataset.get('split')!r} split; the benchmark's leaderboards rank the {EVAL_SPLIT} split"
    if not looks_like_hub_id(dataset_id):
        return (
            f"the benchmark is {dataset_id or 'not named'}, not a Hub dataset id (owner/name): an entry names the "
            "benchmark on the Hub"
        )
    return None


def eval_results_file(
    result: Mapping[str, Any],
    dataset_id: str | None,
    source_url: str | None = None,
    source_name: str | None = None,
    whole_split: bool = True,
) -> tuple[EvalResultsFile | None, str]:
    """The ``.eval_results`` file of one results file (as a dict), or None and why none can be written.

    The value is the results file's own primary metric (:meth:`TaskSpec.primary_from`, as its
    ``primary_score``), never scored again here.
    """
    reason = _refusal(result, dataset_id, whole_split)
    if reason is not None:
        return None, reason
    task = get_task(str(result["task"]))
    try:
        value = float(task.primary_from(result.get("metrics") or {}))
    except (ValueError, TypeError, KeyError):
        return None, f"the results file has no {task.primary_metric}"
    if not math.isfinite(value):
        return None, f"its {task.primary_metric} is {value}"
    versions = result.get("versions") if isinstance(result.get("versions"), Mapping) else {}
    notes = ", ".join([f"{task.primary_metric} (0-1 scale)", str(result.get("kind")), *_setup(result)])
    notes += f"; scored by nlue {versions['nlue']}" if versions.get("nlue") else ""
    entry = EvalResultEntry(
        dataset_id=str(dataset_id),
        task_id=hub_task_id(task.name),
        value=value,
        date=str(result["created"]) if result.get("created") else None,
        source_url=source_url,
        source_name=source_name if source_url else None,
        notes=notes,
    )
    stem = "_".join([str(dataset_id).split("/")[1], task.name, *_setup(result)])
    name = _NAME_PART.sub("-", stem.replace(" ", "-")).strip("-_.")
    return EvalResultsFile(f"{EVAL_RESULTS_FOLDER}/{name}.yaml", (entry,)), ""


def entries_problems(data: Any) -> list[str]:
    """Every way ``data`` departs from the Hub's eval_results.yaml specification (where: what was expected)."""
    if not isinstance(data, list) or not data:
        return [f"the file holds {type(data).__name__}, expected a non-empty list of entries"]
    problems = []
    for number, entry in enumerate(data):
        where = f"[{number}]"
        if not isinstance(entry, Mapping):
            problems.append(f"{where}: expected a mapping with dataset and value")
            continue
        problems += [f"{where}.{key}: not in the Hub's eval results specification"
                     for key in entry if key not in _ENTRY_KEYS]  # fmt: skip
        dataset = entry.get("dataset")
        if not isinstance(dataset, Mapping):
            problems.append(f"{where}.dataset: required, a mapping with id and task_id")
        else:
            problems += [
                f"{where}.dataset.{key}: not in the specification" for key in dataset if key not in _DATASET_KEYS
            ]
            if not looks_like_hub_id(dataset.get("id")):
                problems.append(f"{where}.dataset.id: required, the benchmark's Hub dataset id (owner/name)")
            for key in ("task_id", "revision"):
                required = key == "task_id"
                if (required or key in dataset) and (not isinstance(dataset.get(key), str) or not dataset[key]):
                    problems.append(f"{where}.dataset.{key}: {'required, ' if required else ''}a non-empty string")
        value = entry.get("value")
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            problems.append(f"{where}.value: required, a finite number (the metric's value)")
        for key in ("verifyToken", "notes", "date"):
            if key in entry and not isinstance(entry[key], str):
                problems.append(f"{where}.{key}: a string when given" + (" (quoted: YAML reads a bare date as a date)"
                                                                          if key == "date" else ""))  # fmt: skip
        if isinstance(entry.get("date"), str):
            try:
                datetime.fromisoformat(entry["date"])
            except ValueError:
                problems.append(f"{where}.date: {entry['date']!r} is not an ISO-8601 date or datetime")
        source = entry.get("source")
        if source is not None:
            if not isinstance(source, Mapping) or not isinstance(source.get("url"), str) or not source["url"]:
                problems.append(f"{where}.source.url: required with a source, a link")
            else:
                problems += [
                    f"{where}.source.{key}: not in the specification" for key in source if key not in _SOURCE_KEYS
                ]
                problems += [f"{where}.source.{key}: a string when given" for key in ("name", "user", "org")
                             if key in source and not isinstance(source[key], str)]  # fmt: skip
    return problems


def read_eval_results(path: Path) -> list[EvalResultEntry]:
    """One ``.eval_results`` file, checked against the specification, then parsed by huggingface_hub."""
    if path.stat().st_size > MAX_FILE_BYTES:
        raise NlueError(f"{path}: {path.stat().st_size:,} bytes, more than an eval results file holds")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise NlueError(f"{path}: not readable YAML ({exc})") from None
    problems = entries_problems(data)
    if problems:
        shown = "\n  ".join(problems)
        raise NlueError(f"{path}: not an eval results file the Hub takes ({len(problems)} problems):\n  {shown}")
    return parse_eval_result_entries(data)


def eval_results_summary(folder: Path) -> list[str]:
    """What a dry run says of a model folder's ``.eval_results`` files: each one's entries, checked."""
    paths = sorted((folder / EVAL_RESULTS_FOLDER).glob("*.yaml"))
    lines = [f"{EVAL_RESULTS_FOLDER}/ (the Hub's evaluation results, checked): {len(paths)} file(s)"] if paths else []
    problems = []
    for path in paths:
        try:
            entries = read_eval_results(path)
        except NlueError as exc:
            problems.append(str(exc))
            continue
        lines.append(f"    {path.name}: " + "; ".join(entry_summary(entry) for entry in entries))
    if problems:
        raise NlueError("\n".join(problems))
    return lines


def write_eval_results(folder: Path, file: EvalResultsFile) -> Path:
    """Write ``file`` into ``folder`` (a model folder) whole: a temporary file, then a rename."""
    path = folder / file.path
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(file.text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
