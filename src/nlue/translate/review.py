"""The native-speaker review loop: a seeded sample out, verdicts in, bad batches sent back.

* :func:`export_review` draws a seeded share of the translated rows (the paper's 1%, at
  least ``min_rows``) and writes ``review/sample.csv``: the English and the Nepali side by
  side, the label (a flipped meaning shows there), and empty columns for the rubric:
  ``adequacy``, ``fluency`` and ``cultural_fit`` from 1 to 5, ``acceptable`` yes or no, and
  a comment. ``review/RUBRIC.md`` says what each means.
* :func:`import_review` reads the filled sheets back (one per reviewer; a row any reviewer
  finds unacceptable counts as unacceptable), and sends back every batch where more than
  ``max_unacceptable`` (the paper's 10%) of its reviewed rows are unacceptable: it writes
  ``review/retranslate.json``, which the next ``nlue translate`` run of the same folder
  reads. Those batches are then asked again with a review-round note (a new request, so the
  journal does not answer it with the rejected translation) and their rows replaced.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.data.sources import read_sheet_records
from nlue.data.translation_layout import RETRANSLATE, REVIEW_SUMMARY, review_dir
from nlue.errors import NlueError, RowProblem
from nlue.registry.spec import TaskSpec
from nlue.text.safe import csv_row
from nlue.translate.output import write_atomic, write_report
from nlue.translate.prompts import item_fields

DEFAULT_SHARE = 0.01
DEFAULT_MIN_ROWS = 20
DEFAULT_MAX_UNACCEPTABLE = 0.10
RUBRIC_COLUMNS = ("adequacy", "fluency", "cultural_fit")
_YES, _NO = {"yes", "y", "1", "true", "ok"}, {"no", "n", "0", "false"}

RUBRIC = """# Reviewing the Nepali translations

One row per translated item: the English source (`en_*`), its Nepali translation (`ne_*`) and
the label the item carries. Fill in, from 1 (bad) to 5 (good):

- `adequacy`: does the Nepali say what the English says, no more, no less? Would the label
  still be right for the Nepali (an ungrammatical English sentence turned grammatical, a
  paraphrase turned into a different claim, are label mismatches: say so in the comment)?
- `fluency`: would a native speaker write it this way? Word-by-word renderings of idioms and
  slang, numbers misread (an abbreviated year read as a count), names spelt two ways.
- `cultural_fit`: does it read naturally for a Nepali reader (names, units, customs)?

