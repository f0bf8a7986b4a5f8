"""Prompt-wording robustness (issue 32, item 4): `nlue llm nlue|mcq --wordings all`.

* task files declare other wordings of a prompt (``prompts.<lang>.wordings``), checked with errors that name the
  file and the key; every shipped task with an LLM prompt has at least two wordings per prompt language;
* a fake model whose answer depends only on the wording, so every wording's macro-F1 and their spread are
  known numbers (sklearn computes them from the gold labels), in both modes and on an exam;
* the section is rescored from the predictions file (a tampered spread is refused), the run has a folder and an
  identity of its own, and a run without ``--wordings`` keeps the name and identity it had;
* a tiny LM through the command line: the main wording comes from the answer cache, a rerun asks nothing.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import f1_score

from nlue.cli import main
from nlue.evals.llm.nlue_generate import run_nlue_generation
from nlue.evals.llm.nlue_llm import run_nlue_llm, task_splits
from nlue.evals.llm.wordings import FIELD, SECTION, disagreements
from nlue.evals.mcq.run import load_exam, run_mcq
from nlue.evals.verify import check_file
from nlue.lm.base import Generation, GenerationRequest, Loglikelihood, LoglikelihoodRequest
from nlue.lm.description import Capabilities, ModelDescription
from nlue.registry.declaration import task_fingerprint
from nlue.registry.kinds.mcq_text import LETTERS
from nlue.registry.tasks import TASKS, get_task
from nlue.registry.wordings import MAIN, worded_task, wording_names
from nlue.run_identity import identity_key
from tests.backend_calls import BackendCalls

GOLD = "gold"


class WordingReader:
    """A model whose answer depends on the wording alone, in either mode (log-likelihood 0 for its word, -5 for the
    rest): under wording ``w`` it answers the label ``choice[w]``, or the gold label where that is :data:`GOLD`
    (it finds the item's gold by the item's fields in the prompt; the wording is told by its instruction)."""

    name = "scripted:wording-reader"

    def __init__(self, task: Any, language: str, choice: dict[str, int | str], items: Sequence[dict] = ()) -> None:
        self.words = task.prompts[language].label_words
        self.instructions = {name: worded_task(task, language, name).prompts[language].instruction
                             for name in wording_names(task, language)}  # fmt: skip
        self.gold = [([str(item[f]) for f in task.input_fields], int(item[str(task.label_field)])) for item in items]
        self.choice = choice
        self.asked: list[str] = []  # the wording of every request
        self.texts: list[str] = []  # and its text, as sent

    def describe(self) -> ModelDescription:
        return ModelDescription("scripted", self.name, "scripted", Capabilities(generate=True, loglikelihood=True,
                                                                                  chat=False))  # fmt: skip

    def _word(self, text: str) -> str:
        (name,) = [n for n, instruction in self.instructions.items() if text.startswith(instruction)]
        self.asked.append(name)
        self.texts.append(text)
        label = self.choice[name]
        if label == GOLD:
            (label,) = {gold for fields, gold in self.gold if all(f in text for f in fields)}
        return self.words[int(label)]

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        return [Generation(self._word(r.prompt or ""), 3, 1, "stop") for r in requests]

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        return [Loglikelihood(0.0 if r.continuation.strip() == self._word(r.context) else -5.0, False)
                for r in requests]  # fmt: skip


# ------------------------------------------------------------------ task files
USER_TASK = """\
name: ur_mood
title: Urdu mood
description: Decide whether a short Urdu note is glad or sad.
languages: [ur]
kind: classification
inputs:
  fields: [text]
label_field: label
labels: [sad, glad]
prompts:
  ur:
    instruction: کیا اس تحریر کا مزاج اداس ہے یا خوش؟
    field_labels: {text: تحریر}
    answer_cue: "جواب:"
    label_words: [اداس, خوش]
    answer_line: {template: "ان میں سے ایک لفظ لکھیں: {words}۔", separator: "، "}
    wordings:
    - name: short
      instruction: مزاج بتائیں، اداس یا خوش؟
      field_labels: {text: متن}
    - name: cue
      answer_cue: "مزاج:"
      answer_line: {template: "صرف ایک لفظ: {words}۔", separator: "، "}
