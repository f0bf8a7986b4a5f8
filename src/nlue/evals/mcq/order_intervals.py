"""Bootstrap intervals of the option-order shares: the consistent share and how often each letter was chosen.

Each of these shares is a mean over the test items of a per-item value: whether the item was answered
consistently (0 or 1), consistently and correctly (0 or 1), and, per letter, the share of the item's k
answers that chose it (the pooled share over every answer is that mean, since every item has k answers).
So the items are what is resampled, as for every other interval in nlue: the values go into a
:class:`~nlue.scoring.problem.ScoringProblem` and :func:`nlue.scoring.bootstrap.bootstrap_intervals` gives
their percentile intervals, with the run's resamples and seed. The section stores both, so verify
recomputes every interval exactly from the per-item records (the same seed gives the same resamples).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nlue.registry.kinds.mcq_text import LETTERS
from nlue.scoring.bootstrap import bootstrap_intervals
from nlue.scoring.problem import ScoringProblem

INVALID = "invalid"
SHARES = ("consistent_share", "consistent_correct_share")
LETTER_INTERVALS = "letter_choice_share_intervals"  # {letter or "invalid": [low, high]}
BOOTSTRAP = "bootstrap"  # {"resamples": R, "seed": s}: what the intervals were drawn with
MAX_RESAMPLES = 100_000  # what verify recomputes from a stored section at most (it is outside input)
TOLERANCE = 1e-6  # as nlue.evals.verify


def _item_values(golds: Sequence[str], records: Sequence[Sequence[Mapping[str, Any]]]) -> tuple[list[str], np.ndarray]:
    """The per-item values whose means are the shares (column names, an (items, columns) array)."""
    k = len(records[0])
    letters = LETTERS[:k]
    names = [*SHARES, *(f"letter {x}" for x in (*letters, INVALID))]
    values = []
    for row, gold in zip(records, golds, strict=True):
        options = {r.get("option") for r in row}
        consistent = len(options) == 1 and None not in options
        keys = [r.get("key") for r in row]
        values.append([consistent, consistent and row[0].get("option") == gold,
                       *(keys.count(x) / k for x in letters), keys.count(None) / k])  # fmt: skip
    return names, np.asarray(values, dtype=float)


def share_intervals(
    golds: Sequence[str], records: Sequence[Sequence[Mapping[str, Any]]], resamples: int, seed: int
) -> dict[str, Any]:
    """The section's interval fields: each share's 95% percentile-bootstrap interval over items."""
    names, values = _item_values(golds, records)

    def means(outputs: np.ndarray, references: np.ndarray | None) -> dict[str, np.ndarray]:
        return {name: outputs[..., column].mean(axis=-1) for column, name in enumerate(names)}

    found = bootstrap_intervals(ScoringProblem(values, None, means, tuple(names), value_range=(0.0, 1.0)),
                                resamples, seed=seed)  # fmt: skip
    out: dict[str, Any] = {}
    for name in SHARES:
        out[f"{name}_ci_low"], out[f"{name}_ci_high"] = found[name]
    out[LETTER_INTERVALS] = {name.removeprefix("letter "): list(found[name]) for name in names[len(SHARES) :]}
    out[BOOTSTRAP] = {"resamples": resamples, "seed": seed}
    return out


def _flat(fields: Mapping[str, Any]) -> dict[str, Any]:
    flat = {f"{name}_ci_{end}": fields.get(f"{name}_ci_{end}") for name in SHARES for end in ("low", "high")}
    letters = fields.get(LETTER_INTERVALS)
    for letter, pair in letters.items() if isinstance(letters, Mapping) else []:
        ok = isinstance(pair, list | tuple) and len(pair) == 2
        flat[f"{LETTER_INTERVALS}.{letter}"] = list(pair) if ok else pair
    return flat


def interval_disagreements(
    section: Mapping[str, Any], golds: Sequence[str], records: Sequence[Sequence[Mapping[str, Any]]], prefix: str
) -> list[str]:
    """Each stored interval its records do not give when drawn again with the stored resamples and seed."""
    drawn = section.get(BOOTSTRAP)
    if drawn is None:
        held = [name for name, value in _flat(section).items() if value is not None]
        return [f"{prefix} {name}: an interval without the resamples and seed it was drawn with" for name in held]
    resamples = drawn.get("resamples") if isinstance(drawn, Mapping) else None
    seed = drawn.get("seed") if isinstance(drawn, Mapping) else None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (resamples, seed)) or not (
        0 < resamples <= MAX_RESAMPLES and seed >= 0
    ):
        return [f"{prefix} {BOOTSTRAP}: {drawn!r} is not a resample count from 1 to {MAX_RESAMPLES} and a seed"]
    expected = _flat(share_intervals(golds, records, resamples, seed))
    stored = _flat(section)
    found = []
    for name, value in expected.items():
        held = stored.get(name)
        try:
            pairs = list(zip(value, held, strict=True)) if isinstance(value, list) else [(value, held)]
            agree = all(not isinstance(got, bool) and abs(float(got) - want) <= TOLERANCE for want, got in pairs)
        except (TypeError, ValueError):
            agree = False
        if not agree:
            found.append(f"{prefix} {name}: stored {held!r}, its predictions give {value!r}")
    return found
