"""Classification by generation (--mode generate) for NLUE and neDIOM: prompts, parsers, scores, runs and files."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

from nlue.evals.llm import label_generation as gen
from nlue.evals.llm.nlue_generate import run_nlue_generation
from nlue.evals.llm.nlue_llm import nlue_tasks, render_prompt
from nlue.lm.base import Generation, GenerationRequest, LoglikelihoodRequest
from nlue.lm.description import Capabilities, ModelDescription
from nlue.registry.label_prompts import ANSWER_LINES
from nlue.registry.tasks import TASKS

EN, NE = ("negative", "positive"), ("नकारात्मक", "सकारात्मक")


@pytest.mark.parametrize(
    ("output", "words", "strict", "lenient"),
    [
        ("positive", EN, (1, None), (1, None)),
        ("  Positive.\n", EN, (1, None), (1, None)),  # case, surrounding space and one final full stop
        ("<think>maybe negative</think>\npositive", EN, (1, None), (1, None)),  # a thinking trace is not the answer
        ("सकारात्मक।", NE, (1, None), (1, None)),  # a final danda
        ("The answer is positive", EN, (None, gen.WITH_OTHER_TEXT), (1, None)),
        ("**positive**", EN, (None, gen.WITH_OTHER_TEXT), (1, None)),
        ("positive or negative", EN, (None, gen.SEVERAL), (None, gen.SEVERAL)),
        ("यो नकारात्मक होइन, सकारात्मक हो", NE, (None, gen.SEVERAL), (None, gen.SEVERAL)),
        ("I cannot tell.", EN, (None, gen.NO_LABEL), (None, gen.NO_LABEL)),
        ("positively", EN, (None, gen.NO_LABEL), (None, gen.NO_LABEL)),  # whole words only
        ("", EN, (None, gen.EMPTY), (None, gen.EMPTY)),
        ("<think>long thoughts", EN, (None, gen.EMPTY), (None, gen.EMPTY)),  # an unclosed trace hides the rest
        ("positive..", EN, (None, gen.WITH_OTHER_TEXT), (1, None)),  # one final mark only
    ],
)
def test_the_strict_parser_reads_one_word_and_the_lenient_one_reads_around_it(
    output: str, words: tuple[str, ...], strict: tuple, lenient: tuple
) -> None:
    first = gen.parse_label(output, words)
    second = gen.parse_label(output, words, lenient=True)
    assert (first.label, first.category) == strict and (second.label, second.category) == lenient


def test_nepali_yes_and_no_are_told_apart_and_longer_labels_claim_their_words() -> None:
    yes_no = ("होइन", "हो")  # हो is the first letters of होइन: words are compared whole, never as prefixes
    assert gen.parse_label("होइन", yes_no).label == 0 and gen.parse_label("हो", yes_no).label == 1
    assert gen.parse_label("उत्तर: होइन", yes_no, lenient=True).label == 0
    words = ("duplicate", "not duplicate")
    assert gen.parse_label("Not duplicate.", words).label == 1
    assert gen.parse_label("They are not duplicate questions", words, lenient=True).label == 1
    assert gen.parse_label("request failed", words, error="HTTP 500").category == gen.API_ERROR


def test_the_answer_line_goes_before_the_cue_and_the_prompt_never_holds_the_gold(sample_build) -> None:
    task = TASKS["sa"]
    item = {"text": "आजको खाना मीठो थियो।", "label": 1}
    for language in ("en", "ne"):
        _, words = task.kind.llm_template(task, language)
        prompt = gen.with_answer_line(render_prompt(task, item, language), words, language)
        lines = prompt.splitlines()
        assert lines[-1] == task.prompts[language].answer_cue and lines[-2] == ANSWER_LINES[language].render(words)
        flipped = gen.with_answer_line(render_prompt(task, {**item, "label": 0}, language), words, language)
        assert prompt == flipped  # the label field never enters the prompt
    plain = gen.label_request("x\nAnswer:", chat=False, max_new_tokens=5)
    chat = gen.label_request("x\nAnswer:", chat=True, max_new_tokens=5)
    assert plain.prompt == "x\nAnswer:" and plain.stop == gen.PLAIN_STOP and chat.messages[0].role == "user"


@pytest.mark.parametrize("seed", range(6))
def test_scores_equal_scikit_learn_with_an_invalid_answer_wrong_for_its_gold_class(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = 3
    gold = rng.integers(0, k, size=40)
    predicted = np.where(rng.random(40) < 0.25, -1, rng.integers(0, k, size=40))  # -1: an invalid answer
    parses = [gen.LabelParse(None, gen.NO_LABEL) if p < 0 else gen.LabelParse(int(p)) for p in predicted]
    scores = gen.label_scores(parses, gold.tolist(), k, bootstrap_resamples=200, seed=seed)
    labels = list(range(k))
    assert scores["macro_f1"] == pytest.approx(
        f1_score(gold, predicted, labels=labels, average="macro", zero_division=0)
    )
    assert scores["accuracy_all_items"] == pytest.approx(accuracy_score(gold, predicted))
    valid = predicted >= 0
    assert scores["accuracy_parseable"] == pytest.approx(accuracy_score(gold[valid], predicted[valid]))
    assert scores["macro_f1_parseable"] == pytest.approx(
        f1_score(gold[valid], predicted[valid], labels=labels, average="macro", zero_division=0)
    )
    assert scores["invalid_rate"] == pytest.approx(1 - valid.mean())
    assert scores["invalid_count_no_label"] == (~valid).sum() and scores["parseable_items"] == valid.sum()
    for name in gen.METRICS:
        assert scores[f"{name}_ci_low"] <= scores[name] <= scores[f"{name}_ci_high"], name


class Scripted:
    """A model that only generates: each answer picked from the prompt's text alone, never from the gold."""

    name = "scripted"

    def __init__(self, answer) -> None:
        self.answer = answer
        self.requests: list[GenerationRequest] = []

    def describe(self) -> ModelDescription:
        return ModelDescription("scripted", "scripted", "scripted", Capabilities(generate=True, chat=True))

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        self.requests.extend(requests)
        return [Generation(self.answer(r.messages[-1].content), None, 1, "stop") for r in requests]

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]):
        raise AssertionError("a generation run asks for no log-likelihood")