"""
BAD_WORDINGS = """\
    - name: short
      answer_cue: "جواب:"
    - name: main
      instruction: x
    - name: twice
      instruction: y
      label_words: [a, b]
    - name: twice
      field_labels: {title: عنوان}
      number_line: {template: "{low} {high}"}
    - name: Bad-Name
      instruction: z
    - name: empty
"""
BAD_PROBLEMS = [  # (key path, words of the message)
    ("prompts.ur.wordings[0]", "exactly as the main prompt does"),
    ("prompts.ur.wordings[1].name", "main is the prompt itself"),
    ("prompts.ur.wordings[2].label_words", "keeps the prompt's label words"),
    ("prompts.ur.wordings[3].name", "names an earlier wording too"),
    ("prompts.ur.wordings[3].field_labels.title", "not a field this prompt shows"),
    ("prompts.ur.wordings[3].number_line", "not to a classification task"),
    ("prompts.ur.wordings[4].name", "lower-case letters, digits and _"),
    ("prompts.ur.wordings[5]", ""),
]


def test_a_task_file_declares_wordings_and_each_keeps_the_label_words(tmp_path: Path) -> None:
    """issue 32, item 4: a wording replaces only what it gives (field labels one by one), never the label words;
    the main wording is the task itself."""
    from nlue.registry.task_file.load import check_file, load_task_file

    path = tmp_path / "ur_mood.yaml"
    path.write_text(USER_TASK, encoding="utf-8")
    assert check_file(path) == []
    task = load_task_file(path)
    assert wording_names(task, "ur") == (MAIN, "short", "cue") and worded_task(task, "ur", MAIN) is task
    short, cue = worded_task(task, "ur", "short"), worded_task(task, "ur", "cue")
    assert short.prompts["ur"].instruction == "مزاج بتائیں، اداس یا خوش؟" and short.prompts["ur"].answer_cue == "جواب:"
    assert dict(short.prompts["ur"].field_labels) == {"text": "متن"} and short.answer_line("ur") == task.answer_line(
        "ur"
    )
    assert cue.prompts["ur"].instruction == task.prompts["ur"].instruction and cue.prompts["ur"].answer_cue == "مزاج:"
    assert cue.answer_line("ur").render(["اداس", "خوش"]) == "صرف ایک لفظ: اداس، خوش۔"
    assert {w.prompts["ur"].label_words for w in (task, short, cue)} == {("اداس", "خوش")}


def test_bad_wordings_are_named_by_file_and_key(tmp_path: Path) -> None:
    """issue 32, item 4: a wording that changes nothing, takes the main name or another's, rewords the label words,
    labels a field the prompt lacks, carries a key its kind does not read, or has a bad name: each named."""
    from nlue.registry.task_file.load import check_file
    from nlue.registry.task_file.problems import key_path

    path = tmp_path / "bad.yaml"
    path.write_text(USER_TASK.split("    wordings:\n")[0] + "    wordings:\n" + BAD_WORDINGS, encoding="utf-8")
    problems = check_file(path)
    found = [(key_path(p.path), p.message) for p in problems]
    for key, words in BAD_PROBLEMS:
        assert any(k == key and words in m for k, m in found), (key, words, found)
    assert all(p.file == str(path) and p.line for p in problems)


def test_every_shipped_task_with_an_llm_prompt_has_two_wordings_per_language() -> None:
    """issue 32, item 4: each shipped task and prompt language has the main wording and at least one more (GMET, a
    masked-LM task, has no LLM prompt); every wording keeps an exam's two answer lines, which its parser reads."""
    asked = {name: task for name, task in TASKS.items() if task.prompts or task.idiom_prompts}
    assert set(TASKS) - set(asked) == {"gmet"}
    for name, task in asked.items():
        for language in dict.fromkeys([*task.prompts, *task.idiom_prompts]):
            names = wording_names(task, language)
            assert len(names) >= 2, (name, language)
            texts = {repr(worded_task(task, language, w).prompts.get(language)) for w in names}
            texts |= {repr(worded_task(task, language, w).idiom_prompts.get(language)) for w in names}
            assert len(texts - {"None"}) == len(names), (name, language)  # each wording words it differently
            if name.startswith("mcq"):
                for wording in names:
                    instruction = worded_task(task, language, wording).prompts[language].instruction
                    assert "Answer key: <" in instruction and "Answer text: <" in instruction, (name, wording)


# ------------------------------------------------------------------ runs with a model that reads the wording
def _expected(golds: Sequence[int], answers: dict[str, int | str]) -> dict[str, float]:
    return {name: f1_score(golds, golds if label == GOLD else [label] * len(golds), average="macro")
            for name, label in answers.items()}  # fmt: skip


@pytest.mark.parametrize("mode", ["loglik", "generate"])
def test_each_wording_is_scored_and_the_spread_is_known(tmp_path: Path, mode: str) -> None:
    """issue 32, item 4: a model right under the main wording and answering "neutral" to everything under the plain
    one: each wording's macro-F1 is sklearn's on those answers, the spread is their difference, the run's score is
    the main wording's; the predictions rescore it (verify) and a tampered spread is refused."""
    task = get_task("mnli")
    test, _ = task_splits(None, task, 0, None)
    golds = list(test["label"])
    answers: dict[str, int | str] = {"main": GOLD, "plain": 1}
    model = WordingReader(task, "en", answers, list(test))
    run = run_nlue_llm if mode == "loglik" else partial_generation
    result = run(model, None, [task], "en", 0, tmp_path, "reader-wordings-all", bootstrap_resamples=50,
                 wordings="all")["mnli"]  # fmt: skip
    section = result.details[SECTION]
    expected = _expected(golds, answers)
    assert expected["main"] == 1.0 and expected["plain"] < 0.5
    assert [w["name"] for w in section["wordings"]] == ["main", "plain"]
    assert [w["primary"] for w in section["wordings"]] == pytest.approx([expected["main"], expected["plain"]])
    assert section["spread"] == pytest.approx(abs(expected["main"] - expected["plain"]))
    assert section["std"] == pytest.approx(statistics.stdev(expected.values()))
    assert result.metrics["macro_f1"] == pytest.approx(expected["main"])  # the run's score: the main wording's
    assert all(w["primary_ci_low"] <= w["primary"] <= w["primary_ci_high"] for w in section["wordings"])
    assert ("invalid_rate" in section["wordings"][0]) is (mode == "generate")
    assert model.asked.count("plain") == model.asked.count("main") > 0

    path = tmp_path / "reader-wordings-all" / "mnli.json"
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert check_file(path, saved).verified
    rows = [json.loads(x) for x in (path.parent / saved["predictions"]).read_text("utf-8").splitlines()]
    assert {row[FIELD]["plain"]["prediction"] for row in rows} == {1} and list(rows[0])[-1] == "gold"
    tampered = json.loads(json.dumps(saved))
    tampered["details"][SECTION]["spread"] = 0.0
    refused = check_file(path, tampered)
    assert refused.status == "refused" and f"{SECTION} spread: stored 0.0" in refused.reason
    rows[0][FIELD]["plain"]["prediction"] = 0  # the rows no longer give the stored plain wording's score
    assert any("wording plain primary" in p for p in disagreements(saved["details"][SECTION], rows, _macro_f1))


def partial_generation(*args: Any, **kwargs: Any) -> dict[str, Any]:
    return run_nlue_generation(*args, chat=False, **kwargs)


def _macro_f1(rows: list[dict[str, Any]]) -> float:
    return f1_score([r["gold"] for r in rows], [r["prediction"] for r in rows], average="macro")


def test_a_run_without_wordings_is_the_run_it_was(tmp_path: Path) -> None:
    """issue 32, item 4: the wordings stay out of a task's declaration fingerprint, a run without --wordings keeps
    its identity and sends the very requests it sent; a --wordings all run sends them first, then the others',
    and has an identity of its own."""
    task = get_task("sa")
    assert task_fingerprint(task) == task_fingerprint(dataclasses.replace(task, prompt_wordings={}))
    test, _ = task_splits(None, task, 0, None)
    models = [WordingReader(task, "ne", {"main": GOLD, "plain": 0}, list(test)) for _ in range(2)]
    plain = run_nlue_llm(models[0], None, [task], "ne", 0, tmp_path, "r__ne-0shot", bootstrap_resamples=20)["sa"]
    both = run_nlue_llm(models[1], None, [task], "ne", 0, tmp_path, "r__ne-0shot-wordings-all", bootstrap_resamples=20,
                        wordings="all")["sa"]  # fmt: skip
    assert "prompt_wordings" not in plain.identity["settings"] and SECTION not in plain.details
    assert both.identity["settings"]["prompt_wordings"]["names"] == ["main", "plain"]
    assert identity_key(plain.identity) != identity_key(both.identity)
    assert {k: v for k, v in plain.identity.items() if k != "settings"} == {
        k: v for k, v in both.identity.items() if k != "settings"
    }
    assert models[1].texts[: len(models[0].texts)] == models[0].texts  # the main wording: the same requests
    assert set(models[1].asked[len(models[0].texts) :]) == {"plain"} and plain.metrics == both.metrics


# ------------------------------------------------------------------ an exam
class ExamWordingReader:
    """An exam taker whose answer depends on the wording alone: the gold option under the main wording, "A" under
    the plain one (the wording told by the system prompt or the text the prompt starts with), in either mode."""

    name = "scripted:exam-wording-reader"

    def __init__(self, task: Any, language: str, items: Sequence[dict[str, Any]]) -> None:
        self.instructions = {name: worded_task(task, language, name).prompts[language].instruction
                             for name in wording_names(task, language)}  # fmt: skip
        self.gold = {item["question"]: LETTERS[item["correct_key"]] for item in items}
        self.options = {item["question"]: {x: item[x] for x in LETTERS} for item in items}

    def describe(self) -> ModelDescription:
        return ModelDescription("scripted", self.name, "scripted", Capabilities(generate=True, loglikelihood=True,
                                                                                  chat=True))  # fmt: skip

    def _pick(self, text: str) -> tuple[str, str]:
        (name,) = [n for n, instruction in self.instructions.items() if text.startswith(instruction)]
        (question,) = [q for q in self.gold if q in text.rsplit("\n\n", 1)[-1]]
        return (self.gold[question] if name == MAIN else "A"), question

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        out = []
        for request in requests:
            text = request.messages[0].content + "\n\n" + request.messages[-1].content if request.messages else ""
            letter, question = self._pick(text or request.prompt or "")
            out.append(Generation(f"Answer key: {letter}\nAnswer text: {self.options[question][letter]}", 9, 4, "stop"))
        return out

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        picks = [self._pick(r.context)[0] for r in requests]
        return [Loglikelihood(0.0 if r.continuation.strip() == p else -5.0, False)
                for r, p in zip(requests, picks, strict=True)]  # fmt: skip


