"""Run GMET end to end: predict, judge automatically, score, and write every output of a run.

Outputs of one run, in its ``out`` folder:

* ``predictions.csv`` / ``predictions.jsonl`` - the run's record, one row per item, with
  the listed answers and the automatic verdict (see :mod:`nlue.gmet.judging`);
* ``judging/sheet.csv`` and ``judging/sheet_key.json`` - the blind sheet for native
  speakers (sentence and word only, shuffled) and its private key (:mod:`nlue.gmet.sheet`);
* ``categories.csv`` / ``categories.md`` - per-category (and per-theme) accuracy;
* ``gmet_categories.png`` - the 75 categories grouped and coloured by thematic area;
* ``run.json`` - model, settings, dataset, metrics and per-category accuracy;

and the shared results file ``<results_dir>/<model slug>/gmet.json`` that the
leaderboard reads (``kind`` "zero-shot" for masked LMs, "baseline" for baselines,
"diagnostic" for the answer-ranked diagnostic, whose results go to a folder of their
own). Every GMET result says how its verdicts were reached: ``verdicts`` is
"automatic" (exact match with the listed answers) or "human" (native speakers' majority,
as in the paper). The two are not comparable.

When some items list no acceptable answers (a release with sentences only, as the
paper's), there is no automatic score: the run writes its predictions and the sheet,
and the score comes from the judges (``nlue gmet --judgments``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from nlue.gmet.items import GmetItem, ItemPrediction
from nlue.gmet.report import category_rows, chart_title, plot_categories, write_category_csv, write_category_markdown
from nlue.gmet.sheet import DEFAULT_SHEET_SEED

logger = logging.getLogger(__name__)

AUTOMATIC_RULE = "automatic: the top-1 predicted word equals one of the acceptable answers after normalize_answer"
AUTOMATIC, HUMAN = "automatic", "human"
DIAGNOSTIC_KIND = "diagnostic"
ANSWER_RANKED = "answer-ranked"
DIAGNOSTIC_NOTE = (
    "DIAGNOSTIC (answer-ranked): the item's listed answers were ranked beside the model's own proposals, "
    "so the model got credit for words it did not propose. Not a GMET score; never part of the NLUE score."
)
SAMPLE_NOTE = "SAMPLE DATA (items written by the nlue developers): these scores mean nothing about a model."
CHART_NAME = "gmet_categories.png"


class Predictor(Protocol):
    name: str
    kind: str

    def predict(self, items: Sequence[GmetItem]) -> list[ItemPrediction]: ...

    def settings(self) -> Mapping[str, Any]: ...


@dataclass
class GmetRun:
    """Everything one scored GMET run produced."""

    model: str
    kind: str
    items: list[GmetItem]
    predictions: list[ItemPrediction]
    verdicts: list[int] | None  # 0/1 per item: automatic, or the judges' majority; None: not scored yet
    metrics: dict[str, Any]  # score_task output (floats, plus category_accuracy); empty when not scored
    dataset: dict[str, Any]
    settings: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    verdict_source: str = AUTOMATIC_RULE
    notes: list[str] = field(default_factory=list)
    seed: int | None = None

    @property
    def is_sample(self) -> bool:
        return bool(self.dataset.get("is_sample"))

    @property
    def verdict_kind(self) -> str:
        """How the verdicts were reached: "automatic" or "human"."""
        return AUTOMATIC if self.verdict_source == AUTOMATIC_RULE else HUMAN

    @property
    def is_diagnostic(self) -> bool:
        return self.kind == DIAGNOSTIC_KIND

    @property
    def float_metrics(self) -> dict[str, float]:
        return {k: float(v) for k, v in self.metrics.items() if isinstance(v, float | int) and not isinstance(v, bool)}


def make_predictor(model: str, **options: Any) -> Predictor:
    """A predictor for a fill-mask checkpoint (Hub id or path) or a ``baseline:...`` name, from the model layer."""
    from nlue.lm.backends import WORD_PREDICTOR
    from nlue.lm.factory import load_model
    from nlue.lm.spec import ModelSpec

    spec = ModelSpec(model, show_progress=options.pop("show_progress", True))
    return load_model(spec, WORD_PREDICTOR, **options)


def dataset_info(dataset: str | None, split: str, n_items: int, limit: int | None = None) -> dict[str, Any]:
    from nlue.data.access import dataset_description

    info = dataset_description(dataset, "gmet", split, items=n_items)
    if limit is not None:
        info["limit"] = limit
    return info


def score_verdicts(
    items: Sequence[GmetItem], verdicts: Sequence[int], bootstrap_resamples: int | None, seed: int | None
) -> dict[str, Any]:
    """A, E, C, sigma (with CIs) and per-category accuracy through nlue.scores.score_task."""
    from nlue.scores import score_task

    return score_task(
        "gmet",
        [""] * len(items),
        list(verdicts),
        categories=[item.category for item in items],
        bootstrap_resamples=bootstrap_resamples or None,
        seed=seed,
    )


def evaluate(
    predictor: Predictor,
    items: Sequence[GmetItem],
    dataset: Mapping[str, Any],
    *,
    bootstrap_resamples: int | None = 1000,
    seed: int | None = 42,
) -> GmetRun:
    """Predict every item, judge each top-1 word automatically, and score the run."""
    from nlue.scores import score_task
    from nlue.scoring import judge_predictions

    started = time.perf_counter()
    predictions = predictor.predict(items)
    seconds = time.perf_counter() - started
    words = [p.prediction for p in predictions]
    answers = [list(item.answers) for item in items]
    unlisted = sum(1 for a in answers if not a)
    verdicts: list[int] | None = None
    metrics: dict[str, Any] = {}
    notes = []
    if unlisted:
        notes.append(
            f"No automatic score: {unlisted} of {len(items)} items list no acceptable answers; "
            "have the judging sheet judged and run `nlue gmet --judgments`."
        )
    else:
        # The automatic verdict and the scores both come from the shared scoring code.
        verdicts = [int(v) for v in judge_predictions(words, answers)]
        metrics = score_task(
            "gmet",
            words,
            answers,
            categories=[item.category for item in items],
            bootstrap_resamples=bootstrap_resamples or None,
            seed=seed,
        )
    kind = predictor.kind
    if getattr(predictor, "answer_candidates", False):
        kind = DIAGNOSTIC_KIND
        notes.insert(0, DIAGNOSTIC_NOTE)
    if dataset.get("is_sample"):
        notes.append(SAMPLE_NOTE)
    if predictor.kind == "baseline":
        from nlue.lm.backends import WORD_BASELINES
        from nlue.lm.baselines.ngram import CORPUS_NOTE

        notes.append(f"{predictor.name}: {WORD_BASELINES.get(predictor.name, 'baseline')}; {CORPUS_NOTE}.")
    if dataset.get("limit") is not None:
        notes.append(f"Only the first {len(items)} items were scored (--limit).")
    return GmetRun(
        model=predictor.name,
        kind=kind,
        items=list(items),
        predictions=predictions,
        verdicts=verdicts,
        metrics=metrics,
        dataset=dict(dataset),
        settings=dict(predictor.settings()),
        timings={
            "predict_seconds": round(seconds, 3),
            "items_per_second": round(len(items) / max(seconds, 1e-9), 2),
        },
        notes=notes,
        seed=seed,
    )


def run_result(run: GmetRun) -> Any:
    """The run as a shared-format :class:`nlue.results.RunResult`."""
    from nlue.registry.tasks import TASKS
    from nlue.results import RunResult

    details = {"category_accuracy": run.metrics.get("category_accuracy", {}), "verdict_rule": run.verdict_source}
    if run.is_diagnostic:
        details["diagnostic"] = ANSWER_RANKED
    return RunResult(
        task="gmet",
        model=run.model,
        kind=run.kind,
        verdicts=run.verdict_kind,
        metrics=run.float_metrics,
        dataset=dict(run.dataset),
        hyperparameters={**run.settings, "verdicts": run.verdict_source},
        seed=run.seed,
        timings=dict(run.timings),
        paper_reference=TASKS["gmet"].paper_reference(run.model),
        details=details,
        notes=" ".join([*run.notes, "Per-category accuracy: categories.csv in the run's output folder."]),
    )


def item_rows(
    run: GmetRun,
    automatic: Sequence[int | None] | None = None,
    extra: Sequence[Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """One row per item: the run's record, and the judged table's rows.

    ``automatic`` overrides the automatic verdicts (a judged run's own verdicts are the
    judges'; the record keeps the automatic ones); ``extra`` adds columns per item (each
    judge's verdict, the majority). ``automatic`` is empty where there is none.
    """
    rows = []
    if automatic is None:
        automatic = run.verdicts if run.verdicts is not None else [None] * len(run.items)
    extra = extra if extra is not None else [{}] * len(run.items)
    for item, prediction, verdict, more in zip(run.items, run.predictions, automatic, extra, strict=True):
        rows.append(
            {
                "id": item.id,
                "category": item.category,
                "theme": item.theme,
                "sentence": item.sentence,
                "filled": item.filled(prediction.prediction) if prediction.prediction else "",
                "prediction": prediction.prediction,
                "top_k": list(prediction.top_k),
                "top_k_scores": list(prediction.scores),
                "top_k_pieces": list(prediction.pieces),
                "answers": list(item.answers),
                "automatic": "" if verdict is None or verdict == "" else int(verdict),
                **more,
            }
        )
    return rows


def write_run(
    run: GmetRun,
    out: Path,
    *,
    results_dir: Path | None = None,
    name: str | None = None,
    judging_files: bool = True,
    sheet_seed: int = DEFAULT_SHEET_SEED,
    sheet_reference: bool = False,
    identity: dict[str, Any] | None = None,
    overwrite: bool = False,
) -> dict[str, Path]:
    """Write the run's outputs to ``out`` (and its results file to ``results_dir``); return their paths.

    ``judging_files`` writes the record files and the blind sheet (shuffled with
    ``sheet_seed``; ``sheet_reference`` adds the listed answers, which makes it not blind).
    A run without verdicts (items without listed answers) gets no tables, chart or results file.
    """
    from nlue.gmet.judging import write_record_files
    from nlue.gmet.sheet import SheetItem, SheetRun, write_sheet
    from nlue.lm.slug import model_slug
    from nlue.predictions import attach
    from nlue.results import write_json_atomic, write_result
    from nlue.run_identity import identity_key

    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    if judging_files:
        paths["csv"], paths["jsonl"] = write_record_files(item_rows(run), out)
        sheet_run = SheetRun(
            "run1",
            str(out.resolve()),
            run.model,
            tuple(
                SheetItem(item.id, item.sentence, prediction.prediction, item.answers)
                for item, prediction in zip(run.items, run.predictions, strict=True)
            ),
        )
        paths["sheet"], paths["sheet_key"] = write_sheet(
            [sheet_run], out / "judging", seed=sheet_seed, reference=sheet_reference
        )
    if run.verdicts is not None:
        rows = category_rows([item.category for item in run.items], run.verdicts)
        paths["categories_csv"] = write_category_csv(out / "categories.csv", rows)
        title = f"GMET: {run.model} ({run.kind}, {run.verdict_kind} verdicts)"
        paths["categories_md"] = write_category_markdown(
            out / "categories.md", rows, title=title, metrics=run.metrics, notes=[run.verdict_source, *run.notes]
        )
        title = chart_title(run.model, run.metrics, len(run.items), is_sample=run.is_sample, verdicts=run.verdict_kind)
        if run.is_diagnostic:
            title = f"DIAGNOSTIC (answer-ranked), not a GMET score\n{title}"
        try:
            paths["chart"] = plot_categories(out / CHART_NAME, rows, title, accuracy=run.metrics.get("accuracy"))
        except ImportError:
            logger.warning("no chart: matplotlib is not installed (pip install 'nlue[plots]')")
    summary = {
        "model": run.model,
        "kind": run.kind,
        "dataset": run.dataset,
        "settings": run.settings,
        "verdicts": run.verdict_kind if run.verdicts is not None else None,
        "verdict_rule": run.verdict_source,
        "metrics": run.metrics,
        "timings": run.timings,
        "notes": run.notes,
        "seed": run.seed,
    }
    paths["run"] = write_json_atomic(out / "run.json", summary)
    if results_dir is not None and run.verdicts is not None:
        result = run_result(run)
        if identity is not None:
            result.identity, result.identity_key = identity, identity_key(identity)
        folder = name or model_slug(result.model)
        paths["predictions"] = attach(result, prediction_rows_of(run), Path(results_dir), folder)
        paths["result"] = write_result(result, Path(results_dir), folder, overwrite=overwrite)
    return paths


def prediction_rows_of(run: GmetRun) -> list[dict[str, Any]]:
    """The run's per-item rows in the shared schema (nlue.predictions): the top word, the ranking, the verdict."""
    from nlue.predictions import prediction_rows
    from nlue.registry.tasks import TASKS

    items = [{"idx": item.id, "sentence": item.sentence} for item in run.items]
    verdicts = run.verdicts if run.verdicts is not None else [None] * len(run.items)
    extras = [
        {
            "top_k": p.top_k,
            "scores": [round(float(v), 5) for v in p.scores],
            "verdict": verdict,
            "category": item.category,
        }
        for item, p, verdict in zip(run.items, run.predictions, verdicts, strict=True)
    ]
    golds = [list(item.answers) for item in run.items]
    return prediction_rows(TASKS["gmet"], items, [p.prediction for p in run.predictions], golds, extras)
