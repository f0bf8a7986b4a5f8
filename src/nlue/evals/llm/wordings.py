"""Prompt-wording robustness of an LLM run (``--wordings all``): our protocol and its numbers.

No anchor paper measures it: each asks its models with one prompt. What follows is ours. A task's
prompt in one language has a main wording and the others its task file lists
(:mod:`nlue.registry.wordings`; every shipped task has at least two per prompt language). With
``--wordings all`` every test item is asked in every wording, in the run's mode, with the same
demonstration items drawn with the same seed (each rendered in the wording asked) and the same label
words, so that only the wording changes. The main wording's answers are the run's own, so the run's
score is the main wording's and its requests are the ones a run without wordings sends (the answer
cache answers them again for free). The results file gets a section
``details.prompt_wording_robustness`` holding:

* ``wordings``: per wording, its name, the task's primary metric (``primary``) with its
  percentile-bootstrap interval (the run's resamples and seed), and, by generation, its invalid rate;
* ``spread``: the highest primary minus the lowest; ``std``: their sample standard deviation
  (n - 1 in the denominator); ``mean``: their mean. With two or three wordings these describe the
  wordings asked, not every wording a user might write: a small spread says these wordings agree,
  not that no wording would move the score;
* per wording but the main one, ``vs_main``: a paired bootstrap test against the main wording on the
  same items (:func:`nlue.scoring.significance.paired_test`, the run's resamples and seed, kept in
  ``paired_test``): ``difference`` (wording minus main), its 95% percentile interval ``ci_low`` and
  ``ci_high``, ``p_value``, and ``p_holm``, Holm-adjusted across the task's other wordings; null with
  ``vs_main_reason`` where the metric is undefined or the run has no bootstrap. Older files lack it.

Per item, the predictions file holds ``wordings``: per wording, the prediction (label id, number, or
None for an invalid answer) and what the mode keeps beside it (the answer written, or the label
words' log-likelihoods). :func:`disagreements` rescores every wording from those rows with the code
that verifies the run's own score and refuses a stored number they do not give (intervals come from
resampling and are range-checked only).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nlue.errors import NlueError
from nlue.registry.spec import TaskSpec
from nlue.registry.wordings import ALL, MAIN, WORDING_CHOICES, worded_task, wording_names, wordings_fingerprint
from nlue.scoring.significance import holm, paired_test
from nlue.text_table import text_table

SECTION = "prompt_wording_robustness"
FIELD = "wordings"  # per item, in the predictions file
TOLERANCE = 1e-6  # as nlue.evals.verify
PROTOCOL = (
    "ours: every test item asked in each wording of the prompt language (the main one and those the task file "
    "lists), the same demonstration items and label words; the papers ask with one prompt"
)
NOTE = (
    "spread = highest minus lowest primary over the wordings, std = their sample standard deviation; over two or "
    "three wordings of ours these describe those wordings, not every possible wording"
)


PAIRED = ("difference", "ci_low", "ci_high", "p_value", "p_holm")
MAX_TEST_RESAMPLES = 100_000  # a results file is outside input: verify recomputes no more than this
Problem = Callable[[list[dict[str, Any]]], Any]  # worded rows -> their ScoringProblem (nlue.evals.verify)


@dataclass(frozen=True)
class Asked:
    """One wording's answers, scored: the run's metrics, and per item its prediction and what goes beside it."""

    metrics: Mapping[str, Any]
    predictions: Sequence[Any]
    extras: Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class WordingRobustness:
    """What a ``--wordings all`` run adds: the results file's section and, per item, its per-wording records."""

    section: dict[str, Any]
    records: list[dict[str, dict[str, Any]]]


def run_suffix(wordings: str) -> str:
    """What a run folder's name carries: nothing for the main wording alone, ``-wordings-all`` otherwise."""
    if wordings not in WORDING_CHOICES:
        raise NlueError(f"wordings must be one of {', '.join(WORDING_CHOICES)}, got {wordings!r}")
    return "" if wordings == MAIN else f"-wordings-{wordings}"


