"""How a machine-translated source was made, read back from its run's files for the dataset card.

A source the builder reads may be the output of ``nlue translate``
(``<config>/<split>.translated.jsonl``). Its run left a report beside it (model, prompt
version, batch size, counts of every failure kind, class balance), and, when they were
done, the native-speaker review summary and the back-translation scores
(:mod:`nlue.data.translation_layout` says where). The card must say that such a split is a
machine translation and how it was checked, so this module gathers those facts into one
small dict per source file. When the run folder is gone (the file was moved alone), the
first row's own provenance still names the model and prompt version.

Only file names go into the card, never local paths: a published card should not carry
the folder layout of the machine that built it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nlue.data.text_files import MAX_LINE_BYTES
from nlue.data.translation_layout import (
    RETRANSLATE,
    REVIEW_SUMMARY,
    RUN_REPORT,
    backtranslation_dir,
    review_dir,
    work_dir_of_output,
)
from nlue.errors import NlueError


def _read_json(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise NlueError(f"{path}: not valid JSON ({exc}); run the step that wrote it again") from exc
    if not isinstance(data, dict):
        raise NlueError(f"{path}: expected a JSON object")
    return data


def _first_row_provenance(path: Path) -> dict[str, Any] | None:
    with path.open(encoding="utf-8") as handle:
        while line := handle.readline(MAX_LINE_BYTES):  # bounded: the reader refuses a longer line
            if line.strip():
                try:
                    provenance = json.loads(line).get("provenance")
                except (ValueError, AttributeError, RecursionError):  # RecursionError: nested too deep
                    return None  # the builder's own row checks report a broken row; the card just says less
                return provenance if isinstance(provenance, dict) else None
    return None


def _review(work: Path, rounds_run: dict[str, int]) -> dict[str, Any] | None:
    """The review's counts, and the batches it sent back that the run has not translated again yet."""
    summary = _read_json(review_dir(work) / REVIEW_SUMMARY)
    if summary is None:
        return None
    keys = ("rows_reviewed", "rows_unacceptable", "max_unacceptable", "sent_back")
    asked = _read_json(review_dir(work) / RETRANSLATE) or {}
    waiting = sorted(batch for batch, rounds in asked.items() if rounds_run.get(batch, 0) < rounds)
    return {**{key: summary.get(key) for key in keys}, "not_translated_again": waiting}


def _backtranslation(work: Path) -> dict[str, Any] | None:
    report = _read_json(backtranslation_dir(work) / RUN_REPORT)
    if report is None:
        return None
    return {key: report.get(key) for key in ("system", "rows", "of_rows", "seed", "scores", "sacrebleu")}


def translation_provenance(path: Path) -> dict[str, Any] | None:
    """What the card says about a translated source file, or None when ``path`` is not one."""
    work = work_dir_of_output(path)
    if work is None:
        return None
    run = _read_json(work / RUN_REPORT)
    if run is None:
        first = _first_row_provenance(path)
        if first is None:
            return None
        return {"file": path.name, "model": first.get("model"), "prompt_version": first.get("prompt_version"),
                "run_report": False}  # fmt: skip
    translator = run.get("translator") or {}
    made: dict[str, Any] = {"file": path.name}
    made.update(
        model=translator.get("name"),
        backend=translator.get("backend"),
        prompt_version=run.get("prompt_version"),
        source_file=Path(str(run.get("source", ""))).name or None,
        source_format=run.get("source_format"),
        batch_size=run.get("batch_size"),
        rows=run.get("rows"),
        reject_reasons=run.get("reject_reasons"),
        min_devanagari=(run.get("script_filter") or {}).get("min_devanagari"),
        class_balance=run.get("class_balance"),
        review_rounds=run.get("review_rounds"),
        review=_review(work, run.get("review_rounds") or {}),
        backtranslation=_backtranslation(work),
        run_report=True,
    )
    return made
