"""Option-order robustness of an exam run (``nlue llm mcq --option-orders cyclic``): our protocol and its numbers.

UrduMMLU names the order of the options as an open question and defines no protocol for it; what
follows is ours. Every test item is asked under each cyclic rotation of its options
(:mod:`nlue.evals.mcq.permute`; rotation 0 is the run's own order, so its answers are the run's), in
the run's mode, with the same demonstrations, and the results file gets a section
``details.option_order_robustness`` holding:

* ``rotations``: per rotation, ``accuracy_all_items`` (invalid = wrong, scored against the moved key)
  with its percentile-bootstrap interval (the run's resamples and seed), ``accuracy_parseable`` and
  ``invalid_rate``; then their mean and spread (highest minus lowest) over the rotations;
* ``consistent_share``: the share of items whose answer is the same option (the same text, whatever
  letter it had) under every rotation. An invalid answer under any rotation makes the item
  inconsistent, so a model that often fails to answer is inconsistent however stable its choices;
  ``consistent_correct_share``: consistent and the gold option;
* ``letter_choice_shares``: over every answer (items x rotations), the share that chose each letter,
  and the share that was invalid;
* with resampling asked for, ``consistent_share_ci_low``/``_ci_high`` (and the consistent-and-correct
  share's), ``letter_choice_share_intervals`` (letter -> [low, high]) and the ``bootstrap`` resamples and
  seed they were drawn with: percentile intervals over items (:mod:`nlue.evals.mcq.order_intervals`); ``letter_key_shares``: how often each letter was the key. Under
  cyclic rotations every item puts its key once at each letter, so the key shares are 1/k each by
  construction (computed, not assumed), and a choice share far from 1/k is a preference for a
  position, not a trace of the exam's own key distribution.

Per item, the predictions file and ``raw_outputs.jsonl`` hold ``option_orders``: per rotation, the
letter chosen as shown (``key``, None when invalid), the item's own letter of that option
(``option``), the invalid category and what the model returned; :func:`disagreements` recomputes
every point number of the section from those rows, and the share intervals by drawing them again with
the stored resamples and seed (the rotations' accuracy intervals are the exam scorer's and are not).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nlue.errors import NlueError
from nlue.evals.mcq.order_intervals import LETTER_INTERVALS, interval_disagreements, share_intervals
from nlue.evals.mcq.parse import ParseResult
from nlue.evals.mcq.permute import CYCLIC, GIVEN, original_letter, rotated_items, rotation_count, shown_position
from nlue.evals.mcq.score import score_answers
from nlue.registry.kinds.mcq_text import LETTERS
from nlue.registry.kinds.multiple_choice import key_letter
from nlue.text_table import text_table

SECTION = "option_order_robustness"
FIELD = "option_orders"  # per item, in the predictions file and raw_outputs.jsonl
TOLERANCE = 1e-6  # as nlue.evals.verify
INVALID = "invalid"
PROTOCOL = (
    "ours: every test item asked under each cyclic rotation of its options (rotation 0 = as given), the key moved "
    "with its option; UrduMMLU names option order as an open question and defines no protocol"
)
CONSISTENCY_NOTE = "consistent: the same option (by its text) chosen under every rotation; an invalid answer under "
CONSISTENCY_NOTE += "any rotation makes the item inconsistent"
KEY_NOTE = (
    "under cyclic rotation each item puts its key once at every letter, so each letter is the key 1/k of the time"
)
ROTATION_FIELDS = ("accuracy_all_items", "accuracy_all_items_ci_low", "accuracy_all_items_ci_high",
                   "accuracy_parseable", "invalid_rate")  # fmt: skip

Answers = tuple[list[str], list[dict[str, Any]], list[ParseResult]]  # prompt hashes, what came back, strict parses


@dataclass(frozen=True)
class OrderRobustness:
    """What a rotated run adds: the results file's section and, per item, its per-rotation records."""

    section: dict[str, Any]
    records: list[list[dict[str, Any]]]


def _records(items: Sequence[Mapping[str, Any]], asked: Sequence[Answers], k: int) -> list[list[dict[str, Any]]]:
    out = []
    for index in range(len(items)):
        row = []
        for rotation, (hashes, answers, parses) in enumerate(asked):
            parse = parses[index]
            shown = parse.key if parse.valid else None
            row.append({"rotation": rotation, "key": shown, "option": original_letter(shown, rotation, k),
                        "category": parse.category, "prompt_sha256": hashes[index], **answers[index]})  # fmt: skip
        out.append(row)
    return out