def identity_settings(task: TaskSpec, language: str, wordings: str) -> dict[str, Any]:
    """What a run's identity settings gain (nothing for the main wording alone, so older identities stand)."""
    if wordings == MAIN:
        return {}
    return {"prompt_wordings": {"names": list(wording_names(task, language)),
                                "fingerprint": wordings_fingerprint(task, language)}}  # fmt: skip


def require_wordings(tasks: Sequence[TaskSpec], language: str, wordings: str) -> None:
    """Refuse, before any model loads, a ``--wordings all`` run of a task with no other wording in ``language``."""
    if wordings == MAIN:
        return
    alone = [task.name for task in tasks if len(wording_names(task, language)) < 2]
    if alone:
        raise NlueError(f"--wordings {ALL}: {', '.join(alone)} has no {language!r} wording besides the main prompt; "
                        f"a task file lists more as prompts.{language}.wordings")  # fmt: skip


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def summary(values: Sequence[float | None]) -> dict[str, float | None]:
    """Mean, spread (highest - lowest) and sample standard deviation of the wordings' primaries (None when
    any wording's primary could not be computed)."""
    if not values or any(v is None for v in values):
        return {"mean": None, "spread": None, "std": None}
    numbers = [float(v) for v in values if v is not None]
    std = statistics.stdev(numbers) if len(numbers) > 1 else 0.0
    return {"mean": sum(numbers) / len(numbers), "spread": max(numbers) - min(numbers), "std": std}


def ask_wordings(
    task: TaskSpec, language: str, wordings: str, ask: Callable[[TaskSpec], Asked], main: Asked
) -> WordingRobustness | None:
    """Ask ``task`` in each of its ``language`` wordings but the main one (``ask`` runs the mode on the task as
    a wording words it; ``main``: the run's own answers) and gather the section; None for the main alone."""
    if wordings == MAIN:
        return None
    require_wordings([task], language, wordings)
    names = wording_names(task, language)
    asked = {MAIN: main, **{name: ask(worded_task(task, language, name)) for name in names[1:]}}
    primary = task.primary_metric
    rows = []
    for name, answers in asked.items():
        metrics = answers.metrics
        row = {"name": name, "primary": _number(metrics.get(primary)),
               "primary_ci_low": _number(metrics.get(f"{primary}_ci_low")),
               "primary_ci_high": _number(metrics.get(f"{primary}_ci_high"))}  # fmt: skip
        if "invalid_rate" in metrics:
            row["invalid_rate"] = _number(metrics["invalid_rate"])
        rows.append(row)
    section = {"protocol": PROTOCOL, "prompt_language": language, "primary_metric": primary, "main": MAIN,
               "n_items": len(main.predictions), "wordings": rows, **summary([r["primary"] for r in rows]),
               "note": NOTE}  # fmt: skip
    records = [{name: {"prediction": a.predictions[i], **a.extras[i]} for name, a in asked.items()}
               for i in range(len(main.predictions))]  # fmt: skip
    return WordingRobustness(section, records)


def _worded(rows: Sequence[Mapping[str, Any]], name: str) -> list[dict[str, Any]]:
    return [{**row, "prediction": row[FIELD][name]["prediction"]} for row in rows]


def vs_main(
    rows: Sequence[Mapping[str, Any]], names: Sequence[str], problem_of: Problem, metric: str, resamples: int, seed: int
) -> dict[str, tuple[dict[str, float | None] | None, str | None]]:
    """Per wording but the main one: its paired bootstrap test against the main wording on the same items (the
    difference wording minus main, its interval, p and Holm's p across the wordings tested), or None and why."""
    main = problem_of(_worded(rows, MAIN))
    tests: dict[str, Any] = {}
    for name in names[1:]:
        problem = problem_of(_worded(rows, name))
        scores = [p.point_estimates().get(metric) for p in (problem, main)]
        if any(s is None or not math.isfinite(s) for s in scores):
            tests[name] = f"{metric} is undefined for this wording or the main one"
            continue
        try:
            tests[name] = paired_test(problem, main, metric, method="bootstrap", resamples=resamples, seed=seed)
        except NlueError as exc:
            tests[name] = str(exc)
    done = [name for name, t in tests.items() if not isinstance(t, str)]
    adjusted = dict(zip(done, holm([tests[name].p_value for name in done]), strict=True))
    return {name: (None, t) if isinstance(t, str) else
            ({"difference": t.difference, "ci_low": _number(t.ci_low), "ci_high": _number(t.ci_high),
              "p_value": t.p_value, "p_holm": adjusted[name]}, None) for name, t in tests.items()}  # fmt: skip


