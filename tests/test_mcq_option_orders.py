"""Option-order robustness of the exams (issue 32, item 3): `nlue llm mcq --option-orders cyclic`.

* the rotations move the key with its option (a property over drawn items, and the sample exam);
* fake deterministic models whose every number can be counted by hand: one that always answers
  "A" (accuracy 1/4 per rotation when the keys differ, letter A chosen every time, no item
  consistent) and one that always picks the gold text (everything right and consistent), in the
  summary and through :func:`run_mcq` in both modes;
* the section is recomputed from the predictions file (a tampered number is refused);
* `nlue report` shows a row per rotated run;
* a real run on a tiny LM through the CLI in both modes: the section, the per-rotation rows, a run
  folder and identity of its own, and the same command again asks the model nothing.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlue.cli import main
from nlue.evals.mcq.order_robustness import FIELD, SECTION, ask_rotations, disagreements
from nlue.evals.mcq.parse import ParseResult
from nlue.evals.mcq.permute import original_letter, rotate_item, rotated_items
from nlue.evals.mcq.prompts import render
from nlue.evals.mcq.run import load_exam, run_mcq, without_gold
from nlue.evals.verify import check_file
from nlue.lm.base import Generation, GenerationRequest, Loglikelihood, LoglikelihoodRequest
from nlue.lm.description import Capabilities, ModelDescription
from nlue.registry.kinds.mcq_text import LETTERS
from nlue.registry.tasks import get_task
from nlue.run_identity import identity_key
from tests.backend_calls import BackendCalls

KEYS = (0, 1, 2, 3)  # four items keyed A, B, C and D


def _items(keys: Sequence[int] = KEYS) -> list[dict[str, Any]]:
    """Exam items in our own words, keyed as ``keys`` say."""
    out = []
    for number, key in enumerate(keys):
        options = {letter: f"उत्तर {letter.lower()}{number}" for letter in LETTERS}
        out.append({"id": f"own-{number}", "question": f"प्रश्न {number}: कुन ठीक हो?", **options, "correct_key": key,
                    "correct_option": options[LETTERS[key]], "domain": "STEM", "subdomain": "mathematics",
                    "level": "Grade 8", "language": "ne"})  # fmt: skip
    return out


# ------------------------------------------------------------------ rotations
@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(min_size=1, max_size=8), min_size=4, max_size=4, unique=True),
    key=st.integers(0, 3),
    rotation=st.integers(0, 3),
    as_letter=st.booleans(),
)
def test_a_rotation_moves_the_key_with_its_option(texts: list[str], key: int, rotation: int, as_letter: bool) -> None:
    """issue 32, item 3: under every rotation the key's letter names the gold text, and the options turn in a cycle."""
    item = {"id": "x", "question": "?", **dict(zip(LETTERS, texts, strict=True)),
            "correct_key": LETTERS[key] if as_letter else key, "correct_option": texts[key]}  # fmt: skip
    rotated = rotate_item(item, rotation)
    moved = rotated["correct_key"]
    letter = moved if as_letter else LETTERS[moved]
    assert isinstance(moved, str) is as_letter
    assert rotated[letter] == texts[key] == rotated["correct_option"]  # the gold text, under its new letter
    assert [rotated[x] for x in LETTERS] == texts[rotation:] + texts[:rotation]
    assert original_letter(letter, rotation, 4) == LETTERS[key]
    assert all(original_letter(x, rotation, 4) == LETTERS[texts.index(rotated[x])] for x in LETTERS)
    if rotation == 0:
        assert rotated == item


def test_the_sample_exam_under_each_rotation(exam_build) -> None:
    """issue 32, item 3: every item's key sits once at each letter over its rotations, and the prompt shows them."""
    task = get_task("mcq_ne")
    items, _ = load_exam(str(exam_build.repo_dir), task, 0, 6)
    for item in items:
        turns = [rotate_item(item, r) for r in range(4)]
        assert sorted(LETTERS[t["correct_key"]] for t in turns) == list(LETTERS)
        assert {t[LETTERS[t["correct_key"]]] for t in turns} == {item[LETTERS[item["correct_key"]]]}
        for rotation, turned in enumerate(turns):
            prompt = render(without_gold(turned, task), "en", task=task)[-1]["content"]
            shown = [item[LETTERS[(j + rotation) % 4]] for j in range(4)]
            assert "\n".join(f"{x}) {text}" for x, text in zip(LETTERS, shown, strict=True)) in prompt


