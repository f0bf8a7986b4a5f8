"""STS-B by generation (issue 29, item 25): the model writes a number, a strict parser reads it, correlations follow."""

from __future__ import annotations

import itertools
import json
import logging
import math
import re
from collections.abc import Sequence

import pytest
from scipy.stats import pearsonr, spearmanr

from nlue.evals.llm import number_generation as num
from nlue.evals.llm.nlue_generate import run_nlue_generation
from nlue.evals.llm.nlue_llm import nlue_tasks, render_prompt
from nlue.lm.base import Generation, GenerationRequest
from nlue.lm.description import Capabilities, ModelDescription
from nlue.registry.tasks import TASKS

RANGE = (0.0, 5.0)


@pytest.mark.parametrize(
    ("output", "strict", "lenient"),
    [
        ("3", (3.0, None), (3.0, None)),
        ("  2.5.\n", (2.5, None), (2.5, None)),  # surrounding space and one final full stop
        ("४.२।", (4.2, None), (4.2, None)),  # Devanagari digits and a final danda
        ("<think>maybe 1</think>\n4", (4.0, None), (4.0, None)),  # a thinking trace is not the answer
        ("0", (0.0, None), (0.0, None)),
        ("5.0", (5.0, None), (5.0, None)),
        ("Score: 4", (None, num.NOT_A_NUMBER), (4.0, None)),  # one number inside text: the lenient parse only
        ("**3**", (None, num.NOT_A_NUMBER), (3.0, None)),
        ("4 out of 5", (None, num.NOT_A_NUMBER), (None, num.NOT_A_NUMBER)),  # two numbers: neither parse guesses
        ("about 3 or 4", (None, num.NOT_A_NUMBER), (None, num.NOT_A_NUMBER)),
        ("7", (None, num.OUT_OF_RANGE), (None, num.NOT_A_NUMBER)),
        ("-1", (None, num.OUT_OF_RANGE), (None, num.NOT_A_NUMBER)),
        ("5.5", (None, num.OUT_OF_RANGE), (None, num.NOT_A_NUMBER)),
        ("3,5", (None, num.NOT_A_NUMBER), (None, num.NOT_A_NUMBER)),  # a decimal comma is two numbers
        ("३.5", (None, num.NOT_A_NUMBER), (None, num.NOT_A_NUMBER)),  # one number is written in one script
        ("three", (None, num.NOT_A_NUMBER), (None, num.NOT_A_NUMBER)),
        ("", (None, num.EMPTY), (None, num.EMPTY)),
        ("<think>long thoughts", (None, num.EMPTY), (None, num.EMPTY)),
        ("3..", (None, num.NOT_A_NUMBER), (3.0, None)),  # one final mark only
    ],
)
def test_the_strict_parser_reads_one_number_in_range_and_the_lenient_one_reads_around_it(output, strict, lenient):
    """issue 29, item 25: STS-B answers are read by a strict number parser; invalid answers have a category."""
    first, second = num.parse_number(output, RANGE), num.parse_number(output, RANGE, lenient=True)
    assert (first.value, first.category) == strict and (second.value, second.category) == lenient
    assert num.parse_number("3", RANGE, error="HTTP 500").category == num.API_ERROR


def test_stsb_is_asked_in_english_and_nepali_with_a_number_line_and_never_its_gold(sample_build) -> None:
    """issue 29, item 25: our own prompt in both languages; the range in the prompt's digits; no gold in it."""
    task = TASKS["stsb"]
    item = {"sentence1": "बिहान पानी पर्‍यो।", "sentence2": "आज बिहान वर्षा भयो।", "label": 4.25, "idx": 0}
    english = num.with_number_line(render_prompt(task, item, "en"), task.score_range, "en")
    nepali = num.with_number_line(render_prompt(task, item, "ne"), task.score_range, "ne")
    assert english.splitlines()[-2:] == [
        "Reply with one number from 0 to 5 (a decimal such as 2.5 is fine) and nothing else.",
        "Answer:",
    ]
    assert nepali.splitlines()[-2].startswith("० देखि ५ सम्मको") and "२.५" in nepali and nepali.endswith("उत्तर:")
    assert "4.25" not in english and "४.२५" not in nepali and item["sentence1"] in english
    assert num.number_text(4.25, "ne") == "४.२५" and num.number_text(3.0, "en") == "3"


