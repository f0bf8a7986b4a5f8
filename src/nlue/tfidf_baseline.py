"""The non-neural baseline ``baseline:tfidf``: TF-IDF character n-grams and a linear model.

A floor every encoder should clear, trained in seconds on two CPU cores. Decisions:

* **Input** is what the task's kind forms (``task.kind.text_pair``): one text, a text pair,
  or WinoGrande's two readings. Each text is analysed after
  :func:`nlue.data.normalize.normalize_text` (built data is already normalised; it is
  idempotent and cheap, so a user's own ``DatasetDict`` is read the same way).
* **Features**: TF-IDF over ``char_wb`` n-grams of 1-5 code points with sublinear term
  frequency. Devanagari writes an akshara as 1-4 code points (consonant, virama, vowel
  sign), so 5 code points span one or two aksharas: postpositions and suffixes (ले, लाई,
  मा, को, हरू) and word stems become features with no tokenizer, and spelling variants
  share most of their n-grams. No ``strip_accents``: its NFKD pass drops combining marks,
  which in Devanagari are the vowel signs and the virama. The vocabulary is capped at
  the most frequent ``MAX_FEATURES`` n-grams to bound memory on the full datasets.
* **Pairs** share one vocabulary and get ``[a, b, a*b, |a-b|, cos(a, b), jaccard]``:
  each side, the n-grams they share (the elementwise product), the n-grams only one
  has (the absolute difference), the cosine of the two TF-IDF vectors and the Jaccard
  overlap of their word sets. A linear model on ``a`` and ``b`` alone cannot see overlap,
  which is most of what MNLI, QQP, MRPC and STS-B can offer a bag of n-grams.
* **Models**: kinds with classes get a LogisticRegression with balanced class weights
  (the primary metric is macro-F1, so minority classes count as much as the majority);
  the regression kind gets a Ridge whose predictions are clipped to the task's
  ``score_range``.
* **Selection**: C (or alpha) from a small grid, on the validation split's primary
  metric with a model fitted on train; ties go to the stronger regularisation. The
  chosen value is then refitted on train + validation (all labelled non-test data, as
  GridSearchCV's refit does), and the test split is predicted once. The vectoriser is
  fitted once on the train + validation texts: vocabulary and IDF use no labels.
* Seeded and deterministic: lbfgs and the Ridge solvers have no randomness to speak of;
  the seed is passed on anyway and seeds the bootstrap.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import scipy.sparse as sp

from nlue.data.access import is_sample, load_task, resolve_dataset
from nlue.data.normalize import normalize_text
from nlue.errors import NlueError
from nlue.registry.tasks import TASK_NAMES, TASKS, TaskSpec, get_task
from nlue.results import RunResult, model_slug, write_result
from nlue.scoring import score_task
from nlue.text_table import text_table

logger = logging.getLogger(__name__)

MODEL_ID = "baseline:tfidf"
DEFAULT_NAME = model_slug(MODEL_ID)  # "baseline__tfidf", which the leaderboard shows as baseline:tfidf
NGRAM_RANGE: tuple[int, int] = (1, 5)
MAX_FEATURES = 200_000
C_GRID: tuple[float, ...] = (0.25, 1.0, 4.0, 16.0)  # strongest regularisation first: ties keep it
ALPHA_GRID: tuple[float, ...] = (16.0, 4.0, 1.0, 0.25)
PAIR_FEATURES: tuple[str, ...] = ("first", "second", "product", "abs_difference", "cosine", "word_jaccard")
NOTES = (
    "A non-neural floor: TF-IDF character n-grams with a linear model (logistic regression; ridge for "
    "regression), C/alpha chosen on validation, refitted on train+validation. Not a pretrained encoder."
)


def analysed_text(text: str) -> str:
    """What the vectoriser reads: the normalised text, lower-cased (Latin words only; Devanagari has no case)."""
    return normalize_text(text).lower()


def _word_jaccard(first: str, second: str) -> float:
    a, b = set(analysed_text(first).split()), set(analysed_text(second).split())
    return len(a & b) / len(a | b) if a | b else 0.0


class TfidfBaseline:
    """TF-IDF character n-grams and a linear model for one trainable task (see the module docstring)."""

    def __init__(
        self, task: TaskSpec, *, ngram_range: tuple[int, int] = NGRAM_RANGE, max_features: int = MAX_FEATURES,
        seed: int = 42,
    ) -> None:  # fmt: skip
        if not task.kind.trainable:
            raise ValueError(
                f"task {task.name!r} is a {task.kind.name} task; {task.kind.how_to_score or 'no baseline trains on it'}"
            )
        self.task = task
        self.ngram_range = ngram_range
        self.max_features = max_features
        self.seed = seed
        self.strength: float | None = None  # the chosen C (classes) or alpha (regression)
        self.selection: dict[str, float] = {}  # validation primary metric per grid value
        self.is_pair = False
        self._vectorizer: Any = None
        self._model: Any = None

    # ------------------------------------------------------------------ features
    @property
    def strength_name(self) -> str:
        return "C" if self.task.kind.has_classes else "alpha"

    def texts(self, split: datasets.Dataset) -> tuple[list[str], list[str] | None]:
        """The split's input as the task's kind forms it: first texts, and second texts for a pair."""
        return self.task.kind.batch_text_pairs(self.task, split[:])

    def labels(self, split: datasets.Dataset) -> np.ndarray:
        values = self.task.kind.training_labels(self.task, split[str(self.task.label_field)])
        return np.asarray(values, dtype=np.int64 if self.task.kind.has_classes else np.float64)

    def fit_vectorizer(self, firsts: list[str], seconds: list[str] | None) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.is_pair = seconds is not None
        self._vectorizer = TfidfVectorizer(
            analyzer="char_wb", ngram_range=self.ngram_range, preprocessor=analysed_text, sublinear_tf=True,
            max_features=self.max_features, dtype=np.float32,
        )  # fmt: skip
        # One vocabulary for both sides of a pair, so that their product and difference line up.
        self._vectorizer.fit(firsts + (seconds or []))

    def features(self, firsts: list[str], seconds: list[str] | None) -> sp.csr_matrix:
        if self._vectorizer is None:
            raise RuntimeError("fit_vectorizer() first")
        a = self._vectorizer.transform(firsts)
        if not self.is_pair:
            return a.tocsr()
        b = self._vectorizer.transform(seconds or [""] * len(firsts))
        product = a.multiply(b).tocsr()
        cosine = np.asarray(product.sum(axis=1), dtype=np.float32)  # rows are L2-normalised
        jaccard = np.array([[_word_jaccard(x, y)] for x, y in zip(firsts, seconds or [], strict=True)], np.float32)
        blocks = [a, b, product, abs(a - b), sp.csr_matrix(cosine), sp.csr_matrix(jaccard.reshape(-1, 1))]
        return sp.hstack(blocks, format="csr")

    # ------------------------------------------------------------------ models
    def _estimator(self, strength: float) -> Any:
        if self.task.kind.has_classes:
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression(C=strength, class_weight="balanced", max_iter=2000, random_state=self.seed)
        from sklearn.linear_model import Ridge

        return Ridge(alpha=strength, random_state=self.seed)

    def _fit_model(self, strength: float, x: sp.csr_matrix, y: np.ndarray) -> Any:
        from sklearn.exceptions import ConvergenceWarning

        model = self._estimator(strength)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            model.fit(x, y)
        if any(issubclass(w.category, ConvergenceWarning) for w in caught):
            logger.info("%s: the %s=%g fit stopped before converging", self.task.name, self.strength_name, strength)
        return model

    def _predict_with(self, model: Any, x: sp.csr_matrix) -> np.ndarray:
        raw = model.predict(x)
        if self.task.kind.has_classes:
            return np.asarray(raw, dtype=np.int64)
        low, high = self.task.score_range or (-math.inf, math.inf)
        return np.clip(np.asarray(raw, dtype=np.float64), low, high)

    def _validation_score(self, predictions: np.ndarray, references: np.ndarray) -> float:
        """The primary metric on validation; -inf when undefined (constant predictions have no correlation)."""
        try:
            return float(self.task.primary_from(score_task(self.task.name, predictions.tolist(), references.tolist())))
        except ValueError:
            return -math.inf

    def fit(self, train: datasets.Dataset, validation: datasets.Dataset | None) -> dict[str, float]:
        """Choose C/alpha on ``validation``, refit on train + validation; returns the chosen fit's validation metrics."""
        y_train = self.labels(train)
        if self.task.kind.has_classes and len(np.unique(y_train)) < 2:
            raise NlueError(f"{self.task.name}: the train split holds one class only; a classifier needs two or more")
        train_first, train_second = self.texts(train)
        if validation is None or validation.num_rows == 0:  # a user's own data may lack one: no selection then
            logger.warning("%s: no validation split, so no selection: %s=1", self.task.name, self.strength_name)
            self.fit_vectorizer(train_first, train_second)
            self.strength, self._model = 1.0, self._fit_model(1.0, self.features(train_first, train_second), y_train)
            return {}
        val_first, val_second = self.texts(validation)
        self.fit_vectorizer(
            train_first + val_first, None if train_second is None else train_second + (val_second or [])
        )
        x_train, x_val = self.features(train_first, train_second), self.features(val_first, val_second)
        y_val = self.labels(validation)
        grid = C_GRID if self.task.kind.has_classes else ALPHA_GRID
        trials: list[tuple[float, float, np.ndarray]] = []
        for strength in grid:
            predicted = self._predict_with(self._fit_model(strength, x_train, y_train), x_val)
            trials.append((self._validation_score(predicted, y_val), strength, predicted))
            self.selection[f"{strength:g}"] = trials[-1][0]
        top = max(score for score, _, _ in trials)
        # The first best in grid order: a tie keeps the stronger regularisation.
        _, self.strength, chosen = next(trial for trial in trials if trial[0] == top)
        self._model = self._fit_model(
            self.strength, sp.vstack([x_train, x_val], format="csr"), np.concatenate([y_train, y_val])
        )
        metrics = score_task(self.task.name, chosen.tolist(), y_val.tolist())
        return {k: v for k, v in metrics.items() if isinstance(v, float)}

    def predict(self, split: datasets.Dataset) -> np.ndarray:
        """Label ids (classes) or scores clipped to the task's range (regression), from the input alone."""
        if self._model is None:
            raise RuntimeError("fit() first")
        return self._predict_with(self._model, self.features(*self.texts(split)))

    def hyperparameters(self) -> dict[str, Any]:
        has_classes = self.task.kind.has_classes
        vocabulary = len(self._vectorizer.vocabulary_) if self._vectorizer is not None else 0
        return {
            "features": "tf-idf over char_wb n-grams of the normalised text",
            "ngram_range": list(self.ngram_range),
            "sublinear_tf": True,
            "max_features": self.max_features,
            "vocabulary_size": vocabulary,
            "feature_count": vocabulary * 4 + 2 if self.is_pair else vocabulary,  # see PAIR_FEATURES
            "pair_features": list(PAIR_FEATURES) if self.is_pair else [],
            "estimator": "LogisticRegression(class_weight=balanced, lbfgs)" if has_classes else "Ridge (clipped)",
            self.strength_name: self.strength,
            f"{self.strength_name}_grid": list(C_GRID if has_classes else ALPHA_GRID),
            "selected_on": f"validation {self.task.primary_metric}",
            "refit_on": "train+validation" if self.selection else "train",
        }


# ---------------------------------------------------------------------- runs
def resolve_tasks(tasks: str | Sequence[str]) -> list[TaskSpec]:
    """``"all"`` (every trainable NLUE task), ``"sa,mnli"`` or a list of names; unknown names raise ValueError."""
    names = tasks.split(",") if isinstance(tasks, str) else list(tasks)
    names = [n.strip() for n in names if n.strip()]
    if names in (["all"], []):
        names = [n for n in TASK_NAMES if TASKS[n].kind.trainable]
    return [get_task(name) for name in names]


def _load(dataset: str | None, task: TaskSpec) -> datasets.DatasetDict:
    try:
        return load_task(dataset, task)
    except OSError as exc:  # FileNotFoundError for a folder, ConnectionError for an unreachable Hub id
        raise NlueError(f"cannot load {task.name!r} from dataset {dataset!r}: {exc}") from exc


def _write_predictions(path: Path, rows: list[dict[str, Any]]) -> Path:
    """One JSON line per test item, written to a temporary file and moved into place."""
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def predictions_path(results_dir: Path, task: str, name: str = DEFAULT_NAME) -> Path:
    """Beside the results file; ``.jsonl`` so that results readers (which read ``*.json``) pass it by."""
    return Path(results_dir) / name / f"{task}.predictions.jsonl"


def run_task(
    dataset: str | None, task: TaskSpec, results_dir: Path, name: str = DEFAULT_NAME,
    bootstrap_resamples: int = 1000, seed: int = 42,
) -> RunResult:  # fmt: skip
    """Train, predict the test split once, score with intervals; write predictions then the results file."""
    started = time.perf_counter()
    splits = _load(dataset, task)
    if "train" not in splits or "test" not in splits:
        raise NlueError(
            f"{task.name}: dataset {dataset!r} has splits {list(splits)}; the baseline needs train and test"
        )
    loaded = time.perf_counter()
    baseline = TfidfBaseline(task, seed=seed)
    validation_metrics = baseline.fit(splits["train"], splits.get("validation"))
    fitted = time.perf_counter()
    test = splits["test"]
    predictions = baseline.predict(test)
    predicted = time.perf_counter()
    references = baseline.labels(test)
    scores = score_task(
        task.name, predictions.tolist(), references.tolist(), bootstrap_resamples=bootstrap_resamples or None, seed=seed
    )
    scored = time.perf_counter()
    ids = test["idx"] if "idx" in test.column_names else range(test.num_rows)
    rows = [{"idx": int(i), "prediction": p} for i, p in zip(ids, predictions.tolist(), strict=True)]
    if task.kind.has_classes:
        rows = [{**row, "label": task.label_names[row["prediction"]]} for row in rows]
    written = _write_predictions(predictions_path(results_dir, task.name, name), rows)
    result = RunResult(
        task=task.name, model=MODEL_ID, kind="baseline",
        metrics={k: v for k, v in scores.items() if isinstance(v, float)},
        dataset={"id": dataset or "nlue sample data", "path": resolve_dataset(dataset), "config": task.name,
                 "split": "test", "is_sample": is_sample(dataset)},
        hyperparameters=baseline.hyperparameters(), seed=seed, validation_metrics=validation_metrics,
        timings={"load_seconds": round(loaded - started, 3), "fit_seconds": round(fitted - loaded, 3),
                 "predict_seconds": round(predicted - fitted, 3), "score_seconds": round(scored - predicted, 3)},
        details={"predictions_file": written.name, "selection": dict(baseline.selection),
                 "bootstrap_resamples": bootstrap_resamples,
                 "items": {split: ds.num_rows for split, ds in splits.items()}},
        notes=NOTES,
    )  # fmt: skip
    write_result(result, Path(results_dir), name)
    logger.info("%s: %s %.3f (%s=%g, fit %.1f s)", task.name, result.primary_metric, result.primary_score or math.nan,
                baseline.strength_name, baseline.strength, fitted - loaded)  # fmt: skip
    return result


def run_baseline(
    dataset: str | None, tasks: str | Sequence[str] = "all", results_dir: Path | str = Path("results"),
    name: str = DEFAULT_NAME, bootstrap_resamples: int = 1000, seed: int = 42,
    on_result: Callable[[RunResult], None] | None = None,
) -> dict[str, RunResult]:  # fmt: skip
    """The TF-IDF baseline on every requested task (default: every trainable NLUE task), one results file each.

    Tasks whose kind is not trained (GMET's mask filling) are skipped with a warning.
    ``on_result`` is called after each task, for a caller that shows progress.
    """
    outcomes: dict[str, RunResult] = {}
    for task in resolve_tasks(tasks):
        if not task.kind.trainable:
            logger.warning("skipping %s: a %s task; %s", task.name, task.kind.name, task.kind.how_to_score)
            continue
        outcomes[task.name] = run_task(dataset, task, Path(results_dir), name, bootstrap_resamples, seed)
        if on_result is not None:
            on_result(outcomes[task.name])
    return outcomes


# ---------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlue baseline",
        description="Train and score the non-neural TF-IDF baseline (baseline:tfidf) on NLUE tasks.",
    )
    parser.add_argument(
        "--dataset", default=None, help="built dataset: Hub id or local folder (default: the embedded sample)"
    )
    parser.add_argument("--tasks", default="all", help="comma-separated task names, or 'all' (every trainable task)")
    parser.add_argument("--results-dir", type=Path, default=Path("results"), help="where results files are written")
    parser.add_argument("--name", default=DEFAULT_NAME, help="the results folder of this run (default: %(default)s)")
    parser.add_argument("--bootstrap-resamples", type=int, default=1000, help="resamples for 95%% intervals (0: none)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("-v", "--verbose", action="store_true", help="log each step")
    return parser


def format_table(results: dict[str, RunResult]) -> str:
    rows = [["task", "primary metric", "score", "95% CI", "fit s"]]
    for task, result in results.items():
        metric = result.primary_metric
        low, high = result.metrics.get(f"{metric}_ci_low"), result.metrics.get(f"{metric}_ci_high")
        score = "-" if result.primary_score is None else f"{result.primary_score:.3f}"
        ci = f"{low:.3f}-{high:.3f}" if low is not None and high is not None else "-"
        rows.append([task, metric, score, ci, f"{result.timings.get('fit_seconds', 0.0):.2f}"])
    return text_table(rows)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        if args.bootstrap_resamples < 0:
            raise NlueError(f"--bootstrap-resamples must be 0 or more, got {args.bootstrap_resamples}")
        results = run_baseline(
            args.dataset, args.tasks, args.results_dir, args.name, args.bootstrap_resamples, args.seed
        )
    except (NlueError, ValueError) as exc:
        print(f"nlue baseline: error: {exc}", file=sys.stderr)
        return 2
    if not results:
        print("nlue baseline: error: none of the tasks is trainable", file=sys.stderr)
        return 2
    print(format_table(results))
    sample = any(r.dataset.get("is_sample") for r in results.values())
    print(
        f"\n{MODEL_ID}: {NOTES}"
        + ("\nScored on SAMPLE data: the numbers show the pipeline, not Nepali NLU." if sample else "")
    )
    print(f"Results: {Path(args.results_dir) / args.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
