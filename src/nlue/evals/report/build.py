"""`nlue report`: our runs laid out in the three papers' tables beside their own rows, as one static page.

:func:`build_report` reads a results folder and returns a :class:`~nlue.evals.report.types.Report`
of sections; :func:`~nlue.evals.report.render.write_report` writes it (HTML with PNG figures,
Markdown, a CSV per table) all at once. The sections, each from its own module:

* NLUE: the paper's Tables 2-5 as printed, flagged where inconsistent, with our runs; charts;
* neDIOM: Table 3 with its floors, and Figures 3-5 redrawn from our runs;
* UrduMMLU protocol: Table 4, the few-shot deltas, the STEM - Humanities gap, accuracy by level;
* tasks from task files (no paper printed them): one section per benchmark, every run's metrics with
  intervals and a chart of the task file's primary metric, never in a paper's tables or the NLUE score;
* models: monolingual vs multilingual encoders, parameters vs score;
* significance: paired tests (``nlue compare``) between the models run in one setting, per task;
* contamination, where ``nlue contamination`` left findings in a results folder: the items a corpus holds and
  every run's score on the clean items beside its score on all (ours alone);
* memorisation, where ``nlue memorisation`` left files in a results folder: per model and task, how far the test
  items stand above control text, and the exams' completions against chance (ours alone).

The tables come from the Space's boards and the registry's paper data; nothing is computed twice.
Several results folders (and sweep folders) are read together as :mod:`nlue.results_folders` says.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from nlue.boards.sections import leaderboard_of
from nlue.evals.compare.pairs import DEFAULT_RESAMPLES
from nlue.evals.report.contamination import contamination_section
from nlue.evals.report.declared import declared_sections
from nlue.evals.report.mcq import mcq_section
from nlue.evals.report.memorisation import memorisation_section
from nlue.evals.report.models import models_section
from nlue.evals.report.nediom import nediom_section
from nlue.evals.report.nlue import nlue_section
from nlue.evals.report.runs import gather
from nlue.evals.report.significance import significance_section
from nlue.evals.report.types import Report
from nlue.results_folders import describe, resolve_folders

logger = logging.getLogger(__name__)

TITLE = "nlue report: our runs beside the NLUE, neDIOM and UrduMMLU papers"
DECLARED_TITLE = ", and tasks from task files"


@dataclass(frozen=True)
class ReportOptions:
    resamples: int = DEFAULT_RESAMPLES  # the paired bootstrap's draws, as `nlue compare`
    seed: int = 0  # the paired bootstrap's seed, as `nlue compare`
    alpha: float = 0.05  # Holm-corrected p below this colours a matrix cell


def build_report(results: Path | Sequence[Path], options: ReportOptions | None = None) -> Report:
    """The report of one results folder or several (sweep folders too): every section, empty ones saying so."""
    # No pyplot and no global backend: the figures are Figure objects, drawn by Agg's canvas when written
    # (nlue.evals.report.render), so a caller's own matplotlib set-up (a notebook's, say) is left alone.
    options = options or ReportOptions()
    folders = resolve_folders([results] if isinstance(results, str | Path) else results)
    gathered = gather(folders)
    board = leaderboard_of(folders)  # NLUE's rows, the paper's first: read once for two sections
    exams, exams_skipped = mcq_section(folders, gathered)
    idioms, idioms_skipped = nediom_section(folders, gathered)
    declared, declared_skipped = declared_sections(folders, gathered)
    contamination, contamination_skipped = contamination_section(folders)  # None without findings
    memorisation, memorisation_skipped = memorisation_section(folders)  # None without memorisation files
    sections = [
        nlue_section(board, gathered),
        idioms,
        exams,
        *declared,
        models_section(board),
        significance_section(gathered, options.resamples, options.seed, options.alpha),
        *([contamination] if contamination is not None else []),
        *([memorisation] if memorisation is not None else []),
    ]
    logger.info("report of %s: %d results files", describe(folders), len(gathered.files))
    return Report(
        title=TITLE + (DECLARED_TITLE if declared else ""),
        results_dir=describe(folders),
        sections=sections,
        sample_files=gathered.sample_count(),
        total_files=len(gathered.files),
        skipped=[
            *board.skipped,
            *exams_skipped,
            *idioms_skipped,
            *declared_skipped,
            *contamination_skipped,
            *memorisation_skipped,
        ],
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )
