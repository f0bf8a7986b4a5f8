"""Two annotators per exam item, as UrduMMLU annotated its exam-derived items (facts §5).

**Export**: one CSV per annotator (UTF-8 with a byte-order mark, so spreadsheet programs
show Nepali and Urdu), the same items in the same order, grouped by subdomain (the paper's
batches), without the key: ``item_id, domain, subdomain, level, question, A, B, C, D,
answer, flag, note``. The annotator fills ``answer`` with A, B, C, D or ``unsure`` (an
agreed "none of these" is an option like any other), may set ``flag`` to one of
:data:`FLAGS`, and may leave a ``note``. Edits to the item are made in the source, not here.

**Import and the inclusion rule**: an item is kept only when both annotators gave the same
answer A-D, neither flagged it and neither marked it unsure. Its key becomes that answer
(the consensus is the gold; items whose given key differs are listed). A dropped item
has one reason, the first that applies: ``incomplete`` (an annotator left ``answer``
empty or the item is missing from a sheet: only an explicit ``unsure`` is an
abstention), ``flagged``, ``unsure``, ``disagreement``.

**Agreement** over the items both annotators answered with a letter: observed agreement
p_o, the paper's simplified kappa with chance fixed at 1/4 for four options,
``(p_o - 0.25) / 0.75`` (its 89.98% gives 0.8664), and, as our addition, Cohen's kappa
with chance from the two annotators' own answer distributions.
"""

from __future__ import annotations

import csv
import os
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlue.data.sources import read_sheet_records
from nlue.errors import NlueError, RowProblem, SourceError
from nlue.registry.kinds.mcq_text import LETTERS
from nlue.registry.kinds.multiple_choice import item_options, key_letter
from nlue.text.safe import csv_row

UNSURE = "unsure"
FLAGS: tuple[str, ...] = ("multiple_correct", "no_correct", "ambiguous", "missing_image", "out_of_scope")
COLUMNS: tuple[str, ...] = ("item_id", "domain", "subdomain", "level", "question", *LETTERS, "answer", "flag", "note")
DROP_REASONS: tuple[str, ...] = ("incomplete", "flagged", "unsure", "disagreement")
CHANCE = 1 / len(LETTERS)


@dataclass(frozen=True)
class Annotation:
    """One annotator's verdict on one item: a letter, ``unsure`` or None (left empty), a flag, a note."""

    answer: str | None
    flag: str | None = None
    note: str = ""


def export_sheets(
    items: Sequence[Mapping[str, Any]], out_dir: Path, annotators: Sequence[str] = ("annotator_1", "annotator_2")
) -> list[Path]:
    """Write one annotation CSV per annotator into ``out_dir``; returns their paths."""
    if len(annotators) != 2 or len(set(annotators)) != 2:
        raise NlueError(f"the inclusion rule needs two distinct annotators, got {list(annotators)}")
    ids = [str(item["id"]) for item in items]
    repeated = sorted(i for i, n in Counter(ids).items() if n > 1)
    if repeated:
        raise NlueError(f"item ids must be unique to be annotated; repeated: {', '.join(repeated[:5])}")
    ordered = sorted(items, key=lambda item: (str(item["domain"]), str(item["subdomain"])))  # stable: batches
    rows = [[str(item["id"]), item["domain"], item["subdomain"], item["level"], item["question"],
             *item_options(item).values(), "", "", ""] for item in ordered]  # fmt: skip
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in annotators:
        path = out_dir / f"{name}.csv"
        _write_csv(path, rows)
        paths.append(path)
    return paths