# ------------------------------------------------------------------ the summary, with fake answers
def _asker(choose: Callable[[dict[str, Any]], str | None]) -> Callable[[list[dict[str, Any]]], Any]:
    """What a run's mode returns for ``items`` shown in some order: ``choose(shown item)`` is the letter (None:
    an invalid answer)."""

    def ask(shown: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]], list[ParseResult]]:
        parses = []
        for item in shown:
            letter = choose(item)
            parses.append(ParseResult(letter, item[letter]) if letter else ParseResult(None, None, "no_key_line"))
        return [f"hash-{i}" for i in range(len(shown))], [{"output": "?"} for _ in shown], parses

    return ask


def _gold_text(item: dict[str, Any]) -> str:
    return next(x for x in LETTERS if item[x] == item["correct_option"])


def _summary(choose: Callable[[dict[str, Any]], str | None], items: list[dict[str, Any]]):
    ask = _asker(choose)
    return ask_rotations(ask, items, ask(rotated_items(items, 0)), "cyclic", 200, 7)


def _rows(items: list[dict[str, Any]], records: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [
        {"id": it["id"], FIELD: rec, "gold": LETTERS[it["correct_key"]]} for it, rec in zip(items, records, strict=True)
    ]


def test_a_model_that_always_answers_a_shows_its_bias() -> None:
    """issue 32, item 3: always "A" on four items keyed A-D: 25% under every rotation, A chosen 100%, none consistent."""
    items = _items()
    orders = _summary(lambda item: "A", items)
    section = orders.section
    assert [r["accuracy_all_items"] for r in section["rotations"]] == [0.25] * 4
    assert all(r["accuracy_all_items_ci_low"] <= 0.25 <= r["accuracy_all_items_ci_high"] for r in section["rotations"])
    assert [r["order"] for r in section["rotations"]] == ["ABCD", "BCDA", "CDAB", "DABC"]
    assert section["consistent_share"] == 0.0 and section["accuracy_spread"] == 0.0
    assert section["letter_choice_shares"] == {"A": 1.0, "B": 0.0, "C": 0.0, "D": 0.0, "invalid": 0.0}
    assert section["letter_key_shares"] == dict.fromkeys(LETTERS, 0.25)
    assert [r["option"] for r in orders.records[0]] == ["A", "B", "C", "D"]  # the options chosen, by their own letters
    assert disagreements(section, _rows(items, orders.records)) == []


def test_a_model_that_picks_the_gold_text_is_right_and_consistent() -> None:
    """issue 32, item 3: the gold text wherever it is shown: 100% under every rotation and every item consistent."""
    items = _items((3, 3, 1, 0, 2))
    section = _summary(_gold_text, items).section
    assert [r["accuracy_all_items"] for r in section["rotations"]] == [1.0] * 4
    assert section["consistent_share"] == section["consistent_correct_share"] == 1.0
    assert section["letter_choice_shares"] == {**section["letter_key_shares"], "invalid": 0.0}


def test_an_invalid_answer_makes_an_item_inconsistent_and_a_changed_number_is_refused() -> None:
    """issue 32, item 3: one invalid answer of 16 (the rest gold): 15 of 16 right, 3 of 4 items consistent; a stored
    number its rows do not give is named."""
    items = _items()
    seen: list[int] = []

    def choose(item: dict[str, Any]) -> str | None:
        seen.append(1)
        return None if len(seen) == 9 else _gold_text(item)  # the 9th answer: item 0 under rotation 2

    orders = _summary(choose, items)
    section = orders.section
    assert [r["accuracy_all_items"] for r in section["rotations"]] == [1.0, 1.0, 0.75, 1.0]
    assert section["consistent_share"] == 0.75 and section["letter_choice_shares"]["invalid"] == 1 / 16
    rows = _rows(items, orders.records)
    assert disagreements({**section, "consistent_share": 1.0}, rows) == [
        f"{SECTION} consistent_share: stored 1.0, its predictions give 0.75"
    ]
    rows[0][FIELD][2] = {**rows[0][FIELD][2], "option": "A"}  # the rows say item 0 was answered under rotation 2
    assert any("rotation 2 accuracy_all_items" in problem for problem in disagreements(section, rows))


# ------------------------------------------------------------------ through run_mcq, scripted models, both modes
_OPTION_LINE = re.compile(r"^([A-D])\) (.*)$", re.MULTILINE)


def _shown_options(text: str) -> dict[str, str]:
    """The options of the item a prompt ends with (its last block; demonstrations come before)."""
    return dict(_OPTION_LINE.findall(text.rsplit("\n\n", 1)[-1]))


class FakeExamTaker:
    """A model that reads the options it is shown and picks one by ``policy(shown options, gold text)``, in either
    mode (a log-likelihood of 0 for its pick, -5 for the rest)."""

    def __init__(self, items: Sequence[dict[str, Any]], policy: Callable[[dict[str, str], str], str]) -> None:
        self.gold = {item["question"]: item[LETTERS[item["correct_key"]]] for item in items}
        self.policy = policy
        self.shown: list[tuple[str, ...]] = []

    name = "scripted:order-taker"

    def describe(self) -> ModelDescription:
        return ModelDescription("scripted", self.name, "scripted", Capabilities(generate=True, loglikelihood=True,
                                                                                  chat=True))  # fmt: skip

    def _pick(self, text: str) -> tuple[str, dict[str, str]]:
        options = _shown_options(text)
        (gold,) = [g for q, g in self.gold.items() if q in text.rsplit("\n\n", 1)[-1]]
        self.shown.append(tuple(options.values()))
        return self.policy(options, gold), options

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        out = []
        for request in requests:
            letter, options = self._pick(request.messages[-1].content if request.messages else request.prompt or "")
            out.append(Generation(f"Answer key: {letter}\nAnswer text: {options[letter]}", 9, 4, "stop"))
        return out

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        picks = [self._pick(r.context)[0] for r in requests]
        return [
            Loglikelihood(0.0 if r.continuation.strip() == p else -5.0, False)
            for r, p in zip(requests, picks, strict=True)
        ]


def always_a(options: dict[str, str], gold: str) -> str:
    return "A"


def gold_text(options: dict[str, str], gold: str) -> str:
    return next(letter for letter, text in options.items() if text == gold)


@pytest.mark.parametrize("mode", ["generate", "loglik"])
def test_fake_models_through_the_runner(exam_build, tmp_path: Path, mode: str) -> None:
    """issue 32, item 3: both modes write the section, per-rotation predictions that recompute it, and a run of its
    own (name and identity) beside the unrotated one."""
    dataset, task = str(exam_build.repo_dir), get_task("mcq_ne")
    items, _ = load_exam(dataset, task, 0, 5)
    runs = {}
    for policy in (always_a, gold_text):
        model = FakeExamTaker(items, policy)
        runs[policy] = run_mcq(model, dataset, "mcq_ne", "en", 0, tmp_path, policy.__name__, mode=mode, limit=5,
                               bootstrap_resamples=100, chart=False, option_orders="cyclic")  # fmt: skip
        per_item = len(model.shown) // (5 * 4)  # loglik: each option is a request with the same context
        assert [len(set(model.shown[i * per_item :: 5 * per_item])) for i in range(5)] == [4] * 5  # 4 orders each
    section = runs[always_a].result.details[SECTION]
    expected = [sum((k - r) % 4 == 0 for k in (i["correct_key"] for i in items)) / 5 for r in range(4)]
    assert [r["accuracy_all_items"] for r in section["rotations"]] == expected  # keys moved to A under rotation r
    assert section["accuracy_mean"] == pytest.approx(0.25)  # each item is right under exactly one rotation
    assert section["letter_choice_shares"]["A"] == 1.0 and section["consistent_share"] == 0.0
    assert runs[always_a].result.metrics["accuracy_all_items"] == expected[0]  # rotation 0 is the run itself
    good = runs[gold_text].result.details[SECTION]
    assert good["consistent_share"] == 1.0 and [r["accuracy_all_items"] for r in good["rotations"]] == [1.0] * 4

    run = runs[always_a]
    suffix = "-loglik" if mode == "loglik" else ""
    assert run.name == f"always_a__en-0shot{suffix}-orders-cyclic-limit5"
    saved = json.loads(run.result_path.read_text(encoding="utf-8"))
    rows = [json.loads(x) for x in (run.result_path.parent / saved["predictions"]).read_text("utf-8").splitlines()]
    assert [len(row[FIELD]) for row in rows] == [4] * 5 and list(rows[0])[-1] == "gold"
    assert check_file(run.result_path, saved).verified
    saved["details"][SECTION]["letter_choice_shares"]["A"] = 0.5
    refused = check_file(run.result_path, saved)
    assert refused.status == "refused" and "letter_choice_shares.A: stored 0.5" in refused.reason

    plain = run_mcq(FakeExamTaker(items, always_a), dataset, "mcq_ne", "en", 0, tmp_path, "always_a", mode=mode,
                    limit=5, bootstrap_resamples=100, chart=False)  # fmt: skip
    assert plain.name == f"always_a__en-0shot{suffix}-limit5" and SECTION not in plain.result.details
    assert identity_key(plain.result.identity) != identity_key(run.result.identity)
    assert run.result_path.is_file() and plain.result_path.is_file()  # neither replaced the other

    if mode == "generate":  # nlue report: one row per rotated run, none for the plain one
        assert main(["report", str(tmp_path), "--out", str(tmp_path / "report"), "-q"]) == 0
        with (tmp_path / "report" / "mcq_option_orders.csv").open(encoding="utf-8") as handle:
            table = {row["run"]: row for row in csv.DictReader(handle)}
        assert set(table) == {run.name, runs[gold_text].name}
        row = table[run.name]
        assert [float(row[f"rotation {r} (%)"]) for r in range(4)] == [100 * x for x in expected]
        assert (row["A chosen (%)"], row["consistent (%)"], row["numbers"]) == ("100.0", "0.0", "ours")


# ------------------------------------------------------------------ a real run on a tiny LM, as a user runs it
@pytest.mark.parametrize("mode", ["generate", "loglik"])
def test_a_tiny_lm_from_the_command_line(
    exam_build, tiny_lms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, mode: str
) -> None:
    """issue 32, item 3: the CLI writes the section and the per-rotation predictions; rotation 0 and a repeated
    command come from the answer journal, so the same command again asks the model nothing."""
    results = tmp_path / "results"
    argv = ["llm", "mcq", "--model", str(tiny_lms["gpt2"]), "--dataset", str(exam_build.repo_dir), "--task", "mcq_ne",
            "--mode", mode, "--limit", "2", "--max-new-tokens", "4", "--bootstrap-resamples", "20", "--no-chart",
            "--results-dir", str(results), "--device", "cpu", "-q"]  # fmt: skip
    calls = BackendCalls(monkeypatch)
    assert main(argv) == 0
    asked = calls.count
    assert asked == (2 if mode == "generate" else 2 * 4)
    assert main([*argv, "--option-orders", "cyclic"]) == 0
    assert calls.since(asked) == 3 * asked  # rotations 1-3; rotation 0 is the unrotated run's prompts, journalled
    printed = capsys.readouterr().out
    assert "option-order robustness (ours; 4 cyclic rotations" in printed and "chosen %" in printed
    assert re.search(r"^3 +DABC +\d", printed, re.MULTILINE) and "consistent (same option under every" in printed
    again = calls.count
    assert main([*argv, "--option-orders", "cyclic"]) == 0
    assert calls.since(again) == 0  # every prompt of every rotation answered from the journal

    suffix = "-loglik" if mode == "loglik" else ""
    result_path = results / f"gpt2__en-0shot{suffix}-orders-cyclic-limit2" / "mcq_ne.json"
    saved = json.loads(result_path.read_text(encoding="utf-8"))
    section = saved["details"][SECTION]
    assert section["rotations_per_item"] == 4 and section["protocol"].startswith("ours")
    assert sum(section["letter_key_shares"].values()) == pytest.approx(1.0)
    assert saved["identity"]["settings"]["option_orders"] == "cyclic"
    plain = json.loads((results / f"gpt2__en-0shot{suffix}-limit2" / "mcq_ne.json").read_text(encoding="utf-8"))
    assert "option_orders" not in plain["identity"]["settings"] and plain["identity_key"] != saved["identity_key"]
    rows = [json.loads(x) for x in (result_path.parent / saved["predictions"]).read_text("utf-8").splitlines()]
    assert [[r["rotation"] for r in row[FIELD]] for row in rows] == [[0, 1, 2, 3]] * 2
    assert all(r["option"] in (*LETTERS, None) for row in rows for r in row[FIELD])
    assert check_file(result_path, saved).verified
