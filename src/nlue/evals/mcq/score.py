"""Scores of parsed exam answers: both accuracies, named apart, the invalid rate and its causes, per group.

* ``accuracy_all_items``: correct answers over every item, an invalid output counting as
  wrong. The primary number (an nlue convention).
* ``accuracy_parseable``: correct answers over the items whose output parsed. The UrduMMLU
  paper does not state its denominator; its BLOOMZ-3B row (74.2% invalid, 28.62%
  accuracy) is only possible with this one, so compare it, never the first, with Table 4.
* ``invalid_rate`` (the paper's Inv%, also as ``invalid_percent`` text written the paper's
  way: one decimal, ``<0.1`` for a small non-zero rate) and ``invalid_counts`` by category.

Each is also given per domain, subdomain and level (the paper's breakdowns). A lenient
parse, when given, is reported under ``lenient`` with its own numbers and never mixed into
these. The gold key enters here and nowhere before: prompts and parsers never see it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nlue.errors import NlueError
from nlue.evals.mcq.parse import INVALID_CATEGORIES, ParseResult
from nlue.registry.kinds.multiple_choice import key_letter, multiple_choice_problem
from nlue.registry.mcq import format_invalid_rate
from nlue.scoring.bootstrap import DEFAULT_CONFIDENCE_LEVEL, DEFAULT_SEED, scores_with_intervals
from nlue.strict_json import finite_or_none

GROUPS: tuple[str, ...] = ("domain", "subdomain", "level")
LENIENT_NOTE = (
    "lenient parser (markdown, case and letter forms tolerated): a diagnostic reported apart; "
    "the headline numbers are the strict parser's"
)


def _summary(
    items: Sequence[Mapping[str, Any]],
    results: Sequence[ParseResult],
    bootstrap_resamples: int | None,
    confidence_level: float,
    seed: int | None,
) -> dict[str, Any]:
    references = [key_letter(item["correct_key"]) for item in items]
    problem = multiple_choice_problem([r.prediction for r in results], references, "the exam answers")
    out: dict[str, Any] = {"n_items": len(items), "parseable_items": sum(r.valid for r in results)}
    # accuracy_parseable is undefined when nothing parsed: None (null in every file), never NaN
    out.update(finite_or_none(scores_with_intervals(problem, None, bootstrap_resamples, confidence_level, seed)))
    out["invalid_percent"] = format_invalid_rate(out["invalid_rate"])
    counts = dict.fromkeys(INVALID_CATEGORIES, 0)
    for result in results:
        if result.category is not None:
            counts[result.category] += 1
    out["invalid_counts"] = counts
    return out


def score_answers(
    items: Sequence[Mapping[str, Any]],
    results: Sequence[ParseResult],
    lenient: Sequence[ParseResult] | None = None,
    *,
    bootstrap_resamples: int | None = None,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    seed: int | None = DEFAULT_SEED,
    groups: Sequence[str] = GROUPS,
) -> dict[str, Any]:
    """Score strict parses ``results`` of ``items`` (same order); ``lenient`` parses are reported apart.

    Intervals (``<metric>_ci_low``/``_ci_high``) are added overall when ``bootstrap_resamples`` is given.
    """
    if len(items) != len(results) or (lenient is not None and len(lenient) != len(items)):
        raise NlueError(
            f"got {len(items)} items and {len(results)} parsed answers"
            + (f" ({len(lenient)} lenient)" if lenient is not None else "")
            + "; give one answer per item, in item order"
        )
    out = _summary(items, results, bootstrap_resamples, confidence_level, seed)
    out["by"] = {}
    for group in groups:
        values = dict.fromkeys(str(item.get(group, "")) for item in items)
        per_group = {}
        for value in values:
            chosen = [i for i, item in enumerate(items) if str(item.get(group, "")) == value]
            per_group[value] = _summary([items[i] for i in chosen], [results[i] for i in chosen], None, 0.95, None)
        out["by"][group] = per_group
    if lenient is not None:
        out["lenient"] = {
            "note": LENIENT_NOTE,
            **_summary(items, lenient, bootstrap_resamples, confidence_level, seed),
        }
    return out


def exam_answers(items: Sequence[Mapping[str, Any]], answers: tuple[Sequence[str], Sequence[Mapping[str, Any]],
                 Sequence[ParseResult]], resamples: int | None, seed: int | None) -> Any:  # fmt: skip
    """One prompt wording's answers to ``items`` (prompt hashes, what came back, strict parses), scored as
    :mod:`nlue.evals.llm.wordings` keeps them: the overall numbers, the letter chosen (None when invalid)."""
    from nlue.evals.llm.wordings import Asked

    hashes, raw, parses = answers
    scores = _summary(items, parses, resamples or None, DEFAULT_CONFIDENCE_LEVEL, seed)
    extras = [{"category": p.category, "prompt_sha256": h, **a} for h, a, p in zip(hashes, raw, parses, strict=True)]
    return Asked(scores, [p.key if p.valid else None for p in parses], extras)
