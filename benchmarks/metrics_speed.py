"""How fast is nlue.scoring's vectorised bootstrap, against the loop people usually write?

Reference: a plain Python loop over the same resamples (the same seed gives the same index
rows, drawn one at a time), calling scikit-learn's ``f1_score(average="macro", labels=...)``
or ``accuracy_score`` on each. A second reference loops the same way but scores each
resample with NumPy, to separate "no Python loop" from "no scikit-learn overhead".

Run: ``python benchmarks/metrics_speed.py [--items 10000] [--resamples 1000]``
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np
import sklearn
from sklearn.metrics import accuracy_score, f1_score

from nlue.scoring import classification_problem, gmet_problem, regression_problem
from nlue.scoring.bootstrap import bootstrap_distribution

NUM_LABELS = 3  # MNLI-sized label set
SEED = 0


def timed(function: Callable[[], object], repeats: int) -> tuple[float, object]:
    """Median wall time of ``repeats`` runs, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def loop_bootstrap(
    predictions: np.ndarray, references: np.ndarray, resamples: int, score: Callable[[np.ndarray, np.ndarray], float]
) -> np.ndarray:
    """The reference: one resample at a time, drawn from the same generator stream as ours."""
    rng = np.random.default_rng(SEED)
    n = len(predictions)
    values = np.empty(resamples)
    for b in range(resamples):
        rows = rng.integers(0, n, size=(1, n))[0]
        values[b] = score(references[rows], predictions[rows])
    return values


def numpy_macro_f1(references: np.ndarray, predictions: np.ndarray) -> float:
    f1s = []
    for label in range(NUM_LABELS):
        true_positive = np.count_nonzero((predictions == label) & (references == label))
        denominator = np.count_nonzero(predictions == label) + np.count_nonzero(references == label)
        f1s.append(2 * true_positive / denominator if denominator else 0.0)
    return float(np.mean(f1s))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=5, help="runs of the vectorised bootstrap (median reported)")
    args = parser.parse_args()

    rng = np.random.default_rng(1)
    references = rng.integers(0, NUM_LABELS, args.items)
    predictions = np.where(rng.random(args.items) < 0.7, references, rng.integers(0, NUM_LABELS, args.items))
    problem = classification_problem(predictions, references, list(range(NUM_LABELS)))
    labels = list(range(NUM_LABELS))

    print(f"bootstrap: {args.resamples:,} resamples x {args.items:,} items, {NUM_LABELS} classes")
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; python {platform.python_version()}, "
        f"numpy {np.__version__}, scikit-learn {sklearn.__version__}"
    )
    print("reference: a Python loop over the same resamples (same seed, same index rows), scoring each with")
    print("           scikit-learn (f1_score macro over all labels / accuracy_score), or with NumPy per resample\n")

    ours_time, ours = timed(lambda: bootstrap_distribution(problem, args.resamples, SEED), args.repeats)
    references_by_metric = {
        "macro_f1": {
            "sklearn": lambda r, p: f1_score(r, p, average="macro", labels=labels, zero_division=0),
            "numpy": numpy_macro_f1,
        },
        "accuracy": {"sklearn": accuracy_score, "numpy": lambda r, p: float(np.mean(r == p))},
    }
    print(f"{'metric':<10} {'method':<34} {'seconds':>9} {'speed-up':>9}  max |diff| vs ours")
    for metric, loops in references_by_metric.items():
        print(f"{metric:<10} {'nlue.scoring, vectorised (note 1)':<34} {ours_time:>9.3f} {'1.0x':>9}")
        for name, score in loops.items():
            loop_time, values = timed(lambda s=score: loop_bootstrap(predictions, references, args.resamples, s), 1)
            difference = float(np.max(np.abs(values - ours[metric])))
            print(f"{'':<10} {'loop + ' + name:<32} {loop_time:>9.3f} {loop_time / ours_time:>8.1f}x  {difference:.1e}")
    print(
        "note 1: median of the runs; one pass of ours yields accuracy AND macro-F1 from the same resamples,\n"
        "        so its time is shown on both rows, while each loop computes one metric"
    )

    print("\nother scorers, vectorised (no loop reference):")
    scores = rng.uniform(0, 5, args.items)
    regression = regression_problem(scores + rng.normal(0, 1, args.items), scores)
    seconds, _ = timed(lambda: bootstrap_distribution(regression, args.resamples, SEED), 1)
    print(f"  stsb (pearson, spearman with tie-aware ranks, r2): {seconds:.3f} s")
    categories = [f"category {k}" for k in rng.integers(0, 75, args.items)]
    gmet, _ = gmet_problem(categories, (rng.random(args.items) < 0.5).astype(int))
    seconds, _ = timed(lambda: bootstrap_distribution(gmet, args.resamples, SEED), args.repeats)
    print(f"  gmet (stratified by 75 categories): {seconds:.3f} s")


if __name__ == "__main__":
    main()
