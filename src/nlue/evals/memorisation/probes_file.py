"""The memorisation file: one per model and dataset, strict and versioned, every number recomputable from it.

Written by ``nlue memorisation`` to ``<results-dir>/memorisation/<model>/<dataset>[-limitN].json`` (the
results folder's ``memorisation/`` is passed by the readers of runs)::

    {"format": "nlue-memorisation", "schema_version": 1, "nlue_version": "...",
     "model": {...the model's description...}, "dataset": {"id", "split", "is_sample"},
     "settings": {"k", "seed", "min_words", "bootstrap_resamples", "limit", "controls"},
     "tasks": {"<task>": {
        "summary": {"items", "compared", "no_control", "control_texts", "minkpp": {auc, auc_ci_low, auc_ci_high, above_p95,
                    item_mean, control_mean}, "mink": {...}, "loglik": {...}},
        "items": [{"id", "input_sha256", "tokens", "control_tokens", "control_from": [...], "minkpp",
                   "minkpp_control", "mink", "mink_control", "loglik", "loglik_control"}, ...],
        "completion": null | {"summary": {"questions", "split", "exact", "overlap", "control_exact",
                    "control_overlap"}, "items": [{"id", "prompt", "reference", "generated", "exact", "overlap",
                    "control_id", "control_exact", "control_overlap"}, ...]}}}}

``control_from`` names the texts an item's control was made of (``sample:<task>/<split>/<id>``, a control
file's ``<file>:<line>``, or ``shuffled``). A control score is ``null`` for an item that got no control; :mod:`nlue.evals.memorisation.summary`
says what each summary number is. :func:`read_probes` bounds the file's size and depth, checks every field
and recomputes each summary's point numbers from the items, refusing a file whose numbers disagree.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.evals.contamination.findings_file import slug
from nlue.evals.memorisation.minkpp import MEASURES
from nlue.evals.memorisation.summary import completion_summary, task_summary
from nlue.results import MEMORISATION_FOLDER as FOLDER
from nlue.results import write_json_atomic
from nlue.results_files import read_versioned_object
from nlue.run_identity import limit_suffix
from nlue.version import __version__

FORMAT = "nlue-memorisation"
SCHEMA_VERSION = 1
MAX_BYTES = 256 << 20
MAX_TEXT = 100_000  # characters of one prompt, reference or generation
_SHA256 = re.compile(r"[0-9a-f]{64}")
TOLERANCE = 1e-6
POINTS = ("auc", "above_p95", "item_mean", "control_mean")


class BadProbesFile(NlueError):
    """A memorisation file that is not one, or breaks a rule; the message names the file and the field."""


def default_path(
    results_dir: Path,
    model: str,
    dataset: str,
    limit: int | None = None,
    split: str = "test",
    tasks: Sequence[str] | None = None,
) -> Path:
    """``<results_dir>/memorisation/<model>/<dataset>[-<split>][-tasks-<names>][-limitN].json``: a partial run (some
    items, some tasks) or one of another split never replaces the whole test set's."""
    from nlue.lm.slug import model_slug

    label = Path(dataset).name if Path(dataset).exists() else dataset
    label += ("" if split == "test" else f"-{split}") + (f"-tasks-{'-'.join(tasks)}" if tasks else "")
    return Path(results_dir) / FOLDER / model_slug(model) / f"{slug(label)}{limit_suffix(limit)}.json"


def probe_files(results_dir: Path) -> list[Path]:
    """Every ``*.json`` under ``<results_dir>/memorisation/`` (no symlinks), sorted: the files the readers of a
    results folder read (the report, the Space, ``nlue submit``)."""
    folder = Path(results_dir) / FOLDER
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*.json") if p.is_file() and not p.is_symlink())