def _write_csv(path: Path, rows: list[list[Any]]) -> None:
    """Written beside its place and moved there once complete: a sheet is never half-written."""
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8-sig", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(COLUMNS)
            writer.writerows(csv_row(row) for row in rows)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_sheet(path: Path, item_ids: set[str]) -> dict[str, Annotation]:
    """One annotator's sheet; a SourceError naming file, row and field for anything unexpected."""
    out: dict[str, Annotation] = {}
    for row, record in read_sheet_records(path):
        missing = [name for name in ("item_id", "answer", "flag") if name not in record]
        if missing:
            raise SourceError(
                RowProblem(str(path), row, missing[0], f"missing column; a sheet has {', '.join(COLUMNS)}")
            )
        item_id = str(record["item_id"]).strip()
        if item_id not in item_ids:
            raise SourceError(RowProblem(str(path), row, "item_id", "not an item of the exported set", item_id))
        if item_id in out:
            raise SourceError(RowProblem(str(path), row, "item_id", "this item appears twice in the sheet", item_id))
        answer = str(record.get("answer") or "").strip()
        if answer and answer.upper() not in LETTERS and answer.casefold() != UNSURE:
            raise SourceError(RowProblem(str(path), row, "answer", f"expected A, B, C, D or {UNSURE}", answer))
        flag = str(record.get("flag") or "").strip().casefold().replace(" ", "_") or None
        if flag is not None and flag not in FLAGS:
            raise SourceError(RowProblem(str(path), row, "flag", f"expected empty or one of {', '.join(FLAGS)}", flag))
        value = None if not answer else (UNSURE if answer.casefold() == UNSURE else answer.upper())
        out[item_id] = Annotation(value, flag, str(record.get("note") or "").strip())
    return out


def _reason(first: Annotation | None, second: Annotation | None) -> str | None:
    """Why an item is dropped (the first reason that applies), or None when it is kept."""
    if first is None or second is None or first.answer is None or second.answer is None:
        return "incomplete"
    if first.flag or second.flag:
        return "flagged"
    if UNSURE in (first.answer, second.answer):
        return "unsure"
    return "disagreement" if first.answer != second.answer else None


def agreement(pairs: Sequence[tuple[str, str]]) -> dict[str, float | int | None]:
    """Observed agreement, the paper's kappa with chance 1/4, and Cohen's kappa, over letter pairs."""
    if not pairs:
        return {"items_compared": 0, "observed": None, "kappa_fixed_chance": None, "cohen_kappa": None}
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[letter] * second[letter] for letter in LETTERS) / (n * n)
    cohen = (observed - expected) / (1 - expected) if expected < 1 else None
    return {"items_compared": n, "observed": observed, "kappa_fixed_chance": (observed - CHANCE) / (1 - CHANCE),
            "cohen_kappa": cohen}  # fmt: skip


def apply_inclusion_rule(
    items: Sequence[Mapping[str, Any]], first: Mapping[str, Annotation], second: Mapping[str, Annotation]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The items both annotators answered alike (their key set to that answer) and the report."""
    kept: list[dict[str, Any]] = []
    drops: list[dict[str, str]] = []
    changed: list[dict[str, str]] = []
    letters: list[tuple[str, str]] = []
    for item in items:
        item_id = str(item["id"])
        a, b = first.get(item_id), second.get(item_id)
        if a and b and a.answer in LETTERS and b.answer in LETTERS:
            letters.append((str(a.answer), str(b.answer)))
        reason = _reason(a, b)
        if reason is not None:
            drops.append({"id": item_id, "reason": reason})
            continue
        assert a is not None and a.answer is not None
        options = item_options(item)
        given = item.get("correct_key")
        if given not in (None, "") and key_letter(given) != a.answer:
            changed.append({"id": item_id, "given": key_letter(given), "consensus": a.answer})
        kept.append({**item, "correct_key": a.answer, "correct_option": options[a.answer]})
    counts = Counter(drop["reason"] for drop in drops)
    report = {
        "annotated": len(items), "retained": len(kept), "retained_share": len(kept) / len(items) if items else None,
        "dropped_by_reason": {reason: counts.get(reason, 0) for reason in DROP_REASONS},
        "agreement": agreement(letters), "key_changed_by_consensus": changed, "drops": drops,
    }  # fmt: skip
    return kept, report


def import_sheets(
    items: Sequence[Mapping[str, Any]], first_path: Path, second_path: Path
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Read both annotators' sheets and apply the inclusion rule to ``items``."""
    ids = {str(item["id"]) for item in items}
    first, second = read_sheet(first_path, ids), read_sheet(second_path, ids)
    kept, report = apply_inclusion_rule(items, first, second)
    report["sheets"] = [str(first_path), str(second_path)]
    return kept, report