@pytest.mark.parametrize("mode", ["generate", "loglik"])
def test_an_exam_in_each_wording(exam_build, tmp_path: Path, mode: str) -> None:
    """issue 32, item 4: on an exam, right under the main wording and "A" under the plain one: accuracy 1 and the
    share of items keyed A; the spread their difference; a run folder of its own; verified, a tampered std refused."""
    dataset, task = str(exam_build.repo_dir), get_task("mcq_ne")
    items, _ = load_exam(dataset, task, 0, 6)
    keyed_a = sum(item["correct_key"] == 0 for item in items) / len(items)
    run = run_mcq(ExamWordingReader(task, "ne", items), dataset, "mcq_ne", "native", 0, tmp_path, "reader",
                  mode=mode, limit=6, bootstrap_resamples=50, chart=False, wordings="all")  # fmt: skip
    suffix = "-loglik" if mode == "loglik" else ""
    assert run.name == f"reader__ne-0shot{suffix}-wordings-all-limit6"
    section = run.result.details[SECTION]
    assert section["primary_metric"] == "accuracy_all_items" and keyed_a < 1.0
    assert [w["primary"] for w in section["wordings"]] == pytest.approx([1.0, keyed_a])
    assert section["spread"] == pytest.approx(1.0 - keyed_a)
    assert run.result.metrics["accuracy_all_items"] == 1.0
    saved = json.loads(run.result_path.read_text(encoding="utf-8"))
    assert check_file(run.result_path, saved).verified
    saved["details"][SECTION]["std"] = 0.01
    refused = check_file(run.result_path, saved)
    assert refused.status == "refused" and f"{SECTION} std: stored 0.01" in refused.reason


# ------------------------------------------------------------------ a tiny LM through the command line
@pytest.mark.parametrize("mode", ["loglik", "generate"])
def test_a_tiny_lm_from_the_command_line(
    tiny_lms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, mode: str
) -> None:
    """issue 32, item 4: `--wordings all` writes a run of its own with the section and the spread beside the score;
    the main wording comes from the answer cache, so only the other wording reaches the model, and the same
    command again asks nothing; `nlue report` shows the run in its prompt-wording table."""
    results = tmp_path / "results"
    argv = ["llm", "nlue", "--model", str(tiny_lms["gpt2"]), "--tasks", "sa", "--prompt-language", "native", "--mode",
            mode, "--limit", "3", "--max-new-tokens", "3", "--bootstrap-resamples", "20", "--results-dir",
            str(results), "--device", "cpu", "-q"]  # fmt: skip
    calls = BackendCalls(monkeypatch)
    assert main(argv) == 0
    asked = calls.count
    assert asked == (3 if mode == "generate" else 3 * 2)
    assert main([*argv, "--wordings", "all"]) == 0
    assert calls.count == 2 * asked  # the plain wording only: the main one's answers are in the cache
    printed = capsys.readouterr().out
    assert "spread over 2 wordings (highest - lowest)" in printed and "main (the run's score)" in printed
    assert main([*argv, "--wordings", "all"]) == 0 and calls.count == 2 * asked  # nothing asked again

    suffix = "-generate" if mode == "generate" else ""
    plain = json.loads((results / f"gpt2__ne-0shot{suffix}-limit3" / "sa.json").read_text(encoding="utf-8"))
    path = results / f"gpt2__ne-0shot{suffix}-wordings-all-limit3" / "sa.json"
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["metrics"]["macro_f1"] == plain["metrics"]["macro_f1"]  # the run's score: the main wording's
    assert saved["details"][SECTION]["wordings"][0]["primary"] == plain["metrics"]["macro_f1"]
    assert "prompt_wordings" not in plain["identity"]["settings"] and plain["identity_key"] != saved["identity_key"]
    assert check_file(path, saved).verified
    if mode == "loglik":
        assert main(["report", str(results), "--out", str(tmp_path / "report"), "-q"]) == 0
        with (tmp_path / "report" / "nlue_prompt_wordings.csv").open(encoding="utf-8") as handle:
            table = list(csv.DictReader(handle))
        assert [(row["run"], row["task"]) for row in table] == [(path.parent.name, "sa")]
        assert float(table[0]["spread (points)"]) == pytest.approx(100 * saved["details"][SECTION]["spread"], abs=0.01)


# ------------------------------------------------------------------ neDIOM zero-shot
class IdiomWordingReader(WordingReader):
    """:class:`WordingReader` for an idiomaticity task: the wording told by either of its instructions."""

    def __init__(self, task: Any, language: str, choice: dict[str, int | str]) -> None:
        self.words = task.idiom_prompts[language].label_words
        worded = {
            name: worded_task(task, language, name).idiom_prompts[language] for name in wording_names(task, language)
        }
        self.instructions = {name: p.instruction_with_idiom for name, p in worded.items()}
        self.instructions |= {f"{name} ": p.instruction_without_idiom for name, p in worded.items()}
        self.choice = {**choice, **{f"{name} ": label for name, label in choice.items()}}
        self.gold, self.asked, self.texts = [], [], []