def point_numbers(golds: Sequence[str], records: Sequence[Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """Every point number of the section from the items' own gold letters and their per-rotation records."""
    if not golds or len(golds) != len(records):
        raise NlueError(f"{len(golds)} gold letters and {len(records)} items' option orders do not align")
    k = len(records[0])
    if any(len(row) != k or [r.get("rotation") for r in row] != list(range(k)) for row in records):
        raise NlueError(f"every item needs its answers under rotations 0-{k - 1}, in order")
    letters = LETTERS[:k]
    n = len(golds)
    accuracy = [sum(row[r].get("option") == gold for row, gold in zip(records, golds, strict=True)) / n
                for r in range(k)]  # fmt: skip
    chosen = [{r.get("option") for r in row} for row in records]
    consistent = [len(options) == 1 and None not in options for options in chosen]
    answers = [r.get("key") for row in records for r in row]
    keys = [letters[shown_position(letters.index(gold), r, k)] for gold in golds for r in range(k)]
    return {
        "rotation_accuracy": accuracy,
        "accuracy_mean": sum(accuracy) / k,
        "accuracy_spread": max(accuracy) - min(accuracy),
        "consistent_share": sum(consistent) / n,
        "consistent_correct_share": sum(
            ok and row[0].get("option") == gold for ok, row, gold in zip(consistent, records, golds, strict=True)
        )
        / n,
        "letter_choice_shares": {
            **{x: answers.count(x) / len(answers) for x in letters},
            INVALID: answers.count(None) / len(answers),
        },
        "letter_key_shares": {x: keys.count(x) / len(keys) for x in letters},
    }


def ask_rotations(
    ask: Callable[[list[dict[str, Any]]], Answers],
    items: Sequence[Mapping[str, Any]],
    given: Answers,
    option_orders: str,
    resamples: int | None,
    seed: int,
) -> OrderRobustness | None:
    """Ask ``items`` under every rotation but the given one (``ask`` returns what the run's mode returns;
    ``given``: the run's own answers, rotation 0) and score them; None for ``option_orders == "given"``."""
    if option_orders == GIVEN:
        return None
    if option_orders != CYCLIC:
        raise NlueError(f"option orders must be {GIVEN} or {CYCLIC}, got {option_orders!r}")
    k = rotation_count(items)
    asked = [given, *(ask(rotated_items(items, rotation)) for rotation in range(1, k))]
    records = _records(items, asked, k)
    rotations = []
    for rotation, (_, _, parses) in enumerate(asked):
        scores = score_answers(rotated_items(items, rotation), parses, bootstrap_resamples=resamples or None,
                               seed=seed, groups=())  # fmt: skip
        rotations.append({"rotation": rotation, "order": "".join(LETTERS[(j + rotation) % k] for j in range(k)),
                          **{name: scores.get(name) for name in ROTATION_FIELDS}})  # fmt: skip
    golds = [key_letter(item["correct_key"]) for item in items]
    points = point_numbers(golds, records)
    intervals = share_intervals(golds, records, resamples, seed) if resamples else {}
    section = {"protocol": PROTOCOL, "orders": option_orders, "rotations_per_item": k, "n_items": len(items),
               "rotations": rotations, **{k_: v for k_, v in points.items() if k_ != "rotation_accuracy"},
               **intervals, "consistency_note": CONSISTENCY_NOTE, "key_note": KEY_NOTE}  # fmt: skip
    return OrderRobustness(section, records)


def disagreements(section: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each point number of a stored section that its predictions rows do not give (empty: they agree)."""
    try:
        golds = [key_letter(row["gold"]) for row in rows]
        points = point_numbers(golds, [row[FIELD] for row in rows])
    except (KeyError, TypeError, ValueError, NlueError) as exc:
        return [f"{SECTION}: its predictions cannot be scored ({exc})"]
    stored = section.get("rotations") if isinstance(section.get("rotations"), list) else []
    pairs = [(f"rotation {r} accuracy_all_items", row.get("accuracy_all_items") if isinstance(row, Mapping) else None,
              value) for r, (row, value) in enumerate(zip(stored, points["rotation_accuracy"], strict=False))]  # fmt: skip
    if len(stored) != len(points["rotation_accuracy"]):
        return [f"{SECTION}: {len(stored)} rotations stored, its predictions hold {len(points['rotation_accuracy'])}"]
    for name in ("accuracy_mean", "accuracy_spread", "consistent_share", "consistent_correct_share"):
        pairs.append((name, section.get(name), points[name]))
    for name in ("letter_choice_shares", "letter_key_shares"):
        held = section.get(name) if isinstance(section.get(name), Mapping) else {}
        pairs += [(f"{name}.{x}", held.get(x), value) for x, value in points[name].items()]
    found = []
    for name, value, expected in pairs:
        if isinstance(value, bool) or not isinstance(value, int | float) or abs(value - expected) > TOLERANCE:
            found.append(f"{SECTION} {name}: stored {value!r}, its predictions give {expected:.6g}")
    return found + interval_disagreements(section, golds, [row[FIELD] for row in rows], SECTION)


def _percent(value: Any) -> str:
    return f"{100 * value:.1f}" if isinstance(value, int | float) and not isinstance(value, bool) else "n/a"


def rotation_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """The section as table rows (header first): rotation, order shown, accuracy [95% CI], invalid %."""
    rows = [["rotation", "order shown", "accuracy, all items % [95% CI]", "invalid %"]]
    for row in section.get("rotations") or []:
        if not isinstance(row, Mapping):
            continue
        low, high = row.get("accuracy_all_items_ci_low"), row.get("accuracy_all_items_ci_high")
        interval = f" [{_percent(low)}, {_percent(high)}]" if low is not None and high is not None else ""
        rows.append([str(row.get("rotation")), str(row.get("order")), _percent(row.get("accuracy_all_items"))
                     + interval, _percent(row.get("invalid_rate"))])  # fmt: skip
    return rows


def letter_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """Letters chosen vs letters keyed, in percent of every answer (header first)."""
    chosen = section.get("letter_choice_shares") if isinstance(section.get("letter_choice_shares"), Mapping) else {}
    keyed = section.get("letter_key_shares") if isinstance(section.get("letter_key_shares"), Mapping) else {}
    letters = [x for x in keyed if x in LETTERS]
    rows = [["", *letters, INVALID], ["chosen %", *(_percent(chosen.get(x)) for x in letters),
            _percent(chosen.get(INVALID))]]  # fmt: skip
    intervals = section.get(LETTER_INTERVALS)
    if isinstance(intervals, Mapping):
        rows.append(["chosen 95% CI", *(_interval(intervals.get(x)) for x in (*letters, INVALID))])
    return [*rows, ["key %", *(_percent(keyed.get(x)) for x in letters), "-"]]


def _interval(pair: Any) -> str:
    """``[low, high]`` in percent, or "n/a"."""
    if not isinstance(pair, list | tuple) or len(pair) != 2:
        return "n/a"
    return f"[{_percent(pair[0])}, {_percent(pair[1])}]"


def _share_interval(section: Mapping[str, Any], name: str) -> str:
    low, high = section.get(f"{name}_ci_low"), section.get(f"{name}_ci_high")
    return "" if low is None and high is None else f" [95% CI {_interval([low, high]).strip('[]')}]"


def order_text(section: Mapping[str, Any]) -> str:
    """The section for a terminal (every cell a number, a letter or a word of ours)."""
    from nlue.text.safe import terminal_safe

    lines = [f"option-order robustness (ours; {terminal_safe(section.get('rotations_per_item'))} cyclic rotations "
             f"of each item's options, the key moved with them):", text_table(rotation_rows(section)),
             f"mean {_percent(section.get('accuracy_mean'))}%, spread (highest - lowest) "
             f"{_percent(section.get('accuracy_spread'))} points",
             f"consistent (same option under every rotation; an invalid answer counts as inconsistent): "
             f"{_percent(section.get('consistent_share'))}%{_share_interval(section, 'consistent_share')} of "
             f"{terminal_safe(section.get('n_items'))} items, consistent and correct: "
             f"{_percent(section.get('consistent_correct_share'))}%"
             f"{_share_interval(section, 'consistent_correct_share')}",
             "letters chosen vs keyed, % of every answer (keys spread evenly by construction):",
             text_table(letter_rows(section))]  # fmt: skip
    return "\n".join(lines)