class Scripted:
    """A model that answers by a fixed rule on the prompt it is shown (a chat model)."""

    name = "scripted"

    def __init__(self, answer) -> None:
        self.answer = answer
        self.requests: list[GenerationRequest] = []

    def describe(self) -> ModelDescription:
        return ModelDescription("scripted", "scripted", "scripted", Capabilities(generate=True, chat=True))

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        self.requests.extend(requests)
        return [Generation(self.answer(r.messages[-1].content), None, 1, "stop") for r in requests]


def test_stsb_by_generation_scores_the_parsed_answers_and_says_what_invalid_ones_do(
    sample_build, tmp_path, caplog
) -> None:
    """issue 29, item 25: Pearson/Spearman over the parsed items (checked against scipy), invalid ones counted
    and left out, and the results file says so; predictions hold None for an invalid answer."""

    answers = itertools.cycle(["1", "4.5", "2", "३", "Score: 3", "9", "0.5"])  # invalid answers mixed in

    def answer(prompt: str) -> str:
        return next(answers)

    model = Scripted(answer)
    run = "scripted__en-1shot-generate"
    results = run_nlue_generation(model, str(sample_build.repo_dir), nlue_tasks(["stsb"], "en", "generate"), "en",
                                  1, tmp_path, run, chat=True, bootstrap_resamples=200)  # fmt: skip
    saved = json.loads((tmp_path / run / "stsb.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (tmp_path / run / "stsb" / "raw_outputs.jsonl").open(encoding="utf-8")]
    predictions = [json.loads(line) for line in (tmp_path / run / "stsb.predictions.jsonl").open(encoding="utf-8")]
    parsed = [(r["strict"]["score"], r["gold_score"]) for r in rows if r["verdict"] == "scored"]
    assert 2 <= len(parsed) < len(rows)  # some answers are invalid
    metrics = saved["metrics"]
    assert metrics["pearson"] == pytest.approx(pearsonr(*zip(*parsed, strict=True)).statistic)
    assert metrics["spearman"] == pytest.approx(spearmanr(*zip(*parsed, strict=True)).statistic)
    assert saved["primary_score"] == pytest.approx((metrics["pearson"] + metrics["spearman"]) / 2)
    assert metrics["parseable_items"] == len(parsed) and metrics["invalid_rate"] == pytest.approx(
        1 - len(parsed) / len(rows)
    )
    assert metrics["invalid_count_out_of_range"] == sum(r["strict"]["category"] == num.OUT_OF_RANGE for r in rows) > 0
    assert metrics["invalid_count_not_a_number"] > 0 and "pearson_ci_low" in metrics
    assert "computed over the parseable items only" in saved["details"]["invalid_answers"]
    assert "an invalid answer is left out" in saved["notes"] and saved["hyperparameters"]["score_range"] == [0.0, 5.0]
    assert all(list(row)[-1] == "gold_score" for row in rows) and list(predictions[0])[-1] == "gold"
    assert [p["prediction"] for p in predictions] == [r["strict"]["score"] for r in rows]
    first = model.requests[0].messages[-1].content
    assert first.count("Sentence 1: ") == 2  # one demonstration, ending with its gold score as a number
    demo_answer = re.search(r"^Answer: (.+)$", first, re.MULTILINE).group(1)
    assert num.parse_number(demo_answer, RANGE).valid and first.endswith("nothing else.\nAnswer:")
    assert results["stsb"].primary_metric == "pearson_spearman_mean"

    # Trusted where it is checked: verify rescores the parsed answers as the run did (it had sent every generated
    # stsb run down the label path and refused it), and refuses an edited score; a paired comparison with a run
    # that parsed other items pairs the items both parsed.
    from nlue.evals.compare.pairs import RunTask, compare_task
    from nlue.evals.verify import VERIFIED, check_file

    assert check_file(tmp_path / run / "stsb.json", saved).status == VERIFIED
    edited = {**saved, "metrics": {**metrics, "pearson_spearman_mean": metrics["pearson_spearman_mean"] + 0.01}}
    assert (
        check_file(tmp_path / run / "stsb.json", {**edited, "primary_score": edited["primary_score"] + 0.01}).status
        == "refused"
    )
    first_parsed = next(i for i, row in enumerate(predictions) if row["prediction"] is not None)
    other = [
        {**row, "prediction": None if i == first_parsed else row["prediction"]} for i, row in enumerate(predictions)
    ]
    caplog.set_level(logging.WARNING)
    compared = compare_task(RunTask("a", tmp_path / run / "stsb.json", saved, predictions),
                            RunTask("b", tmp_path / run / "stsb.json", saved, other), 100, 0)  # fmt: skip
    kept = list(zip(*parsed[1:], strict=True))  # the pairs both runs parsed
    expected = (pearsonr(*kept).statistic + spearmanr(*kept).statistic) / 2
    assert compared.items == len(parsed) - 1 and compared.score_a == pytest.approx(expected)
    assert f"{len(rows) - len(parsed) + 1} of {len(rows)} items left out of the comparison" in caplog.text


def test_a_run_with_no_parsed_number_checks_as_undefined_not_as_unscorable(sample_build, tmp_path) -> None:
    """A model that never writes a number (the tiny random one): the run stores its correlations as undefined, and
    verify agrees, rather than refusing the file because its predictions 'cannot be scored'."""
    from nlue.evals.verify import VERIFIED, check_file

    run = "silent__en-0shot-generate"
    run_nlue_generation(Scripted(lambda prompt: "no idea"), str(sample_build.repo_dir),
                        nlue_tasks(["stsb"], "en", "generate"), "en", 0, tmp_path, run, chat=True)  # fmt: skip
    saved = json.loads((tmp_path / run / "stsb.json").read_text(encoding="utf-8"))
    assert saved["metrics"]["pearson_spearman_mean"] is None and saved["metrics"]["invalid_rate"] == 1.0
    assert saved["details"]["null_metrics"]["pearson"] == "0 parseable answer(s): a correlation needs at least 2"
    check = check_file(tmp_path / run / "stsb.json", saved)
    assert check.status == VERIFIED, check


def test_too_few_parsed_answers_leave_the_correlations_undefined_with_a_reason() -> None:
    """issue 29, item 25: with fewer than two parsed answers there is no correlation, and the reason is kept."""
    parses = [num.parse_number(text, RANGE) for text in ("3", "no idea", "")]
    metrics, undefined = num.number_scores("stsb", parses, [3.0, 1.0, 2.0], None, 0)
    assert math.isnan(metrics["pearson"]) and metrics["parseable_items"] == 1.0
    assert undefined["pearson"] == "1 parseable answer(s): a correlation needs at least 2"
    same, why = num.number_scores("stsb", [num.parse_number("2", RANGE)] * 3, [3.0, 1.0, 2.0], None, 0)
    assert math.isnan(same["pearson"]) and "same number" in why["spearman"]


def test_stsb_runs_from_the_command_line_in_generate_mode_and_is_named_in_loglik_mode(
    sample_build, tiny_lms, tmp_path, caplog, capsys
) -> None:
    """issue 29, item 25: `--mode generate` scores stsb (it was refused by --tasks and left out of the default
    silently); loglik mode leaves it out with a warning that names it and says why."""
    from nlue.cli import main

    results = tmp_path / "results"
    common = ["llm", "nlue", "--model", str(tiny_lms["gpt2"]), "--dataset", str(sample_build.repo_dir), "--limit",
              "3", "--bootstrap", "0", "--max-new-tokens", "3", "--results-dir", str(results)]  # fmt: skip
    assert main([*common, "--mode", "generate", "--tasks", "stsb", "sa"]) == 0
    saved = json.loads((results / "gpt2__en-0shot-generate-limit3" / "stsb.json").read_text(encoding="utf-8"))
    assert saved["hyperparameters"]["evaluation"] == "generation of one number, strict parsing"
    assert "stsb: Pearson/Spearman mean" in capsys.readouterr().out
    assert "stsb" in [t.name for t in nlue_tasks(None, "ne", "generate")]
    assert "stsb" not in [t.name for t in nlue_tasks(None, "ne", "loglik", warn=False)]
    caplog.set_level(logging.WARNING)
    assert main([*common, "--tasks", "sa", "stsb", "--mode", "loglik"]) == 0
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "stsb" in r.getMessage()]
    assert warned == [
        "stsb is not scored in loglik mode: its answer is a similarity score from 0 to 5, not one of a few label "
        "words to score; --mode generate scores it (the model writes the number, a strict parser reads it)"
    ]
    assert not (results / "gpt2__en-0shot-limit3" / "stsb.json").exists()
    assert main([*common, "--tasks", "stsb", "--mode", "loglik"]) == 2
    assert "stsb: not scored by log-likelihood; use --mode generate" in capsys.readouterr().err
