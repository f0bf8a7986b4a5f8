"""Annotating mined candidates: sheets out, labels and spans in, agreement, adjudication (facts §4).

**Export** (:func:`export_sheets`): one CSV per annotator (UTF-8 with a byte-order mark, so
spreadsheet programs show Devanagari), the same candidates in the same order:
``key, idiom, S1, S2, S3, position, label, note``. ``position`` comes filled with the mined
span (S2 with ``###`` markers); the annotator writes ``label`` ``I`` (idiomatic), ``L``
(literal) or ``NA`` (the context is incoherent, or the hit is not the idiom), and for I or L
moves the markers to the idiom's whole inflected form if the mined span is wrong.

**Import** (:func:`import_annotations`): every sheet must label every key exactly once;
labels are read case-insensitively (the Greek capital iota text extraction puts for
``I`` is read as ``I``; ``idiomatic``/``literal`` also do); an I or L row's position must hold
one marked span that is S2 (:mod:`nlue.text.idiom_position`). All problems are reported at once,
each with file, row and field (the GMET judging import's error, reused).

**Agreement**: over the labels I, L, NA, Cohen's kappa for two annotators and Fleiss' kappa
for more (:mod:`nlue.gmet.agreement`, the GMET judges' statistics), the share of items
with one label from all, and, among items all labelled I or L, the share with the same span.

**Adjudication**: an item is settled when all annotators give the same label and (for I or
L) the same span. The others go to ``disagreements.csv``, with each annotator's label and
position and empty ``label``/``position`` columns for the adjudicator (the paper's third,
expert annotator); a filled copy given back as ``adjudication`` settles them, and the
report counts, per annotator, the adjudicated items where that annotator's label was
overruled. Settled NA items are dropped; unsettled items are left out and counted.
``items.jsonl`` holds the rest in the builder's source schema.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nlue.errors import NlueError, RowProblem
from nlue.gmet.agreement import cohen_kappa, fleiss_kappa, percent_agreement, rating_counts
from nlue.gmet.judging import JudgmentFileError, read_rows, write_table
from nlue.registry.kinds.idiomaticity import parse_idiom_label
from nlue.text.idiom_position import Span, mark_position, parse_position
from nlue.text.normalize import normalize_text

LABELS: tuple[str, ...] = ("I", "L", "NA")
NA = "NA"
SHEET_COLUMNS: tuple[str, ...] = ("key", "idiom", "S1", "S2", "S3", "position", "label", "note")
ITEM_COLUMNS: tuple[str, ...] = ("id", "idiom", "S1", "S2", "S3", "label", "position", "document")
DISAGREEMENTS_NAME = "disagreements.csv"


@dataclass(frozen=True)
class Verdict:
    """One annotator's label for one candidate, and (for I or L) the span they marked."""

    label: str
    span: Span | None


