"""The results file format shared by the trainers, the GMET evaluator, baselines and the leaderboard.

One JSON file per (model, task) run, under ``<results_dir>/<model slug>/<task>.json``.
Written atomically (temporary file, then rename) so that a reader never sees half a file, and as
strict JSON (:mod:`nlue.strict_json`): a metric that cannot be computed is ``null``, with the reason
in ``details.null_metrics``. A file records its run's identity (:mod:`nlue.run_identity`), and
:func:`write_result` refuses to replace a complete result with a partial one, or a result with one
of another identity, unless told to (``overwrite``, ``--overwrite`` on the command line).
"""

from __future__ import annotations

import json
import logging
import math
import os
import platform
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from nlue.atomic_files import write_text_atomic
from nlue.errors import NlueError
from nlue.lm.slug import model_slug
from nlue.registry.tasks import get_task
from nlue.results_files import BadResultsFile, read_json_object
from nlue.run_identity import identity_key, replacement_refusal
from nlue.scores.overall import primary_score
from nlue.scoring.undefined import null_metrics
from nlue.strict_json import dumps

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
_PACKAGES = ("nlue", "torch", "transformers", "datasets", "evaluate", "peft", "accelerate", "huggingface_hub")


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


@dataclass
class RunResult:
    """One model scored on one task."""

    task: str
    model: str  # Hub id or path of the scored model
    kind: str  # "fine-tune", "zero-shot", "baseline", "diagnostic" (never in the NLUE score)
    # test metrics, plain floats on a 0-1 scale, with *_ci_low/_ci_high when bootstrapped; None (null) for a
    # metric that cannot be computed, its reason in details["null_metrics"]
    metrics: dict[str, float | None]
    primary_metric: str = ""
    primary_score: float | None = None
    # GMET: "automatic" (exact match with listed answers) or "human" (native speakers, as the paper); not comparable
    verdicts: str | None = None
    # Where the primary metric comes from (the paper, or an nlue convention): said in every file
    primary_note: str = ""
    base_model: str | None = None
    dataset: dict[str, Any] = field(default_factory=dict)  # id, config, split, is_sample
    # everything that changes the numbers (nlue.run_identity): model and its fingerprint, endpoint, mode, shots,
    # prompt language, limit, seed, dataset fingerprint, ...; identity_key is its short hash
    identity: dict[str, Any] | None = None
    identity_key: str | None = None
    preset: str | None = None
    lora: dict[str, Any] | None = None
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    validation_metrics: dict[str, float] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    paper_reference: dict[str, Any] | None = None
    details: dict[str, Any] = field(default_factory=dict)  # non-numeric extras, e.g. GMET category_accuracy
    predictions: str | None = None  # the per-item predictions file beside this one (nlue.predictions)
    notes: str = ""
    versions: dict[str, str] = field(default_factory=package_versions)
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        spec = get_task(self.task)
        self.primary_metric = self.primary_metric or spec.primary_metric
        self.primary_note = self.primary_note or spec.primary_note
        self.metrics, reasons = null_metrics(self.metrics, (self.details or {}).get("null_metrics"))
        self.details = {k: v for k, v in (self.details or {}).items() if k != "null_metrics"}
        if reasons:  # why each null metric is null; only those of this result's metrics
            self.details["null_metrics"] = reasons
        if self.primary_score is None:
            self.primary_score = primary_from_metrics(self.task, self.metrics)
        if self.identity is not None:
            self.identity_key = identity_key(self.identity)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def file_name(self) -> str:
        """``<task>.json``; human-judged GMET scores sit beside the automatic ones as ``gmet.human.json``."""
        return f"{self.task}.human.json" if self.verdicts == "human" else f"{self.task}.json"

    @property
    def predictions_name(self) -> str:
        """The per-item predictions file beside the results file: ``<task>[.human].predictions.jsonl``."""
        return self.file_name.removesuffix(".json") + ".predictions.jsonl"


def primary_from_metrics(task: str, metrics: Mapping[str, float | None]) -> float | None:
    """The task's primary score from a metrics dict, or None when the metrics lack it or it is null."""
    try:
        value = primary_score(task, metrics)
    except (ValueError, TypeError):  # missing (NlueError), or null (float(None))
        return None
    return value if math.isfinite(value) else None


def write_json_atomic(path: Path, data: Any) -> Path:
    """``data`` as strict JSON (no NaN or Infinity: :mod:`nlue.strict_json`), written whole or not at all."""
    return write_text_atomic(path, dumps(data, where=str(path), indent=2) + "\n")