def add_paired_tests(
    section: dict[str, Any], rows: Sequence[Mapping[str, Any]], problem_of: Problem, resamples: int | None, seed: int
) -> None:
    """Put each other wording's test against the main one (:func:`vs_main`) into ``section``, from the run's
    predictions ``rows`` scored by ``problem_of`` as :mod:`nlue.evals.verify` scores them; ``resamples``: the
    run's bootstrap resamples (none: no test, and the reason)."""
    names = [w["name"] for w in section["wordings"]]
    if resamples:
        section["paired_test"] = {"method": "bootstrap", "resamples": int(resamples), "seed": int(seed),
                                  "against": MAIN, "adjustment": "holm"}  # fmt: skip
        tests = vs_main(rows, names, problem_of, section["primary_metric"], int(resamples), int(seed))
    else:
        tests = {name: (None, "the run has no bootstrap (--bootstrap-resamples 0)") for name in names[1:]}
    for entry in section["wordings"][1:]:
        entry["vs_main"], reason = tests[entry["name"]]
        if reason is not None:
            entry["vs_main_reason"] = reason


def _paired_disagreements(
    section: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], names: list[str], problem_of: Problem
) -> list[tuple[str, Any, float | None]]:
    """(name, stored, recomputed) of each ``vs_main`` number; none for an older file without the tests."""
    stored = section["wordings"]
    if not any("vs_main" in w for w in stored[1:]):
        return []
    settings = section.get("paired_test")
    if settings is None:
        return [(f"wording {w['name']} vs_main", w.get("vs_main"), None) for w in stored[1:]]
    resamples, seed = settings.get("resamples"), settings.get("seed")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (resamples, seed)) or not (
        0 < resamples <= MAX_TEST_RESAMPLES
    ):
        raise NlueError(f"paired_test resamples {resamples!r} and seed {seed!r} are not whole numbers in range")
    tests = vs_main(rows, names, problem_of, str(section.get("primary_metric")), resamples, seed)
    found: list[tuple[str, Any, float | None]] = []
    for name, w in zip(names[1:], stored[1:], strict=True):
        given, _ = tests[name]
        value = w.get("vs_main")
        if given is None:
            found += [] if value is None else [(f"wording {name} vs_main", value, None)]
            continue
        value = value if isinstance(value, Mapping) else {}  # a test missing: each of its numbers is refused
        found += [(f"wording {name} vs_main {key}", value.get(key), given[key]) for key in PAIRED]
    return found


def disagreements(
    section: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    primary_of: Callable[[list[dict[str, Any]]], float],
    problem_of: Problem | None = None,
) -> list[str]:
    """Each number of a stored section that its predictions rows do not give (empty: they agree).

    ``primary_of`` rescores rows (each with the wording's answer as its ``prediction``) as the run's own
    score is rescored (:func:`nlue.evals.verify.recompute_metrics`).
    """
    stored = section.get("wordings")
    if not isinstance(stored, list) or not stored or not all(isinstance(w, Mapping) for w in stored):
        return [f"{SECTION}: no list of wordings"]
    names = [w.get("name") for w in stored]
    try:
        if names[0] != MAIN or len(set(names)) != len(names):
            raise NlueError(f"the wordings {names} are not the main one first, each once")
        if any(set(row[FIELD]) != set(names) for row in rows):
            raise NlueError(f"a row's wordings are not {', '.join(map(str, names))}")
        if any(row[FIELD][MAIN]["prediction"] != row["prediction"] for row in rows):
            raise NlueError("the main wording's answers are not the run's own")
        values = [primary_of(_worded(rows, name)) for name in names]
        paired = _paired_disagreements(section, rows, names, problem_of) if problem_of else []
    except (KeyError, TypeError, ValueError, NlueError) as exc:
        return [f"{SECTION}: its predictions cannot be scored ({exc})"]
    given = [_number(v) for v in values]
    pairs = [(f"wording {name} primary", w.get("primary"), v) for name, w, v in zip(names, stored, given, strict=True)]
    pairs += [(name, section.get(name), value) for name, value in summary(given).items()]
    pairs += paired
    found = []
    for name, value, expected in pairs:
        if expected is None:
            if value is not None:
                found.append(f"{SECTION} {name}: stored {value!r}, its predictions give none")
        elif _number(value) is None or abs(float(value) - expected) > TOLERANCE:
            found.append(f"{SECTION} {name}: stored {value!r}, its predictions give {expected:.6g}")
    return found