def test_nediom_zero_shot_in_each_wording(nediom_build, tmp_path: Path) -> None:
    """issue 32, item 4: `nlue idioms eval --wordings all` asks each zero-shot cell in every wording: "idiomatic"
    to everything under the main wording, "literal" under the plain one; sklearn's macro-F1 of each, checked by
    verify, in a folder of its own."""
    from nlue.idioms.evaluate import EvalRequest, run_eval, select_variants
    from nlue.idioms.zero_shot import LabelScorer

    task = get_task("nediom")
    reader = IdiomWordingReader(task, "en", {"main": 0, "plain": 1})
    request = EvalRequest(model="scripted", task=task, settings=["zero-shot"], variants=select_variants(["S2"], "both"),
                          results_dir=tmp_path, name="reader", dataset=str(nediom_build.repo_dir), language="en",
                          bootstrap_resamples=20, zero_shot=lambda: LabelScorer(reader, task), wordings="all")  # fmt: skip
    paths = run_eval(request).paths
    assert [p.parent.name for p in paths] == [f"reader__zero-shot-en-wordings-all__v{n}-S2-{w}-idiom"
                                              for n, w in ((1, "with"), (2, "without"))]  # fmt: skip
    for path in paths:
        saved = json.loads(path.read_text(encoding="utf-8"))
        rows = [json.loads(x) for x in (path.parent / saved["predictions"]).read_text("utf-8").splitlines()]
        golds = [row["gold"] for row in rows]
        section = saved["details"][SECTION]
        expected = [f1_score(golds, [label] * len(golds), average="macro") for label in (0, 1)]
        assert [w["primary"] for w in section["wordings"]] == pytest.approx(expected)
        assert section["spread"] == pytest.approx(abs(expected[0] - expected[1])) and section["spread"] > 0
        assert check_file(path, saved).verified
    assert set(reader.asked) == {"main", "plain", "main ", "plain "}