RESULTS_VARIABLE = "NLUE_RESULTS_DIR"
# The folder of a results folder where `nlue contamination` writes what it found about the data: not runs.
CONTAMINATION_FOLDER = "contamination"
# The folder where `nlue memorisation` writes its probes of a model against the test items: not runs either.
MEMORISATION_FOLDER = "memorisation"
NOT_RUN_FOLDERS = (CONTAMINATION_FOLDER, MEMORISATION_FOLDER)
# What `nlue train` writes beside its checkpoint (nlue.training.run): the same results as <results_dir>/<run>/<task>.json.
CHECKPOINT_COPY = "nlue_results.json"
DEFAULT_RESULTS = Path("build") / "results"


def default_results_dir() -> Path:
    """Where every command writes results when not told: ``$NLUE_RESULTS_DIR``, else ``build/results``.

    One folder for every command (train, search, evaluate, baseline, gmet, llm, idioms, the
    quickstart), and the one ``nlue space`` reads by default, so a run shows up in the Space
    without options. ``--results-dir`` chooses another.
    """
    return Path(os.environ.get(RESULTS_VARIABLE) or DEFAULT_RESULTS)


RESULTS_DIR_HELP = (
    f"folder of results files (default: ${RESULTS_VARIABLE}, else {DEFAULT_RESULTS}: what `nlue space` reads)"
)


def result_path(result: RunResult, results_dir: Path, name: str | None = None) -> Path:
    """``<results_dir>/<model slug>/<task>.json`` (see ``RunResult.file_name``)."""
    return Path(results_dir) / (name or model_slug(result.model)) / result.file_name


OVERWRITE_HELP = (
    "replace a results file that holds a complete run with a partial one, or a run of another identity "
    "(another model revision, endpoint, dataset, seed, ...); without it such a run is refused before it starts"
)


class ResultExists(NlueError):
    """A results file that a run may not replace (:func:`check_replace`); the CLI exits 2."""


def check_replace(path: Path, identity: Mapping[str, Any] | None, *, overwrite: bool = False) -> None:
    """Refuse (:class:`ResultExists`) to replace the results file ``path`` with a run of ``identity`` when
    :func:`nlue.run_identity.replacement_refusal` says no, unless ``overwrite``. Commands call it before their
    first request, so a refused run costs nothing; :func:`write_result` calls it again before it writes."""
    path = Path(path)
    if overwrite or identity is None or not path.is_file():
        return
    try:
        existing = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        logger.warning("%s is not a readable results file (%s); it will be replaced", path, exc)
        return
    reason = replacement_refusal(existing, identity)
    if reason:
        raise ResultExists(
            f"{path} was not replaced: {reason}. Give this run a results name of its own, or add --overwrite to "
            "replace that file"
        )


def task_result_path(results_dir: Path, name: str, task: str) -> Path:
    """``<results_dir>/<name>/<task>.json``: where a run's results file goes (before its result exists)."""
    return Path(results_dir) / name / f"{task}.json"


def write_result(result: RunResult, results_dir: Path, name: str | None = None, *, overwrite: bool = False) -> Path:
    """Write ``result`` to :func:`result_path` (after :func:`check_replace`) and return the path."""
    path = result_path(result, results_dir, name)
    check_replace(path, result.identity, overwrite=overwrite)
    write_json_atomic(path, result.to_dict())
    logger.info("wrote %s", path)
    return path


NOT_RESULTS = "not an nlue results file"  # the start of read_results' reason for a JSON file that is no run


def read_results(
    results_dir: Path, on_skip: Callable[[Path, str], object] | None = None
) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every readable results file under ``results_dir``, read under the limits of :mod:`nlue.results_files`.

    A file that cannot be read, breaks a limit or is not an nlue results file is logged and skipped;
    ``on_skip(path, reason)`` hears of each one, so that a table can list it with its reason.
    """
    root = Path(results_dir)
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*.json")):
        if path.relative_to(root).parts[0] in NOT_RUN_FOLDERS:
            continue  # nlue contamination's findings and nlue memorisation's probes, each read by its own module
        try:
            data = read_json_object(path)
        except BadResultsFile as exc:
            reason = str(exc).removeprefix(f"{path}: ")
            logger.warning("skipping unreadable results file %s: %s", path, reason)
            if on_skip is not None:
                on_skip(path, reason)
            continue
        if data.get("schema_version") != SCHEMA_VERSION or "task" not in data:
            reason = f"{NOT_RESULTS} (no task, or schema_version other than {SCHEMA_VERSION})"
            logger.warning("skipping %s: %s", path, reason)
            if on_skip is not None:
                on_skip(path, reason)
            continue
        if path.name == CHECKPOINT_COPY:  # beside a checkpoint, a copy of a run whose results file is elsewhere
            logger.info("skipping %s: a checkpoint's own copy of its results, not a run", path)
            continue
        yield path, data