def probes_document(model: Mapping[str, Any], dataset: Mapping[str, Any], settings: Mapping[str, Any],
                    tasks: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:  # fmt: skip
    """The file's content (module docstring)."""
    return {"format": FORMAT, "schema_version": SCHEMA_VERSION, "nlue_version": __version__, "model": dict(model),
            "dataset": dict(dataset), "settings": dict(settings), "tasks": dict(tasks)}  # fmt: skip


def write_probes(path: Path, document: Mapping[str, Any]) -> Path:
    """The file written whole or not at all."""
    return write_json_atomic(path, document)


def _fail(path: Path, where: str, expected: str) -> BadProbesFile:
    return BadProbesFile(f"{path}: {where}: expected {expected}")


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def _check_fields(path: Path, where: str, record: Any, numbers: tuple[str, ...], texts: tuple[str, ...] = (),
                  flags: tuple[str, ...] = ()) -> None:  # fmt: skip
    if not isinstance(record, dict):
        raise _fail(path, where, "an object")
    if isinstance(record.get("id"), bool) or not isinstance(record.get("id"), str | int):
        raise _fail(path, f"{where}.id", "a string or an integer")
    for name in numbers:
        if record.get(name) is not None and not _number(record[name]):
            raise _fail(path, f"{where}.{name}", "a finite number or null")
    for name in texts:
        value = record.get(name)
        if value is not None and (not isinstance(value, str) or len(value) > MAX_TEXT):
            raise _fail(path, f"{where}.{name}", f"text of at most {MAX_TEXT} characters, or null")
    for name in flags:
        if record.get(name) not in (None, True, False):
            raise _fail(path, f"{where}.{name}", "true, false or null")


def _same(path: Path, where: str, stored: Any, recomputed: Any) -> None:
    if recomputed is None and stored is None:
        return
    if not _number(stored) or recomputed is None or abs(stored - recomputed) > TOLERANCE:
        raise _fail(path, where, f"{recomputed!r} as its items give (it holds {stored!r})")


def _check_task(path: Path, task: str, entry: Any) -> None:
    where = f"tasks.{task}"
    if not isinstance(entry, dict) or not isinstance(entry.get("items"), list):
        raise _fail(path, f"{where}.items", "a list of items")
    if not isinstance(entry.get("summary"), dict):
        raise _fail(path, f"{where}.summary", "an object")
    numbers = ("tokens", "control_tokens", *MEASURES, *(f"{m}_control" for m in MEASURES))
    for n, record in enumerate(entry["items"]):
        _check_fields(path, f"{where}.items[{n}]", record, numbers)
        sources = record.get("control_from")
        if not isinstance(sources, list) or not all(isinstance(s, str) and len(s) <= MAX_TEXT for s in sources):
            raise _fail(path, f"{where}.items[{n}].control_from", "a list of texts")
        if not isinstance(record.get("input_sha256"), str) or not _SHA256.fullmatch(record["input_sha256"]):
            raise _fail(path, f"{where}.items[{n}].input_sha256", "64 lowercase hex digits")
    recomputed = task_summary(entry["items"], resamples=0)
    for name in ("items", "compared", "no_control", "control_texts"):
        if entry["summary"].get(name) != recomputed[name]:
            raise _fail(path, f"{where}.summary.{name}", f"{recomputed[name]} as its items give")
    for measure in MEASURES:
        stored = entry["summary"].get(measure)
        if not isinstance(stored, dict):
            raise _fail(path, f"{where}.summary.{measure}", "an object")
        for name in POINTS:
            _same(path, f"{where}.summary.{measure}.{name}", stored.get(name), recomputed[measure][name])
    completion = entry.get("completion")
    if completion is None:
        return
    if not isinstance(completion, dict) or not isinstance(completion.get("items"), list):
        raise _fail(path, f"{where}.completion.items", "a list of questions")
    for n, record in enumerate(completion["items"]):
        _check_fields(path, f"{where}.completion.items[{n}]", record, ("overlap", "control_overlap"),
                      ("prompt", "reference", "generated"), ("exact", "control_exact"))  # fmt: skip
    again = completion_summary(completion["items"])
    stored = completion.get("summary")
    if not isinstance(stored, dict):
        raise _fail(path, f"{where}.completion.summary", "an object")
    for name in ("exact", "overlap", "control_exact", "control_overlap"):
        _same(path, f"{where}.completion.summary.{name}", stored.get(name), again[name])


def read_probes(path: Path) -> dict[str, Any]:
    """A memorisation file, checked (module docstring): a :class:`BadProbesFile` names what is wrong."""
    data = read_versioned_object(path, file_format=FORMAT, schema_version=SCHEMA_VERSION, max_bytes=MAX_BYTES,
                                 what="memorisation file", error=BadProbesFile)  # fmt: skip
    for task, entry in data["tasks"].items():
        _check_task(path, task, entry)
    return data
