"""The memorisation table: what `nlue memorisation` measured, per model, dataset and task, for the report and the Space.

``nlue memorisation`` writes one file per model and dataset into the results folder
(``<results>/memorisation/<model>/<dataset>.json``); the Space mirrors it with the results files. Each file
is outside input when read: :func:`~nlue.evals.memorisation.probes_file.read_probes` bounds it, checks every
field and recomputes each summary's point numbers from the items. A file it refuses costs its own rows only,
listed with the reason (by its place in the results folder, never a machine's path).

One row per file and task: the items probed and compared, the control texts, Min-K%++'s AUC of items against
controls with its interval, the share of items above the controls' 95th percentile, Min-K%'s and mean log p's
AUC, and for an exam the share of questions completed word for word and the mean overlap, each beside what
another question's second half gives (chance). The numbers are the file's, whose points the reader has just
recomputed; none is computed a second way here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from nlue.boards.table import TableBoard, data_label
from nlue.evals.memorisation.probes_file import BadProbesFile, probe_files, read_probes
from nlue.results_folders import ResultsFolder

logger = logging.getLogger(__name__)

MAX_FILES = 200  # memorisation files read per results folder; more are named as skipped
NAME_CHARS = 200  # a model, dataset or task name from a file, as far as it is shown
COLUMNS: tuple[str, ...] = ("model", "data", "task", "items", "compared", "control texts", "controls",
                            "Min-K%++ AUC", "95% CI (AUC)", "above ctrl p95 (%)", "Min-K% AUC", "log p AUC",
                            "exam exact (%)", "exact by chance (%)", "exam overlap (%)", "overlap by chance (%)",
                            "file")  # fmt: skip
LEGEND = (
    "**Memorisation probes (ours).** Where `nlue memorisation` probed a causal LM, each test item is scored by "
    "Min-K%++ (Zhang et al., arXiv 2404.02936) and held against control texts of its length and script that the "
    "model cannot have been tested on. *AUC*: the chance that an item scores above a control (0.5: no difference), "
    "with a 95% bootstrap interval; *above ctrl p95*: the share of items above the controls' 95th percentile "
    "(about 5% by chance). For exams, *exact* and *overlap* say how often the model wrote a question's second half "
    "from its first, beside the same against another question's (chance). High numbers say the model finds the "
    "items familiar; low ones do NOT show the items unseen (read, then forgotten; read in English; too small a "
    "model). Few control texts make any of it uncertain."
)


@dataclass
class MemorisationBoard:
    table: TableBoard
    skipped: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """No file could be read: nothing to show (the refused ones are still listed where files left out are)."""
        return not self.table.rows


def _text(value: Any) -> str:
    """A name from a file, bounded; an absolute local path by its own name (no machine's folder layout shown)."""
    text = str(value)[:NAME_CHARS]
    return PurePath(text).name if PurePath(text).is_absolute() else text


def _model_name(value: Any) -> str:
    """A model as the probes named it (``hf:<folder or Hub id>``): a local folder by its own name."""
    return _text(str(value).removeprefix("hf:").rstrip("/"))


def _round(value: Any, digits: int = 3) -> float | None:
    return None if value is None else round(float(value), digits)


def _percent(value: Any) -> float | None:
    return None if value is None else round(100.0 * float(value), 1)


def _interval(summary: Mapping[str, Any]) -> str:
    low, high = summary.get("auc_ci_low"), summary.get("auc_ci_high")
    return f"{low:.2f}–{high:.2f}" if isinstance(low, float | int) and isinstance(high, float | int) else ""


def _rows(data: Mapping[str, Any], shown_path: str) -> list[dict[str, Any]]:
    model = data.get("model") if isinstance(data.get("model"), Mapping) else {}
    dataset = data.get("dataset") if isinstance(data.get("dataset"), Mapping) else {}
    settings = data.get("settings") if isinstance(data.get("settings"), Mapping) else {}
    label = data_label(dataset)
    rows = []
    for task, entry in data["tasks"].items():
        summary = entry["summary"]
        minkpp = summary["minkpp"]
        completion = (entry.get("completion") or {}).get("summary") or {}
        rows.append({
            "model": _model_name(model.get("name", "?")), "data": _text(label), "task": _text(task),
            "items": summary["items"], "compared": summary["compared"], "control texts": summary["control_texts"],
            "controls": _text(settings.get("controls", "?")), "Min-K%++ AUC": _round(minkpp["auc"]),
            "95% CI (AUC)": _interval(minkpp), "above ctrl p95 (%)": _percent(minkpp["above_p95"]),
            "Min-K% AUC": _round(summary["mink"]["auc"]), "log p AUC": _round(summary["loglik"]["auc"]),
            "exam exact (%)": _percent(completion.get("exact")),
            "exact by chance (%)": _percent(completion.get("control_exact")),
            "exam overlap (%)": _percent(completion.get("overlap")),
            "overlap by chance (%)": _percent(completion.get("control_overlap")),
            "file": shown_path,
        })  # fmt: skip
    return rows


def _named(folder: ResultsFolder, name: str) -> str:
    return f"{folder.label}/{name}" if folder.label else name


def memorisation_board_of(folders: Sequence[ResultsFolder]) -> MemorisationBoard:
    """The rows of every memorisation file of the folders, and the files refused, each with its reason."""
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    for folder in folders:
        paths = probe_files(folder.path)
        skipped += [_named(folder, f"{p.relative_to(folder.path).as_posix()}: not read (more than {MAX_FILES} memorisation "
                          "files)") for p in paths[MAX_FILES:]]  # fmt: skip
        for path in paths[:MAX_FILES]:
            where = path.relative_to(folder.path).as_posix()
            try:
                rows += _rows(read_probes(path), _named(folder, where))
            except BadProbesFile as exc:
                logger.warning("memorisation file left out: %s", exc)
                skipped.append(_named(folder, f"{where}: {str(exc).removeprefix(f'{path}: ')}"))
    return MemorisationBoard(TableBoard(COLUMNS, rows), skipped)


def load_memorisation_board(results_dir: Path) -> MemorisationBoard:
    """:func:`memorisation_board_of` of one results folder."""
    return memorisation_board_of([ResultsFolder(Path(results_dir), Path(results_dir))])