# ------------------------------------------------------------------ the paired test against the main wording
def test_each_wording_is_tested_against_the_main_one(tmp_path: Path) -> None:
    """issue 32: each other wording's difference from the main one, its 95% paired-bootstrap interval and p are a
    direct paired_test on the same items (the run's resamples and seed); verify recomputes them, refuses a
    tampered p-value, and still verifies an older file that has no test; the tables show it."""
    from nlue.evals.llm.wordings import wording_text
    from nlue.evals.report.runs import ResultFile
    from nlue.evals.report.wordings import wording_table
    from nlue.evals.verify import rescoring_problem
    from nlue.scoring.significance import paired_test

    task = get_task("mnli")
    test, _ = task_splits(None, task, 0, None)
    model = WordingReader(task, "en", {"main": GOLD, "plain": 1}, list(test))
    run_nlue_llm(model, None, [task], "en", 0, tmp_path, "r-wordings-all", bootstrap_resamples=40, seed=7,
                 wordings="all")  # fmt: skip
    path = tmp_path / "r-wordings-all" / "mnli.json"
    saved = json.loads(path.read_text(encoding="utf-8"))
    section = saved["details"][SECTION]
    rows = [json.loads(x) for x in (path.parent / saved["predictions"]).read_text("utf-8").splitlines()]
    problems = {name: rescoring_problem(task, [{**r, "prediction": r[FIELD][name]["prediction"]} for r in rows], saved)
                for name in ("main", "plain")}  # fmt: skip
    direct = paired_test(problems["plain"], problems["main"], "macro_f1", method="bootstrap", resamples=40, seed=7)
    stored = section["wordings"][1]["vs_main"]
    assert section["paired_test"]["resamples"] == 40 and section["paired_test"]["seed"] == 7
    assert "vs_main" not in section["wordings"][0]
    assert stored == {"difference": direct.difference, "ci_low": direct.ci_low, "ci_high": direct.ci_high,
                      "p_value": direct.p_value, "p_holm": direct.p_value}  # fmt: skip
    assert stored["difference"] == pytest.approx(section["wordings"][1]["primary"] - section["wordings"][0]["primary"])
    assert stored["ci_high"] < 0 and stored["p_value"] < 0.05  # right under main, one label under plain
    assert check_file(path, saved).verified

    tampered = json.loads(json.dumps(saved))
    tampered["details"][SECTION]["wordings"][1]["vs_main"]["p_value"] = 0.5
    refused = check_file(path, tampered)
    assert refused.status == "refused" and "wording plain vs_main p_value: stored 0.5" in refused.reason
    dropped = json.loads(json.dumps(saved))
    dropped["details"][SECTION]["wordings"][1]["vs_main"] = None
    dropped_check = check_file(path, dropped)
    assert dropped_check.status == "refused" and "wording plain vs_main difference: stored None" in dropped_check.reason
    older = json.loads(json.dumps(saved))
    del older["details"][SECTION]["paired_test"], older["details"][SECTION]["wordings"][1]["vs_main"]
    assert check_file(path, older).verified

    assert "vs main (points) [95% CI], p" in wording_text("mnli", section)
    assert f"{100 * direct.difference:+.1f} [" in wording_text("mnli", section)
    file = ResultFile(path=path, run="r", data=saved)
    table = wording_table([file], "w", "w")
    assert table is not None and table.frame["vs main (points) [95% CI], p"][0].startswith("plain -")
    old_table = wording_table([ResultFile(path=path, run="r", data=older)], "w", "w")
    assert old_table is not None and old_table.frame["vs main (points) [95% CI], p"][0] == "n/a (not tested)"


def test_holm_across_wordings_and_none_where_the_metric_is_undefined() -> None:
    """issue 32: with two other wordings each p is Holm-adjusted across them; a wording whose metric is undefined
    gets no test and a reason, and the others are adjusted without it."""
    from nlue.evals.llm.wordings import vs_main
    from nlue.evals.verify import rescoring_problem
    from nlue.scoring.significance import holm

    task = get_task("mnli")
    golds = [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]
    answers = {"main": golds, "a": [0] * 12, "b": [0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 2, 0]}
    rows = [{"id": str(i), "input_sha256": "x", "prediction": g, "gold": g,
             FIELD: {n: {"prediction": a[i]} for n, a in answers.items()}} for i, g in enumerate(golds)]  # fmt: skip

    def problem_of(worded: list[dict[str, Any]]) -> Any:
        return rescoring_problem(task, worded, {"hyperparameters": {"mode": "loglik"}})

    tests = vs_main(rows, list(answers), problem_of, "macro_f1", 30, 3)
    p = [tests[n][0]["p_value"] for n in ("a", "b")]
    assert [tests[n][0]["p_holm"] for n in ("a", "b")] == holm(p)

    stsb = get_task("stsb")  # by generation, a wording with one answer that parses has no Pearson or Spearman
    numbers = {
        "main": [float(i % 5) for i in range(12)],
        "a": [1.0] + [None] * 11,
        "b": [float(i % 4) for i in range(12)],
    }
    scored = [{"id": str(i), "input_sha256": "x", "prediction": numbers["main"][i], "gold": float(i * 3 % 5),
               FIELD: {n: {"prediction": a[i]} for n, a in numbers.items()}} for i in range(12)]  # fmt: skip
    tests = vs_main(scored, list(numbers), lambda w: rescoring_problem(stsb, w, {"hyperparameters": {"mode": "generate"}}),
                    stsb.primary_metric, 30, 3)  # fmt: skip
    assert tests["a"][0] is None and "undefined" in str(tests["a"][1])
    assert tests["b"][1] is None and tests["b"][0]["p_holm"] == tests["b"][0]["p_value"]  # adjusted without "a"
