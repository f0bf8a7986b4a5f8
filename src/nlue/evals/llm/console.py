"""What `nlue llm` prints: each run's headline numbers with their intervals, and where its files went.

Library code logs; this module is the command's console, kept apart so that the command module holds
only its options and flow.
"""

from __future__ import annotations

import math
from typing import Any

SAMPLE_NOTE = " (SAMPLE DATA: scores mean nothing about the model)"


def _percent(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{100 * value:.1f}%"


def _interval(metrics: dict[str, float], name: str) -> str:
    low, high = metrics.get(f"{name}_ci_low"), metrics.get(f"{name}_ci_high")
    return "" if low is None or high is None else f" [95% CI {_percent(low)}, {_percent(high)}]"


def _number(value: float | None) -> str:
    return "n/a (undefined)" if value is None or math.isnan(value) else f"{value:.3f}"


def _correlation_line(task: str, m: dict[str, float], items: int | None) -> str:
    low, high = m.get("pearson_spearman_mean_ci_low"), m.get("pearson_spearman_mean_ci_high")
    interval = "" if low is None or high is None else f" [95% CI {_number(low)}, {_number(high)}]"
    parsed = int(m.get("parseable_items", 0))
    return (f"{task}: Pearson/Spearman mean {_number(m.get('pearson_spearman_mean'))}{interval} (Pearson "
            f"{_number(m.get('pearson'))}, Spearman {_number(m.get('spearman'))}) over the {parsed} of {items or '?'} "
            f"answers that parsed as a number; invalid {_percent(m.get('invalid_rate'))}, left out of the "
            "correlations")  # fmt: skip


def print_mcq(run: Any) -> None:
    from nlue.evals.llm.wordings import SECTION as WORDINGS
    from nlue.evals.llm.wordings import spread_line, wording_text
    from nlue.evals.mcq.order_robustness import SECTION, order_text
    from nlue.evals.mcq.report import gap_text, text_tables

    result, details = run.result, run.result.details
    metrics = result.metrics
    sample = SAMPLE_NOTE if result.dataset.get("is_sample") else ""
    print(f"\n{result.task} · {run.name} · {details['n_items']} items{sample}")
    beside = f"; {spread_line(details[WORDINGS])}" if details.get(WORDINGS) else ""
    print(f"accuracy over all items (invalid = wrong; the primary): {_percent(metrics['accuracy_all_items'])}"
          f"{_interval(metrics, 'accuracy_all_items')}{beside}")  # fmt: skip
    print(f"accuracy over parseable items ({details['parseable_items']} parsed): "
          f"{_percent(metrics['accuracy_parseable'])}{_interval(metrics, 'accuracy_parseable')}")  # fmt: skip
    counts = ", ".join(f"{k} {v}" for k, v in details["invalid_counts"].items() if v) or "none"
    print(f"invalid outputs: {details['invalid_percent']}% (the paper's Inv%); by category: {counts}")
    if "acc_norm_chars" in metrics:
        print(f"acc_norm by characters {_percent(metrics['acc_norm_chars'])}, "
              f"by bytes {_percent(metrics['acc_norm_bytes'])}")  # fmt: skip
    lenient = details.get("lenient")
    if lenient:
        print(f"lenient parse (a diagnostic, never in the numbers above): accuracy over all items "
              f"{_percent(lenient['accuracy_all_items'])}, invalid {lenient['invalid_percent']}%")  # fmt: skip
    orders = details.get(SECTION)
    if orders:
        print("\n" + order_text(orders))
    worded = details.get(WORDINGS)
    if worded:
        print("\n" + wording_text(result.task, worded))
    print()
    print(text_tables(run.tables))
    if run.gap:
        print("\n" + gap_text(run.gap))
    print(f"\nresults: {run.result_path}")
    for name, path in run.files.items():
        print(f"  {name}: {path}")


def print_nlue(results: dict[str, Any], mode: str) -> None:
    """One line per NLUE task: macro-F1 (the primary) with its interval, and the mode's other numbers; with
    ``--wordings all``, the spread over the wordings beside it and a table of the wordings after the tasks."""
    from nlue.evals.llm.wordings import SECTION, spread_line, wording_text

    if any(result.dataset.get("is_sample") for result in results.values()):
        print(f"NLUE tasks by {'generation' if mode == 'generate' else 'log-likelihood'}{SAMPLE_NOTE}")
    for task, result in results.items():
        m = result.metrics
        worded = result.details.get(SECTION) if isinstance(result.details, dict) else None
        beside = f"; {spread_line(worded)}" if worded else ""
        if "macro_f1" not in m:  # a similarity score (STS-B): correlations over the answers that parsed
            print(_correlation_line(task, m, result.dataset.get("items")) + beside)
            continue
        line = f"{task}: macro-F1 {_percent(m['macro_f1'])}{_interval(m, 'macro_f1')}"
        if mode == "generate":
            line += (f", accuracy over all items {_percent(m['accuracy_all_items'])}, over parseable items "
                     f"{_percent(m['accuracy_parseable'])}, invalid {_percent(m['invalid_rate'])}")  # fmt: skip
        else:
            line += (f", accuracy {_percent(m['accuracy'])}, acc_norm by characters {_percent(m['acc_norm_chars'])}, "
                     f"by bytes {_percent(m['acc_norm_bytes'])}")  # fmt: skip
        print(line + beside)
    for task, result in results.items():
        worded = result.details.get(SECTION) if isinstance(result.details, dict) else None
        if worded:
            print("\n" + wording_text(task, worded))
