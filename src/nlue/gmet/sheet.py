"""Blind judging sheets for GMET: what native speakers see, and the private key that maps it back.

The paper's GMET scores are native speakers' verdicts on the word a model proposed. For
those verdicts to be the judges' own, a judge sees only what is needed to judge a word:
the sentence with its blank and the proposed word. Not the dataset's listed answers,
not the automatic verdict, not the model's name.

``sheet.csv`` (UTF-8 with a byte-order mark, so spreadsheet programs show Devanagari)
    One row per (item, proposed word): ``key``, ``sentence`` (with ``[MASK]``), ``word``,
    ``filled`` (the sentence with the word in place) and an empty ``judgment`` column
    (1 = the word fits the sentence, 0 = it does not). Rows are shuffled with a seed, so
    neighbouring rows say nothing about category or model. When several runs are judged
    together, a word that more than one model proposed for the same item is one row, so
    judges see neither which models proposed it nor how many. The listed answers appear
    only when asked for (``reference=True``), in a column named ``reference``: a sheet
    with it is no longer blind, which the key records.
``sheet_key.json``
    Keep it from the judges: for every sheet key, the (run, item id) pairs it stands for,
    and each run's folder and model. ``nlue gmet --judgments`` reads it to map the
    judges' rows back to each run's items.

An item whose model proposed no word has no row: it is wrong whatever the judges say.
"""

from __future__ import annotations

import csv
import json
import logging
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.registry.tasks import MASK_PLACEHOLDER
from nlue.text.normalize import normalize_answer
from nlue.text.safe import csv_cell

logger = logging.getLogger(__name__)

SHEET_NAME = "sheet.csv"
KEY_NAME = "sheet_key.json"
SHEET_COLUMNS: tuple[str, ...] = ("key", "sentence", "word", "filled", "judgment")
REFERENCE_COLUMN = "reference"
KEY_FORMAT = 1
DEFAULT_SHEET_SEED = 42


@dataclass(frozen=True)
class SheetItem:
    """One item of one run as the sheet needs it: the sentence, the proposed word and the listed answers."""

    id: int
    sentence: str
    word: str
    answers: tuple[str, ...] = ()


@dataclass(frozen=True)
class SheetRun:
    """The items of one scored run to be judged."""

    label: str  # how the key names the run; never shown to judges
    folder: str
    model: str
    items: tuple[SheetItem, ...]


@dataclass(frozen=True)
class SheetKey:
    """The private side of a sheet: which (run, item) pairs each key stands for."""

    path: Path
    seed: int
    reference_shown: bool
    runs: Mapping[str, Mapping[str, str]]  # label -> {"folder": ..., "model": ...}
    entries: Mapping[str, tuple[tuple[str, int], ...]]  # key -> ((run label, item id), ...)

    def run_label(self, run_folder: Path) -> str:
        """The label of the run kept in ``run_folder``; a clear error when the key does not know it."""
        wanted = str(Path(run_folder).resolve())
        for label, info in self.runs.items():
            if info.get("folder") == wanted:
                return label
        names = [
            label for label, info in self.runs.items() if Path(info.get("folder", "")).name == Path(run_folder).name
        ]
        if len(names) == 1:
            return names[0]
        known = ", ".join(info.get("folder", label) for label, info in self.runs.items())
        raise NlueError(f"{self.path}: this sheet does not cover the run in {run_folder}; it covers: {known}")

    def keys_of(self, label: str) -> dict[str, list[int]]:
        """Each key of the sheet that stands for items of run ``label``, with those item ids."""
        out: dict[str, list[int]] = {}
        for key, pairs in self.entries.items():
            ids = [item_id for run, item_id in pairs if run == label]
            if ids:
                out[key] = ids
        return out


def filled(sentence: str, word: str) -> str:
    return sentence.replace(MASK_PLACEHOLDER, word, 1)


