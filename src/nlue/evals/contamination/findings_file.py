"""The contamination file: one per dataset and corpus, strict and versioned, and its checked reader.

Written by ``nlue contamination`` to ``<results-dir>/contamination/<dataset>/<corpus>.json`` (the results
folder `nlue report` and the Space read; results readers pass the ``contamination/`` folder by)::

    {"format": "nlue-contamination", "schema_version": 1, "nlue_version": "...",
     "dataset": {"id", "split", "is_sample"}, "corpus": {"id", "documents", "characters"},
     "settings": {"word_n", "min_words", "char_n", "char_threshold", "max_documents"},
     "tasks": {"<task>": {"counts": {...}, "items": [
        {"id", "input_sha256", "verdict": "clean" | "contaminated" | "not_checked", "found_by": ["word", "char"],
         "word": share | null, "char": share | null, "source": share | null, "source_in_corpus": bool | null,
         "documents": {"word": [...], "char": [...], "source": [...]}}, ...]}}}

A share is the largest part of the item's n-grams that one corpus document holds (``null``: the item has
no n-gram of that measure: too short, or no English source known). ``found_by`` names the measures whose
threshold the item reached; ``verdict`` is ``contaminated`` when any did, ``not_checked`` when the item had
no word or character n-gram at all. ``source_in_corpus`` is apart from the verdict.

The file is input from outside when read (a results folder may come from anyone): :func:`read_findings`
bounds its size and depth and checks every field it hands on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.evals.contamination.measures import CHAR, SOURCE, WORD, Item, Settings, char_measure
from nlue.evals.contamination.scan import ScanFindings
from nlue.results import CONTAMINATION_FOLDER as FOLDER
from nlue.results import write_json_atomic
from nlue.results_files import read_versioned_object
from nlue.version import __version__

FORMAT = "nlue-contamination"
SCHEMA_VERSION = 1
MAX_BYTES = 256 << 20
VERDICTS = ("clean", "contaminated", "not_checked")
MEASURES = (WORD, CHAR, SOURCE)
_SHA256 = re.compile(r"[0-9a-f]{64}")


class BadFindingsFile(NlueError):
    """A contamination file that is not one, or breaks a rule; the message names the file and the field."""


def slug(text: str) -> str:
    """A file name from a dataset or corpus name: ``oscar-corpus/OSCAR-2301`` -> ``oscar-corpus--oscar-2301``."""
    cleaned = re.sub(r"[^a-z0-9._-]+", "-", text.strip().lower().replace("/", "--")).strip("-.")
    return cleaned[:100] or "unnamed"


def _label(name: str) -> str:
    """A local path by its own name (no machine's folder layout in a file name), a Hub id whole."""
    return Path(name).name if Path(name).exists() else name


def default_path(
    results_dir: Path,
    dataset: str,
    corpus: str,
    corpus_config: str | None = None,
    split: str = "test",
    tasks: Sequence[str] | None = None,
) -> Path:
    """``<results_dir>/contamination/<dataset>/<corpus>[-<config>][-<split>][-tasks-<names>].json``: a check of
    another split, or of some tasks only, lands in a file of its own and never replaces the whole test set's."""
    corpus_name = _label(corpus) + (f"-{corpus_config}" if corpus_config else "")
    corpus_name += ("" if split == "test" else f"-{split}") + (f"-tasks-{'-'.join(tasks)}" if tasks else "")
    return Path(results_dir) / FOLDER / slug(_label(dataset)) / f"{slug(corpus_name)}.json"


def _share(findings: ScanFindings, measure: str, item: int, has_grams: bool) -> float | None:
    return round(float(findings.measures[measure].best[item]), 6) if has_grams else None


def _item_record(position: int, item: Item, findings: ScanFindings, gram_counts: Mapping[str, Any],
                 settings: Settings) -> dict[str, Any]:  # fmt: skip
    names = {WORD: WORD, CHAR: char_measure(item.profile), SOURCE: SOURCE}
    shares, documents = {}, {}
    for short, name in names.items():
        counts = gram_counts.get(name)
        has = counts is not None and counts[position] > 0
        shares[short] = _share(findings, name, position, has)
        documents[short] = list(findings.measures[name].documents[position]) if has else []
    found_by = [m for m in (WORD, CHAR) if shares[m] is not None and (
        shares[m] >= settings.char_threshold if m == CHAR else shares[m] > 0)]  # fmt: skip
    checked = shares[WORD] is not None or shares[CHAR] is not None
    verdict = "contaminated" if found_by else "clean" if checked else "not_checked"
    source = None if shares[SOURCE] is None else shares[SOURCE] > 0
    return {"id": item.id, "input_sha256": item.input_sha256, "verdict": verdict, "found_by": found_by,
            **shares, "source_in_corpus": source, "documents": documents}  # fmt: skip


def task_counts(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """What the table shows per task, from its item records."""
    return {
        "items": len(records),
        "contaminated": sum(r["verdict"] == "contaminated" for r in records),
        "by_word": sum(WORD in r["found_by"] for r in records),
        "by_char": sum(CHAR in r["found_by"] for r in records),
        "not_checked": sum(r["verdict"] == "not_checked" for r in records),
        "with_source": sum(r["source_in_corpus"] is not None for r in records),
        "source_in_corpus": sum(r["source_in_corpus"] is True for r in records),
    }


def findings_document(items: Sequence[Item], findings: ScanFindings, gram_counts: Mapping[str, Any],
                      settings: Settings, dataset: Mapping[str, Any], corpus: str) -> dict[str, Any]:  # fmt: skip
    """The file's content (module docstring) for ``items`` and what the scan found."""
    tasks: dict[str, list[dict[str, Any]]] = {}
    for position, item in enumerate(items):
        tasks.setdefault(item.task, []).append(_item_record(position, item, findings, gram_counts, settings))
    return {
        "format": FORMAT, "schema_version": SCHEMA_VERSION, "nlue_version": __version__,
        "dataset": dict(dataset),
        "corpus": {"id": corpus, "documents": findings.documents, "characters": findings.characters},
        "settings": asdict(settings),
        "tasks": {task: {"counts": task_counts(records), "items": records} for task, records in tasks.items()},
    }  # fmt: skip


def write_findings(path: Path, document: Mapping[str, Any]) -> Path:
    """The file written whole or not at all."""
    return write_json_atomic(path, document)


def _fail(path: Path, where: str, expected: str) -> BadFindingsFile:
    return BadFindingsFile(f"{path}: {where}: expected {expected}")


def _check_share(path: Path, where: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1):
        raise _fail(path, where, "a share from 0 to 1, or null")


def _check_item(path: Path, where: str, record: Any) -> None:
    if not isinstance(record, dict):
        raise _fail(path, where, "an object")
    if isinstance(record.get("id"), bool) or not isinstance(record.get("id"), str | int):
        raise _fail(path, f"{where}.id", "a string or an integer")
    if not isinstance(record.get("input_sha256"), str) or not _SHA256.fullmatch(record["input_sha256"]):
        raise _fail(path, f"{where}.input_sha256", "64 lowercase hex digits")
    if record.get("verdict") not in VERDICTS:
        raise _fail(path, f"{where}.verdict", " or ".join(VERDICTS))
    found_by = record.get("found_by")
    if not isinstance(found_by, list) or not set(found_by) <= {WORD, CHAR}:
        raise _fail(path, f"{where}.found_by", "a list of 'word' and 'char'")
    if (record["verdict"] == "contaminated") != bool(found_by):
        raise _fail(path, f"{where}.verdict", "'contaminated' exactly when found_by names a measure")
    for measure in MEASURES:
        _check_share(path, f"{where}.{measure}", record.get(measure))
    if record.get("source_in_corpus") not in (None, True, False):
        raise _fail(path, f"{where}.source_in_corpus", "true, false or null")


def read_findings(path: Path) -> dict[str, Any]:
    """A contamination file, checked (module docstring): a :class:`BadFindingsFile` names what is wrong."""
    data = read_versioned_object(path, file_format=FORMAT, schema_version=SCHEMA_VERSION, max_bytes=MAX_BYTES,
                                 what="contamination file", error=BadFindingsFile)  # fmt: skip
    tasks = data["tasks"]
    for task, entry in tasks.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("items"), list):
            raise _fail(path, f"tasks.{task}.items", "a list of items")
        for number, record in enumerate(entry["items"]):
            _check_item(path, f"tasks.{task}.items[{number}]", record)
    return data


def contaminated_items(path: Path, key: str = "id", measures: Iterable[str] = (WORD, CHAR)) -> dict[str, frozenset]:
    """Per task, the items found in the corpus by any of ``measures`` (``word``, ``char``; ``source`` adds the
    items whose English source was found), named by ``key``: ``id`` or ``input_sha256``, as a predictions file
    names its rows. What `nlue report` and the board leave out to score the clean items."""
    if key not in ("id", "input_sha256"):
        raise ValueError(f"key must be 'id' or 'input_sha256', not {key!r}")
    wanted = set(measures)
    data = read_findings(path)
    return {
        task: frozenset(
            record[key] for record in entry["items"]
            if wanted & set(record["found_by"]) or (SOURCE in wanted and record["source_in_corpus"] is True)
        )
        for task, entry in data["tasks"].items()
    }  # fmt: skip
