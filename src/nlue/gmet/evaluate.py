"""Run GMET end to end: predict, judge automatically, score, and write every output of a run.

Outputs of one run, in its ``out`` folder:

* ``predictions.csv`` / ``predictions.jsonl`` - one row per item, the judging files
  (see :mod:`nlue.gmet.judging`), with an empty ``judgment`` column for native speakers;
* ``categories.csv`` / ``categories.md`` - per-category (and per-theme) accuracy;
* ``gmet_categories.png`` - the 75 categories grouped and coloured by thematic area;
* ``run.json`` - model, settings, dataset, metrics and per-category accuracy;

and the shared results file ``<results_dir>/<model slug>/gmet.json`` that the
leaderboard reads (``kind`` "zero-shot" for masked LMs, "baseline" for baselines).
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

logger = logging.getLogger(__name__)

AUTOMATIC_RULE = "automatic: the top-1 predicted word equals one of the acceptable answers after normalize_answer"
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
    verdicts: list[int]  # 0/1 per item: automatic, or the judges' majority
    metrics: dict[str, Any]  # score_task output (floats, plus category_accuracy)
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
    def float_metrics(self) -> dict[str, float]:
        return {k: float(v) for k, v in self.metrics.items() if isinstance(v, float | int) and not isinstance(v, bool)}


def make_predictor(model: str, **options: Any) -> Predictor:
    """A predictor for a fill-mask checkpoint (Hub id or path) or a ``baseline:...`` name."""
    from nlue.gmet import baseline as baselines

    if baselines.is_baseline(model):
        baselines.check_baseline(model)
        if model == "baseline:tiny-mlm":
            from nlue.gmet.mlm import MaskedLMPredictor

            path = baselines.tiny_mlm_baseline_path()
            predictor = MaskedLMPredictor.from_pretrained(str(path), **options)
            predictor.name, predictor.kind = model, "baseline"
            return predictor
        keep = {k: options[k] for k in ("top_k", "answer_candidates") if k in options}
        return baselines.NgramBaseline(model, list(baselines.corpus_texts()), **keep)
    from nlue.gmet.mlm import MaskedLMPredictor

    return MaskedLMPredictor.from_pretrained(model, **options)


def dataset_info(dataset: str | None, split: str, n_items: int, limit: int | None = None) -> dict[str, Any]:
    from nlue.data_access import is_sample, resolve_dataset

    info = {
        "id": dataset or "nlue sample data",
        "path": resolve_dataset(dataset),
        "config": "gmet",
        "split": split,
        "is_sample": is_sample(dataset),
        "items": n_items,
    }
    if limit is not None:
        info["limit"] = limit
    return info


def score_verdicts(
    items: Sequence[GmetItem], verdicts: Sequence[int], bootstrap_resamples: int | None, seed: int | None
) -> dict[str, Any]:
    """A, E, C, sigma (with CIs) and per-category accuracy through nlue.scoring.score_task."""
    from nlue.scoring import score_task

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
    from nlue.scoring import judge_predictions, score_task

    started = time.perf_counter()
    predictions = predictor.predict(items)
    seconds = time.perf_counter() - started
    words = [p.prediction for p in predictions]
    answers = [list(item.answers) for item in items]
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
    notes = []
    if dataset.get("is_sample"):
        notes.append(SAMPLE_NOTE)
    if predictor.kind == "baseline":
        from nlue.gmet.baseline import BASELINES, CORPUS_NOTE

        notes.append(f"{predictor.name}: {BASELINES.get(predictor.name, 'baseline')}; {CORPUS_NOTE}.")
    if dataset.get("limit") is not None:
        notes.append(f"Only the first {len(items)} items were scored (--limit).")
    return GmetRun(
        model=predictor.name,
        kind=predictor.kind,
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
    from nlue.results import RunResult
    from nlue.tasks import TASKS

    details = {"category_accuracy": run.metrics.get("category_accuracy", {}), "verdicts": run.verdict_source}
    return RunResult(
        task="gmet",
        model=run.model,
        kind=run.kind,
        metrics=run.float_metrics,
        dataset=dict(run.dataset),
        hyperparameters={**run.settings, "verdicts": run.verdict_source},
        seed=run.seed,
        timings=dict(run.timings),
        paper_reference=TASKS["gmet"].paper_reference(run.model),
        details=details,
        notes=" ".join([*run.notes, "Per-category accuracy: categories.csv in the run's output folder."]),
    )


def item_rows(run: GmetRun) -> list[dict[str, Any]]:
    """One row per item: the judging file's content (judgment left empty)."""
    rows = []
    for item, prediction, verdict in zip(run.items, run.predictions, run.verdicts, strict=True):
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
                "automatic": int(verdict),
                "judgment": "",
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
) -> dict[str, Path]:
    """Write the run's outputs to ``out`` (and its results file to ``results_dir``); return their paths."""
    from nlue.gmet.judging import write_judging_files
    from nlue.results import write_json_atomic, write_result

    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    if judging_files:
        paths["csv"], paths["jsonl"] = write_judging_files(item_rows(run), out)
    rows = category_rows([item.category for item in run.items], run.verdicts)
    paths["categories_csv"] = write_category_csv(out / "categories.csv", rows)
    title = f"GMET: {run.model} ({run.kind})"
    paths["categories_md"] = write_category_markdown(
        out / "categories.md", rows, title=title, metrics=run.metrics, notes=[run.verdict_source, *run.notes]
    )
    verdict_word = "automatic" if run.verdict_source == AUTOMATIC_RULE else "human"
    title = chart_title(run.model, run.metrics, len(run.items), is_sample=run.is_sample, verdicts=verdict_word)
    try:
        paths["chart"] = plot_categories(out / CHART_NAME, rows, title, accuracy=run.metrics.get("accuracy"))
    except ImportError:
        logger.warning("no chart: matplotlib is not installed (pip install 'nlue[plots]')")
    summary = {
        "model": run.model,
        "kind": run.kind,
        "dataset": run.dataset,
        "settings": run.settings,
        "verdicts": run.verdict_source,
        "metrics": run.metrics,
        "timings": run.timings,
        "notes": run.notes,
        "seed": run.seed,
    }
    paths["run"] = write_json_atomic(out / "run.json", summary)
    if results_dir is not None:
        paths["result"] = write_result(run_result(run), Path(results_dir), name)
    return paths