and `acceptable`: `yes` if the row can stay in the dataset as it is, `no` if not.
Leave a row's `acceptable` empty to skip it. Save the file as CSV (UTF-8).
"""


def _translated(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise NlueError(f"{path}: no translated rows; run nlue translate first")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def export_review(
    task: TaskSpec,
    output: Path,
    work: Path,
    share: float = DEFAULT_SHARE,
    min_rows: int = DEFAULT_MIN_ROWS,
    seed: int = 42,
) -> Path:
    """Write the review sheet of a seeded sample of ``output``'s rows; return its path."""
    if not 0 < share <= 1 or min_rows < 1:
        raise NlueError(f"the review share must be in (0, 1] and at least one row reviewed (got {share}, {min_rows})")
    rows = _translated(output)
    count = min(len(rows), max(min_rows, math.ceil(share * len(rows))))
    chosen = sorted(random.Random(seed).sample(range(len(rows)), count))
    fields = item_fields(task)
    header = ["source_id", "batch", *(f"{side}_{name}" for name in fields for side in ("en", "ne"))]
    header += ["label", *RUBRIC_COLUMNS, "acceptable", "comment"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(csv_row(header))
    for index in chosen:
        row = rows[index]
        provenance = row["provenance"]
        texts = [text for name in fields for text in (provenance["source_text"][name], row[name])]
        label = row.get(task.label_field, "") if task.label_field else ""
        writer.writerow(csv_row([provenance["source_id"], provenance["batch"], *texts, label, "", "", "", "", ""]))
    folder = review_dir(work)
    write_atomic(folder / "RUBRIC.md", [RUBRIC])
    # A byte-order mark, so that spreadsheet programs open the Devanagari as UTF-8.
    return write_atomic(folder / "sample.csv", ["\ufeff" + buffer.getvalue()])


def _verdict(path: str, row: int, record: dict[str, Any], problems: list[RowProblem]) -> bool | None:
    value = str(record.get("acceptable") or "").strip().lower()
    for name in RUBRIC_COLUMNS:
        score = str(record.get(name) or "").strip()
        if score and score not in {"1", "2", "3", "4", "5"}:
            problems.append(RowProblem(path, row, name, "expected a score from 1 to 5, or nothing", score))
    if not value:
        return None
    if value in _YES:
        return True
    if value in _NO:
        return False
    problems.append(RowProblem(path, row, "acceptable", "expected yes or no (or nothing, to skip the row)", value))
    return None


def import_review(
    work: Path, sheets: Sequence[Path], max_unacceptable: float = DEFAULT_MAX_UNACCEPTABLE
) -> dict[str, Any]:
    """Read the filled sheets; write ``review/verdicts.json`` and the batches sent back; return the summary."""
    if not 0 <= max_unacceptable < 1:
        raise NlueError(f"the unacceptable share must be in [0, 1), got {max_unacceptable}")
    folder = review_dir(work)
    sample = folder / "sample.csv"
    if not sample.is_file():
        raise NlueError(f"{sample}: no review sample; export one first (nlue translate review export)")
    batch_of = {record["source_id"]: record["batch"] for _, record in read_sheet_records(sample)}
    verdicts: dict[str, list[bool]] = {}
    problems: list[RowProblem] = []
    for sheet in sheets:
        for row, record in read_sheet_records(sheet):
            source_id = str(record.get("source_id") or "").strip()
            if source_id not in batch_of:
                problems.append(RowProblem(str(sheet), row, "source_id", "not a row of the review sample", source_id))
                continue
            verdict = _verdict(str(sheet), row, record, problems)
            if verdict is not None:
                verdicts.setdefault(source_id, []).append(verdict)
    if problems:
        shown = "; ".join(p.describe() for p in problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise NlueError(f"the review sheets have {len(problems)} problems: {shown}{more}")
    reviewed: Counter = Counter()
    unacceptable: Counter = Counter()
    for source_id, given in verdicts.items():
        batch = batch_of[source_id]
        reviewed[batch] += 1
        unacceptable[batch] += not all(given)  # one reviewer's no is enough to look again
    batches = {
        batch: {"reviewed": n, "unacceptable": unacceptable[batch], "share": unacceptable[batch] / n}
        for batch, n in sorted(reviewed.items())
    }
    sent_back = [batch for batch, counts in batches.items() if counts["share"] > max_unacceptable]
    rounds_path = folder / RETRANSLATE
    rounds: dict[str, int] = json.loads(rounds_path.read_text(encoding="utf-8")) if rounds_path.is_file() else {}
    for batch in sent_back:
        rounds[batch] = rounds.get(batch, 0) + 1
    write_report(rounds_path, rounds)
    summary = {
        "sheets": [str(s) for s in sheets],
        "rows_reviewed": len(verdicts),
        "rows_unacceptable": sum(unacceptable.values()),
        "rows_judged_by_several": sum(len(v) > 1 for v in verdicts.values()),
        "max_unacceptable": max_unacceptable,
        "batches": batches,
        "sent_back": sent_back,
        "review_rounds": rounds,
    }
    write_report(folder / REVIEW_SUMMARY, summary)
    return summary


def review_rounds(work: Path) -> dict[str, int]:
    """Batch -> how many times review sent it back (empty when never)."""
    path = review_dir(work) / RETRANSLATE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise NlueError(f"{path}: not valid JSON ({exc}); import the review again") from exc
    if not isinstance(data, dict) or not all(isinstance(v, int) for v in data.values()):
        raise NlueError(f"{path}: expected an object of batch: round number")
    return data