def _percent(value: Any) -> str:
    return f"{100 * value:.1f}" if _number(value) is not None else "n/a"


VS_MAIN_HEADER = "vs main (points) [95% CI], p"


def vs_main_text(entry: Mapping[str, Any], adjusted: bool) -> str:
    """A wording's test against the main one in one cell: the difference in points, its interval and p (with
    Holm's p when ``adjusted``: more than one wording tested); n/a where there is none."""
    from nlue.evals.compare.cli import p_text

    test = entry.get("vs_main")
    if not isinstance(test, Mapping) or any(_number(test.get(k)) is None for k in ("difference", "p_value")):
        return "n/a"
    low, high = test.get("ci_low"), test.get("ci_high")
    text = f"{100 * test['difference']:+.1f}"
    text += f" [{100 * low:+.1f}, {100 * high:+.1f}]" if _number(low) is not None and _number(high) is not None else ""
    text += f", p {p_text(test['p_value'])}"
    holm_p = _number(test.get("p_holm"))
    return text + (f" (Holm {p_text(holm_p)})" if adjusted and holm_p is not None else "")


def wording_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """The section as table rows (header first): wording, primary [95% CI], invalid % (by generation), and the
    test against the main wording where the file has one."""
    from nlue.text.safe import terminal_safe

    entries = [w for w in section.get("wordings") or [] if isinstance(w, Mapping)]
    invalid = any("invalid_rate" in w for w in entries)
    tested = any("vs_main" in w for w in entries)
    adjusted = sum(isinstance(w.get("vs_main"), Mapping) for w in entries) > 1
    metric = terminal_safe(section.get("primary_metric"))
    rows = [["wording", f"{metric} % [95% CI]", *(["invalid %"] if invalid else []),
             *([VS_MAIN_HEADER] if tested else [])]]  # fmt: skip
    for w in entries:
        low, high = w.get("primary_ci_low"), w.get("primary_ci_high")
        interval = (
            f" [{_percent(low)}, {_percent(high)}]" if _number(low) is not None and _number(high) is not None else ""
        )
        name = terminal_safe(w.get("name")) + (" (the run's score)" if w.get("name") == MAIN else "")
        versus = "" if w.get("name") == MAIN else vs_main_text(w, adjusted)
        rows.append([name, _percent(w.get("primary")) + interval,
                     *([_percent(w.get("invalid_rate"))] if invalid else []), *([versus] if tested else [])])  # fmt: skip
    return rows


def spread_line(section: Mapping[str, Any]) -> str:
    """The spread beside the score, in one line (every value a number or n/a)."""
    count = len([w for w in section.get("wordings") or [] if isinstance(w, Mapping)])
    return (f"spread over {count} wordings (highest - lowest) {_percent(section.get('spread'))} points, "
            f"std {_percent(section.get('std'))}, mean {_percent(section.get('mean'))}")  # fmt: skip


def wording_text(task: str, section: Mapping[str, Any]) -> str:
    """The section for a terminal."""
    from nlue.text.safe import terminal_safe

    return "\n".join([f"{terminal_safe(task)}: prompt wordings (ours; the same items, demonstrations and label "
                      f"words in each wording, {terminal_safe(section.get('prompt_language'))} prompt):",
                      text_table(wording_rows(section)), spread_line(section)])  # fmt: skip
