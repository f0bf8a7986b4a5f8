"""Where a translation run's files lie: one place for the writer (``nlue translate``) and the readers.

The builder reads this too: a source file named ``<split>.translated.jsonl`` in
``DIR/<config>/`` has its run's files in ``DIR/_translate/<config>-<split>/``, and the
dataset card says how that split was made from them (:mod:`nlue.data.translation_provenance`).
This module imports nothing of nlue's, so that the data package can read it without
reaching into the translation pipeline.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nlue.registry.spec import TaskSpec

WORK_FOLDER = "_translate"
OUTPUT_SUFFIX = ".translated.jsonl"
RUN_REPORT = "report.json"
REVIEW_SUMMARY = "verdicts.json"
RETRANSLATE = "retranslate.json"  # batch -> how many times review sent it back


def _work_dir(out: Path, config: str, split: str) -> Path:
    return out / WORK_FOLDER / f"{config}-{split}"


def output_path(out: Path, task: TaskSpec, split: str) -> Path:
    return out / task.name / f"{split}{OUTPUT_SUFFIX}"


def work_dir(out: Path, task: TaskSpec, split: str) -> Path:
    return _work_dir(out, task.name, split)


def work_dir_of_output(output: Path) -> Path | None:
    """The run folder beside a translated file (the inverse of :func:`output_path`), or None when it is not one."""
    if not output.name.endswith(OUTPUT_SUFFIX):
        return None
    return _work_dir(output.parent.parent, output.parent.name, output.name.removesuffix(OUTPUT_SUFFIX))


def review_dir(work: Path) -> Path:
    return work / "review"


def backtranslation_dir(work: Path) -> Path:
    return work / "backtranslation"
