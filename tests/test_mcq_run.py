"""The exam runner end to end: gold out of every prompt, scoring through a scripted model, the gap, loglik parity.

* A scripted :class:`~nlue.lm.base.LanguageModel` (below) answers each item as the test
  says: right, wrong, and one output per invalid category, so every number of a run can be
  counted by hand.
* The English vs native gap is checked against scipy's exact binomial test (McNemar).
* Log-likelihood mode: on the sample exams and a tiny local GPT-2, our per-item
  log-likelihoods, accuracy and acc_norm equal lm-evaluation-harness's ``hf`` backend on
  the YAML that ``nlue export lm-eval`` writes, within 1e-4.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from nlue.evals.llm.nlue_llm import render_prompt
from nlue.evals.mcq.loglik import OptionScores, loglik_context, option_strings, score_options
from nlue.evals.mcq.parse import INVALID_CATEGORIES
from nlue.evals.mcq.prompts import PAPER_SHOTS
from nlue.evals.mcq.report import prompt_gap
from nlue.evals.mcq.run import item_prompts, load_exam, resolve_language, run_mcq, without_gold
from nlue.lm.base import Generation, GenerationRequest, Loglikelihood, LoglikelihoodRequest
from nlue.lm.description import Capabilities, ModelDescription
from nlue.registry.kinds.mcq_text import LETTERS
from nlue.registry.tasks import get_task
from nlue.scoring.significance import mcnemar_exact

EXAMS = ("mcq_ne", "mcq_ur")


class ScriptedLM:
    """A language model whose every answer the test chooses: ``answer(item, request)`` -> Generation."""

    def __init__(self, items: Sequence[dict], answer: Callable[[dict, GenerationRequest], Generation]) -> None:
        self.items = items
        self.answer = answer
        self.requests: list[GenerationRequest] = []

    @property
    def name(self) -> str:
        return "scripted:exam-taker"

    def describe(self) -> ModelDescription:
        return ModelDescription("scripted", self.name, "scripted", Capabilities(generate=True, chat=True))

    def _item(self, request: GenerationRequest) -> dict:
        shown = request.messages[-1].content if request.messages else request.prompt or ""
        last = shown.rsplit("\n\n", 1)[-1]  # plain text: the item is the last block
        (item,) = [item for item in self.items if item["question"] in last]
        return item

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        self.requests.extend(requests)
        return [self.answer(self._item(r), r) for r in requests]

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        raise AssertionError("not used")


def _gold(item: dict) -> tuple[str, str]:
    letter = LETTERS[item["correct_key"]]
    return letter, item[letter]


def _other(item: dict) -> tuple[str, str]:
    letter = LETTERS[(item["correct_key"] + 1) % 4]
    return letter, item[letter]


def _two_lines(key: str, text: str) -> str:
    return f"Answer key: {key}\nAnswer text: {text}"


# One output per behaviour; the expected strict verdict and category, and the lenient verdict where it differs.
PLAN: list[tuple[Callable[[dict], str | None], str, str | None]] = [
    (lambda it: _two_lines(*_gold(it)), "correct", None),
    (lambda it: "<think>which one?</think>\n- Answer key: {}\n\n- Answer text: {}".format(*_gold(it)), "correct", None),
    (lambda it: _two_lines(*_other(it)), "wrong", None),
    (lambda it: "  ___ ", "invalid", "empty"),
    (lambda it: "I'm sorry, the question is not clear to me.", "invalid", "refusal_or_echo"),
    (lambda it: "मलाई लाग्छ यो सही हो।", "invalid", "no_key_line"),
    (lambda it: _two_lines("E", _gold(it)[1]), "invalid", "key_not_in_a_to_d"),
    (lambda it: _two_lines(*_gold(it)) + "\nBecause it is.", "invalid", "malformed"),
    (lambda it: _two_lines("A", "कुनै अर्कै कुरा"), "invalid", "text_matches_no_option"),
    (lambda it: _two_lines(_gold(it)[0], _other(it)[1]), "invalid", "key_text_disagree"),
    (lambda it: None, "invalid", "api_error"),  # the request failed
    (lambda it: "**Answer key:** {}\n**Answer text:** {}".format(*_gold(it)), "invalid", "no_key_line"),
]


@pytest.fixture(scope="module")
def exam(exam_build) -> str:
    return str(exam_build.repo_dir)


def test_the_gold_never_reaches_a_prompt(exam: str) -> None:
    """Every item, shot count, language and form: the prompt is the same whatever the gold says, and holds no answer."""
    for name in EXAMS:
        task = get_task(name)
        items, pool = load_exam(exam, task, 5)
        moved = [{**item, "correct_key": (item["correct_key"] + 1) % 4, "correct_option": "?"} for item in items]
        for role in ("en", "native"):
            language = resolve_language(task, role)
            for shots in PAPER_SHOTS:
                for chat in (True, False):
                    prompts = item_prompts(items, task, language, shots, pool, chat)
                    assert prompts == item_prompts(moved, task, language, shots, pool, chat), (name, shots, chat)
                    for item, prompt in zip(items, prompts, strict=True):
                        own = prompt[-1]["content"] if chat else prompt.rsplit("\n\n", 1)[-1]
                        assert own.endswith("Answer key:\nAnswer text:" if chat else f"D) {item['D']}\n")
                        assert "Answer key: " not in own and "Answer text: " not in own
                for choices in ("letters", "texts"):
                    contexts = [loglik_context(without_gold(it, task), language, shots, pool, choices) for it in items]
                    assert contexts == [
                        loglik_context(without_gold(it, task), language, shots, pool, choices) for it in moved
                    ]
        assert all("correct_key" not in without_gold(item, task) for item in items)


def _scripted_run(exam: str, tmp_path: Path, limit: int = len(PLAN), **options: Any):
    task = get_task("mcq_ne")
    items, _ = load_exam(exam, task, 0, limit)
    plan = {item["id"]: step for item, step in zip(items, PLAN, strict=False)}

    def answer(item: dict, request: GenerationRequest) -> Generation:
        text = plan[item["id"]][0](item)
        if text is None:
            return Generation("", None, None, "error", "HTTP 500 from the test")
        return Generation(text, 10, 5, "stop")

    model = ScriptedLM(items, answer)
    run = run_mcq(model, exam, "mcq_ne", "en", 0, tmp_path, "scripted", limit=limit, bootstrap_resamples=200,
                  **options)  # fmt: skip
    return run, model, items


def test_a_scripted_model_is_scored_item_by_item(exam: str, tmp_path: Path) -> None:
    run, model, items = _scripted_run(exam, tmp_path)
    rows = [json.loads(line) for line in (run.folder / "raw_outputs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [item["id"] for item in items]
    for row, item, (_, verdict, category) in zip(rows, items, PLAN, strict=True):
        assert (row["verdict"], row["category"]) == (verdict, category), row
        assert row["gold_key"] == LETTERS[item["correct_key"]]
    assert rows[-1]["lenient"]["verdict"] == "correct"  # markdown: the lenient parser reads it, reported apart
    assert rows[10]["error"] == "HTTP 500 from the test" and rows[10]["finish_reason"] == "error"
    for row, request in zip(rows, model.requests, strict=True):  # the hash is of what the model was sent
        sent = json.dumps([m.to_dict() for m in request.messages], ensure_ascii=False, sort_keys=True)
        assert row["prompt_sha256"] == hashlib.sha256(sent.encode("utf-8")).hexdigest()
        assert request.messages[-1].content.endswith("Answer key:\nAnswer text:")
    assert all(r.stop == ("\nSubject:",) for r in model.requests)

    saved = json.loads(run.result_path.read_text(encoding="utf-8"))
    metrics, n = saved["metrics"], len(PLAN)
    assert saved["kind"] == "zero-shot" and saved["task"] == "mcq_ne" and saved["model"] == "scripted:exam-taker"
    assert metrics["accuracy_all_items"] == pytest.approx(2 / n)  # invalid outputs count as wrong
    assert metrics["accuracy_parseable"] == pytest.approx(2 / 3)  # two right of the three that parsed
    assert metrics["invalid_rate"] == pytest.approx(9 / n)
    assert saved["primary_score"] == pytest.approx(2 / n)
    assert metrics["accuracy_all_items_ci_low"] <= 2 / n <= metrics["accuracy_all_items_ci_high"]
    expected = dict.fromkeys(INVALID_CATEGORIES, 0) | {"no_key_line": 2}
    expected.update({c: 1 for _, _, c in PLAN if c and c != "no_key_line"})
    assert saved["details"]["invalid_counts"] == expected
    assert {k: int(v) for k, v in metrics.items() if k.startswith("invalid_count_")} == {
        f"invalid_count_{k}": v for k, v in expected.items()
    }
    assert saved["details"]["lenient"]["accuracy_all_items"] > metrics["accuracy_all_items"]
    hyper = saved["hyperparameters"]
    assert hyper["prompt_language"] == "en" and hyper["shots"] == 0 and hyper["chat"] is True
    assert hyper["max_new_tokens"] == 256 and hyper["model"]["backend"] == "scripted"  # the two-line answer
    assert saved["dataset"]["is_sample"] is True and "transformers" in saved["versions"]

    with (run.folder / "by_overall.csv").open(encoding="utf-8") as handle:
        (overall,) = list(csv.DictReader(handle))
    assert int(overall["n_items"]) == n and float(overall["accuracy_all_items"]) == pytest.approx(2 / n)
    domains = {r["group"]: r for r in run.tables["domain"]}
    assert sum(r["n_items"] for r in domains.values()) == n
    assert "| all | 12 | 3 | 16.7 [" in (run.folder / "tables.md").read_text(encoding="utf-8")
    assert (run.folder / "accuracy_by_domain.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plain_text_prompts_for_a_base_model(exam: str, tmp_path: Path) -> None:
    run, model, _ = _scripted_run(exam, tmp_path, limit=3, chat=False, max_new_tokens=64, chart=False)
    assert all(r.prompt is not None and r.prompt.endswith(f"D) {model._item(r)['D']}\n") for r in model.requests)
    assert all(r.max_new_tokens == 64 for r in model.requests)
    assert "chart" not in run.files and run.result.hyperparameters["chat"] is False


def _answers_right_on(correct: set[int]) -> Callable[[dict, GenerationRequest], Generation]:
    def answer(item: dict, request: GenerationRequest) -> Generation:
        index = int(item["id"].rsplit("-", 1)[1]) - 1
        chosen = _gold(item) if index in correct else _other(item)
        return Generation(_two_lines(*chosen), 10, 5, "stop")

    return answer


def test_the_english_native_gap_is_paired_item_by_item(exam: str, tmp_path: Path) -> None:
    stats = pytest.importorskip("scipy.stats")
    task = get_task("mcq_ne")
    items, _ = load_exam(exam, task, 0, 20)
    english, native = set(range(10)), set(range(5, 20))  # 5 right only in English, 10 only in Nepali
    first = run_mcq(ScriptedLM(items, _answers_right_on(english)), exam, task, "en", 0, tmp_path, "m", limit=20,
                    bootstrap_resamples=2000)  # fmt: skip
    assert first.gap is None  # nothing to compare with yet
    second = run_mcq(ScriptedLM(items, _answers_right_on(native)), exam, task, "native", 0, tmp_path, "m", limit=20,
                     bootstrap_resamples=2000)  # fmt: skip
    gap = second.gap
    assert gap["n_paired"] == 20 and gap["runs"] == {"en": "m__en-0shot-limit20", "ne": "m__ne-0shot-limit20"}
    assert gap["difference"] == pytest.approx(15 / 20 - 10 / 20)
    assert gap["mcnemar"] == {"native_only_correct": 10, "english_only_correct": 5,
                              "p_value": pytest.approx(stats.binomtest(5, 15, 0.5).pvalue)}  # fmt: skip
    assert gap["ci_low"] < gap["difference"] < gap["ci_high"] and 0 < gap["p_value_bootstrap"] <= 1
    assert second.result.details["prompt_language_gap"]["difference"] == pytest.approx(0.25)
    assert "+25.0 points" in (second.folder / "prompt_gap.md").read_text(encoding="utf-8")
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(0, 12) == pytest.approx(stats.binomtest(0, 12).pvalue)
    rows = [json.loads(x) for x in (first.folder / "raw_outputs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert prompt_gap(rows, rows[:0], 100, 0) is None  # no common item: no gap


class ScriptedScores:
    """A log-likelihood model returning fixed values per option text."""

    name = "scripted:loglik"

    def __init__(self, values: dict[str, float]) -> None:
        self.values = values

    def describe(self) -> ModelDescription:
        return ModelDescription("scripted", "scripted", "scripted", Capabilities(loglikelihood=True))

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        return [Loglikelihood(self.values[r.continuation.strip()], False) for r in requests]

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        raise AssertionError("not used")


def test_option_texts_normalised_by_characters_and_by_bytes_choose_differently() -> None:
    item = {"id": "x", "question": "कुन?", "A": "abcdef", "B": "कखग", "C": "x", "D": "yy", "domain": "STEM",
            "subdomain": "mathematics", "level": "Grade 8", "language": "ne"}  # fmt: skip
    values = {"abcdef": -6.6, "कखग": -4.5, "x": -2.0, "yy": -2.4}  # per char -1.1 -1.5 -2 -1.2; per byte B -0.5
    contexts, scores = score_options(ScriptedScores(values), [item], "en", choices="texts")
    assert contexts[0].endswith("D) yy\nAnswer text:") and option_strings(item, "texts") == ("abcdef", "कखग", "x", "yy")
    assert [int(scores.choice()[0]), int(scores.choice("chars")[0]), int(scores.choice("bytes")[0])] == [2, 0, 1]
    assert scores.normalised_accuracy([1]) == {"acc_norm_chars": 0.0, "acc_norm_bytes": 1.0}
    letters = OptionScores((LETTERS,), scores.loglikelihoods)
    assert letters.choice("chars")[0] == letters.choice()[0]  # one-character letters: acc_norm is acc


def test_zero_shot_loglik_context_is_the_exported_template(exam: str) -> None:
    for name in EXAMS:
        task = get_task(name)
        items, _ = load_exam(exam, task)
        for language in task.prompts:
            for item in items:
                assert loglik_context(without_gold(item, task), language) == render_prompt(task, item, language)


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory, one_torch_thread) -> Path:
    pytest.importorskip("torch")
    from nlue.lm.tiny import save_tiny_causal_lm

    # A 1024-token window holds most exam prompts whole (the tokenizer is trained on the Nepali sample).
    return save_tiny_causal_lm(tmp_path_factory.mktemp("lm") / "gpt2", "gpt2", seed=3, n_positions=1024)


def test_loglik_mode_equals_lm_evaluation_harness(exam: str, tiny_gpt2: Path, tmp_path: Path) -> None:
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    from nlue.evals.export.lm_eval import export_lm_eval
    from nlue.lm.local import LocalCausalLM

    export_lm_eval(tmp_path / "yaml", exam, EXAMS, ("en", "ne", "ur"))
    runs = [(name, language) for name in EXAMS for language in get_task(name).prompts]
    theirs = lm_eval.simple_evaluate(
        model="hf", model_args=f"pretrained={tiny_gpt2},dtype=float32", tasks=[f"nlue_{n}_{lang}" for n, lang in runs],
        num_fewshot=0, batch_size=8, device="cpu",
        task_manager=TaskManager(include_path=str(tmp_path / "yaml"), include_defaults=False),  # ours alone indexed
        log_samples=True,
    )  # fmt: skip
    model = LocalCausalLM(tiny_gpt2, device="cpu", dtype="float32", batch_size=8, show_progress=False)
    for name, language in runs:
        run = run_mcq(model, exam, name, language, 0, tmp_path / "results", "tiny", mode="loglik",
                      bootstrap_resamples=None, chart=False)  # fmt: skip
        reference = theirs["results"][f"nlue_{name}_{language}"]
        assert run.result.metrics["accuracy_all_items"] == pytest.approx(reference["acc,none"], abs=1e-4)
        assert run.result.metrics["acc_norm_chars"] == pytest.approx(reference["acc_norm,none"], abs=1e-4)
        assert run.result.metrics["invalid_rate"] == 0.0
        rows = [json.loads(x) for x in (run.folder / "raw_outputs.jsonl").read_text(encoding="utf-8").splitlines()]
        samples = sorted(theirs["samples"][f"nlue_{name}_{language}"], key=lambda s: s["doc_id"])
        assert len(rows) == len(samples)
        for row, sample in zip(rows, samples, strict=True):
            ours = [row["loglikelihoods"][letter] for letter in LETTERS]
            assert ours == pytest.approx([value for value, _ in sample["filtered_resps"]], abs=1e-4), row["id"]
        assert run.result.hyperparameters["choices"] == "letters"