def test_an_nlue_run_by_generation_writes_scores_and_raw_outputs_with_the_gold_last(sample_build, tmp_path) -> None:
    words = TASKS["sa"].prompts["en"].label_words

    def answer(prompt: str) -> str:  # a fixed rule on the text shown, with some invalid answers mixed in
        text = prompt.split("Text: ", 1)[1]
        return ["negative", "Positive.", "it is positive", "??"][len(text) % 4]

    model = Scripted(answer)
    results = run_nlue_generation(model, str(sample_build.repo_dir), nlue_tasks(["sa"], "en"), "en", 0,
                                  tmp_path, "scripted__en-0shot-generate", chat=True, bootstrap_resamples=100)  # fmt: skip
    saved = json.loads((tmp_path / "scripted__en-0shot-generate" / "sa.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (tmp_path / "scripted__en-0shot-generate" / "sa" / "raw_outputs.jsonl").open()]
    assert saved["hyperparameters"]["mode"] == "generate" and saved["primary_score"] == saved["metrics"]["macro_f1"]
    assert saved["dataset"]["is_sample"] and len(rows) == len(model.requests) == saved["dataset"]["items"]
    assert all(list(row)[-2:] == ["gold_label_id", "gold_label"] for row in rows)  # the gold is written last
    assert all("label" not in r.messages[-1].content.split("Text: ", 1)[1].split("\n")[0] for r in model.requests)
    gold = np.asarray([row["gold_label_id"] for row in rows])
    predicted = np.asarray([-1 if row["strict"]["label_id"] is None else row["strict"]["label_id"] for row in rows])
    assert saved["metrics"]["macro_f1"] == pytest.approx(
        f1_score(gold, predicted, labels=[0, 1], average="macro", zero_division=0)
    )
    categories = {row["strict"]["category"] for row in rows}
    assert {gen.WITH_OTHER_TEXT, gen.NO_LABEL} <= categories and any(row["lenient"]["label"] for row in rows)
    assert results["sa"].metrics["invalid_count_label_with_other_text"] == sum(
        row["strict"]["category"] == gen.WITH_OTHER_TEXT for row in rows
    )
    assert rows[0]["strict"]["label"] in (*words, None)


def test_a_nepali_only_vocabulary_model_writes_labels_and_is_scored(sample_build, nediom_build, tmp_path) -> None:
    """A vocabulary without a Latin letter (some Nepali community models) runs NLUE and neDIOM by generation."""
    from nlue.cli import main
    from nlue.lm.tiny_tokenizers import save_tiny_lm_of_kind

    model = save_tiny_lm_of_kind(tmp_path / "devanagari-lm", "devanagari", family="gpt2")  # no chat template
    results = tmp_path / "results"
    common = ["--model", str(model), "--mode", "generate", "--prompt-language", "native", "--limit", "4",
              "--bootstrap", "0", "--results-dir", str(results), "-q"]  # fmt: skip
    assert main(["llm", "nlue", *common, "--tasks", "sa", "--dataset", str(sample_build.repo_dir)]) == 0
    assert main(["idioms", "eval", *common, "--setting", "zero-shot", "--context", "S2", "--idiom", "with",
                 "--dataset", str(nediom_build.repo_dir)]) == 0  # fmt: skip
    saved = json.loads((results / "devanagari-lm__ne-0shot-generate-limit4" / "sa.json").read_text(encoding="utf-8"))
    assert saved["hyperparameters"]["chat"] is False and saved["hyperparameters"]["stop"] == ["\n"]
    assert saved["dataset"]["items"] == 4 and 0.0 <= saved["metrics"]["invalid_rate"] <= 1.0
    assert any(results.glob("devanagari-lm__zero-shot-ne-generate-limit4__v1-*/nediom.json"))


def test_a_generation_run_resumes_from_the_answer_cache(sample_build, tmp_path, monkeypatch) -> None:
    from nlue.cli import main
    from nlue.lm.local import LocalCausalLM
    from nlue.lm.tiny import save_tiny_causal_lm

    model = save_tiny_causal_lm(tmp_path / "tiny-llama", "llama")
    argv = ["llm", "nlue", "--model", str(model), "--mode", "generate", "--tasks", "sa", "rte", "--limit", "3",
            "--dataset", str(sample_build.repo_dir), "--results-dir", str(tmp_path / "results"), "--bootstrap",
            "0", "--max-new-tokens", "4", "-q"]  # fmt: skip
    assert main(argv) == 0
    first = (tmp_path / "results" / "tiny-llama__en-0shot-generate-limit3" / "sa" / "raw_outputs.jsonl").read_text()
    monkeypatch.setattr(LocalCausalLM, "_generate_batch", lambda *a, **k: pytest.fail("asked again"))
    assert main(argv) == 0  # every answer from the cache: nothing is generated twice
    assert (
        tmp_path / "results" / "tiny-llama__en-0shot-generate-limit3" / "sa" / "raw_outputs.jsonl"
    ).read_text() == first