def _atomic_table(path: Path, rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(handle)
    try:
        write_table(Path(tmp), rows, columns)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _candidates(items: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    by_id: dict[str, Mapping[str, Any]] = {}
    for number, item in enumerate(items, start=1):
        key = str(item.get("id") or "").strip()
        if not key:
            raise NlueError(f"candidate {number} has no id; mine with `nlue idioms mine`, which gives every one an id")
        if key in by_id:
            raise NlueError(f"candidate id {key!r} occurs twice (candidates {number} and an earlier one)")
        by_id[key] = item
    if not by_id:
        raise NlueError("no candidates to annotate")
    return by_id


def export_sheets(items: Sequence[Mapping[str, Any]], out: Path, annotators: Sequence[str]) -> list[Path]:
    """One annotation sheet per annotator in ``out`` (see the module docstring); their paths."""
    if len(annotators) < 2 or len(set(annotators)) != len(annotators):
        raise NlueError(f"agreement needs two or more distinct annotators, got {list(annotators)}")
    rows = [
        {"key": key, **{f: item.get(f) or "" for f in ("idiom", "S1", "S2", "S3", "position")}, "label": "", "note": ""}
        for key, item in _candidates(items).items()
    ]
    return [_atomic_table(out / f"{name}.csv", rows, SHEET_COLUMNS) for name in annotators]


def parse_annotation_label(raw: Any) -> str | None:
    """``I``, ``L`` or ``NA`` from an annotator's cell; None when it is none of them."""
    text = normalize_text(str(raw or "")).casefold()
    if text in ("na", "n/a", "n.a."):
        return NA
    label = parse_idiom_label(text) if text else "empty"
    return LABELS[label] if isinstance(label, int) else None


def read_sheet(
    path: Path, candidates: Mapping[str, Mapping[str, Any]], problems: list[RowProblem], skip_blank: bool = False
) -> dict[str, Verdict]:
    """One annotator's verdicts by candidate id; what is wrong goes to ``problems``.

    ``skip_blank``: a row with no label is not decided yet (an adjudication in progress), not an
    error, and candidates may be missing; otherwise every candidate needs a row.
    """
    label_column = "label"
    name = str(path)
    try:
        rows = read_rows(path)
    except JudgmentFileError as exc:
        problems.extend(exc.problems)
        return {}
    verdicts: dict[str, Verdict] = {}
    first: dict[str, int] = {}
    for number, record in rows:
        key = str(record.get("key") or "").strip()
        if key not in candidates:
            problems.append(RowProblem(name, number, "key", "not a candidate id of the sheet's candidates", key))
            continue
        if key in first:
            problems.append(RowProblem(name, number, "key", f"labelled already in row {first[key]}", key))
            continue
        first[key] = number
        if skip_blank and not normalize_text(str(record.get(label_column) or "")):
            continue
        label = parse_annotation_label(record.get(label_column))
        if label is None:
            shown = str(record.get(label_column) or "")
            problems.append(RowProblem(name, number, label_column, "expected I, L or NA", shown))
            continue
        span = None
        if label != NA:
            s2 = normalize_text(str(candidates[key].get("S2") or ""))
            span = parse_position(normalize_text(str(record.get("position") or "")), s2)
            if not isinstance(span, Span):
                problems.append(RowProblem(name, number, "position", span, str(record.get("position") or "")))
                continue
        verdicts[key] = Verdict(label, span)
    missing = [key for key in candidates if key not in first]
    if missing and not skip_blank:
        shown = ", ".join(missing[:10]) + (", ..." if len(missing) > 10 else "")
        problems.append(RowProblem(name, 0, "key", f"no label for {len(missing)} candidate(s): {shown}"))
    return verdicts


def agreement_report(verdicts: Sequence[Mapping[str, Verdict]], keys: Sequence[str]) -> dict[str, Any]:
    """Kappa over I/L/NA (Cohen for two annotators, Fleiss for more), unanimity, and span agreement."""
    matrix = np.array([[v[key].label for v in verdicts] for key in keys])
    if len(verdicts) == 2:
        statistic, kappa = "cohen_kappa", cohen_kappa(matrix[:, 0], matrix[:, 1])
    else:
        statistic, kappa = "fleiss_kappa", fleiss_kappa(rating_counts(matrix, LABELS))
    both = [key for key in keys if all(v[key].label != NA for v in verdicts)]
    same_span = sum(1 for key in both if len({(v[key].span.start, v[key].span.end) for v in verdicts}) == 1)  # type: ignore[union-attr]
    return {
        "statistic": statistic,
        "kappa": None if kappa is None else round(float(kappa), 4),
        "labels": list(LABELS),
        "unanimous_labels": round(percent_agreement(matrix), 4),
        "span_agreement": round(same_span / len(both), 4) if both else None,
        "items_all_I_or_L": len(both),
    }


def _settled(votes: Sequence[Verdict]) -> Verdict | None:
    labels = {v.label for v in votes}
    if len(labels) != 1:
        return None
    if NA in labels:
        return votes[0]
    return votes[0] if len({(v.span.start, v.span.end) for v in votes if v.span}) == 1 else None


def import_annotations(
    items: Sequence[Mapping[str, Any]], sheets: Sequence[Path], adjudication: Path | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """(items kept, disagreements to adjudicate, report) from two or more annotators' sheets."""
    if len(sheets) < 2:
        raise NlueError(f"agreement needs two or more annotators' sheets, got {len(sheets)}")
    candidates = _candidates(items)
    keys = list(candidates)
    problems: list[RowProblem] = []
    verdicts = []
    for path in sheets:
        verdicts.append(read_sheet(path, candidates, problems))
    decided: dict[str, Verdict] = {}
    if adjudication is not None:
        decided = read_sheet(adjudication, candidates, problems, skip_blank=True)
    if problems:
        raise JudgmentFileError(problems)
    names = [path.stem for path in sheets]
    kept, disagreements = [], []
    overruled: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for key in keys:
        votes = [v[key] for v in verdicts]
        final = _settled(votes)
        if final is None and key in decided:
            final = decided[key]
            overruled.update(n for n, v in zip(names, votes, strict=True) if v.label != final.label)
            counts["adjudicated"] += 1
        if final is None:
            item = candidates[key]
            row = {
                "key": key,
                **{f: item.get(f) or "" for f in ("idiom", "S1", "S2", "S3")},
                "label": "",
                "position": "",
            }
            for name, vote in zip(names, votes, strict=True):
                spanned = vote.span and mark_position(normalize_text(str(item["S2"])), vote.span.start, vote.span.end)
                row |= {f"{name}_label": vote.label, f"{name}_position": spanned or ""}
            disagreements.append(row)
            continue
        counts[final.label] += 1
        if final.label != NA and final.span is not None:
            item = candidates[key]
            s2 = normalize_text(str(item["S2"]))
            kept.append({"id": key, "idiom": item.get("idiom"), "S1": item.get("S1") or "", "S2": s2,
                         "S3": item.get("S3") or "", "label": final.label,
                         "position": mark_position(s2, final.span.start, final.span.end),
                         "document": item.get("document") or ""})  # fmt: skip
    report = {
        "annotators": names,
        "candidates": len(keys),
        "labels_by_annotator": {
            n: dict(Counter(v[k].label for k in keys)) for n, v in zip(names, verdicts, strict=True)
        },
        "agreement": agreement_report(verdicts, keys),
        "disagreements": len(disagreements) + counts["adjudicated"],
        "adjudicated": counts["adjudicated"],
        "overruled_by_adjudication": {n: overruled[n] for n in names},
        "unresolved": len(disagreements),
        "dropped_na": counts[NA],
        "kept": len(kept),
        "kept_labels": {"I": counts["I"], "L": counts["L"]},
    }
    return kept, disagreements, report


def disagreement_columns(annotators: Sequence[str]) -> list[str]:
    per = [f"{name}_{what}" for name in annotators for what in ("label", "position")]
    return ["key", "idiom", "S1", "S2", "S3", *per, "label", "position"]


def write_disagreements(path: Path, rows: Sequence[Mapping[str, Any]], annotators: Sequence[str]) -> Path:
    return _atomic_table(path, rows, disagreement_columns(annotators))