def build_sheet(
    runs: Sequence[SheetRun], *, seed: int = DEFAULT_SHEET_SEED, reference: bool = False
) -> tuple[list[dict[str, Any]], dict[str, list[tuple[str, int]]]]:
    """The sheet's rows (shuffled, keyed) and the key's entries (key -> (run label, item id) pairs)."""
    labels = [run.label for run in runs]
    if len(set(labels)) != len(labels):
        raise NlueError(f"run labels must be distinct, got {labels}")
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for run in runs:
        for item in run.items:
            word = normalize_answer(item.word)
            if not word:
                continue  # nothing proposed: wrong without judging
            group = groups.setdefault(
                (item.sentence, word),
                {"sentence": item.sentence, "word": item.word, "answers": [], "pairs": []},
            )
            group["pairs"].append((run.label, item.id))
            for answer in item.answers:
                if answer not in group["answers"]:
                    group["answers"].append(answer)
    ordered = sorted(groups.values(), key=lambda g: (g["sentence"], normalize_answer(g["word"])))
    random.Random(seed).shuffle(ordered)
    width = max(4, len(str(len(ordered))))
    rows, entries = [], {}
    for number, group in enumerate(ordered, start=1):
        key = f"S{number:0{width}d}"
        row = {
            "key": key,
            "sentence": group["sentence"],
            "word": group["word"],
            "filled": filled(group["sentence"], group["word"]),
            "judgment": "",
        }
        if reference:
            row[REFERENCE_COLUMN] = " | ".join(group["answers"])
        rows.append(row)
        entries[key] = list(group["pairs"])
    return rows, entries


def write_sheet(
    runs: Sequence[SheetRun], out: Path, *, seed: int = DEFAULT_SHEET_SEED, reference: bool = False
) -> tuple[Path, Path]:
    """Write ``sheet.csv`` and ``sheet_key.json`` into ``out``; return both paths."""
    from nlue.results import write_json_atomic

    rows, entries = build_sheet(runs, seed=seed, reference=reference)
    out.mkdir(parents=True, exist_ok=True)
    columns = [*SHEET_COLUMNS[:-1], *([REFERENCE_COLUMN] if reference else []), SHEET_COLUMNS[-1]]
    sheet = out / SHEET_NAME
    tmp = sheet.with_name(f".{sheet.name}.partial")
    with tmp.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows({name: csv_cell(value) for name, value in row.items()} for row in rows)
    tmp.replace(sheet)
    key = {
        "format": KEY_FORMAT,
        "seed": seed,
        "reference_shown": reference,
        "note": "keep this file from the judges: it says which run and item each sheet row stands for",
        "runs": {run.label: {"folder": run.folder, "model": run.model} for run in runs},
        "entries": {k: [list(pair) for pair in pairs] for k, pairs in entries.items()},
    }
    key_path = write_json_atomic(out / KEY_NAME, key)
    if reference:
        logger.warning("the sheet shows the listed answers (reference column): it is not blind")
    return sheet, key_path


def read_key(path: Path) -> SheetKey:
    """A sheet key written by :func:`write_sheet`; a clear error for anything else."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NlueError(
            f"{path}: no sheet key; judging a blind sheet needs the sheet_key.json written with it"
        ) from None
    except (OSError, json.JSONDecodeError) as exc:
        raise NlueError(f"{path}: cannot read the sheet key: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != KEY_FORMAT or not isinstance(data.get("entries"), dict):
        raise NlueError(f"{path}: not an nlue sheet key (format {KEY_FORMAT})")
    entries = {
        str(key): tuple((str(run), int(item_id)) for run, item_id in pairs) for key, pairs in data["entries"].items()
    }
    runs = {str(label): {k: str(v) for k, v in info.items()} for label, info in (data.get("runs") or {}).items()}
    return SheetKey(path, int(data.get("seed", 0)), bool(data.get("reference_shown")), runs, entries)


def run_from_folder(folder: Path, label: str | None = None) -> SheetRun:
    """The items of a scored run, from the ``predictions.jsonl`` and ``run.json`` that `nlue gmet --model` wrote."""
    folder = Path(folder)
    listing = folder / "predictions.jsonl"
    if not listing.is_file():
        raise NlueError(f"{folder}: no predictions.jsonl; give the output folder of `nlue gmet --model`")
    items = []
    for number, line in enumerate(listing.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            items.append(
                SheetItem(
                    int(record["id"]),
                    str(record["sentence"]),
                    str(record.get("prediction") or ""),
                    tuple(str(a) for a in record.get("answers") or ()),
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise NlueError(f"{listing}, row {number}: not a GMET prediction record ({exc})") from None
    meta_path = folder / "run.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
    return SheetRun(
        label or folder.name, str(folder.resolve()), str(meta.get("model") or "unknown model"), tuple(items)
    )


def runs_from_folders(folders: Sequence[Path]) -> list[SheetRun]:
    """Runs for a shared sheet; labels are run1, run2, ... so that even the key's labels name no model."""
    return [run_from_folder(folder, f"run{number}") for number, folder in enumerate(folders, start=1)]
