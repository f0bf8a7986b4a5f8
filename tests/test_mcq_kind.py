"""The multiple-choice kind: row rules (each with a failing row), the sample built and loaded back, its card, scoring."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import datasets
import pytest
from huggingface_hub import DatasetCard

from nlue.data.build import build_repo
from nlue.data.discover import split_of, task_sources_from_folder
from nlue.data.report import BuildOptions, TaskSources
from nlue.data.rows import RowConverter
from nlue.data.sample import sample_data_dir, sample_split
from nlue.errors import NlueError, RowProblem
from nlue.pipelines.mcq_curation import overlapping
from nlue.registry.kinds.mcq_text import SAMPLE_STATEMENT
from nlue.registry.mcq import URDUMMLU_TABLE4, denominator_flags, format_invalid_rate, micro_overall
from nlue.registry.tasks import BENCHMARKS, TASK_NAMES, TASKS, get_task
from nlue.scores import score_task

NE, UR = get_task("mcq_ne"), get_task("mcq_ur")
GOOD = {
    "id": "x1",
    "question": "नेपालको राजधानी कुन हो?",
    "options": {"A": "पोखरा", "B": "काठमाडौँ", "C": "विराटनगर", "D": "धनगढी"},
    "correct_key": "B",
    "correct_option": "काठमाडौँ",
    "domain": "Social Sciences",
    "subdomain": "social studies",
    "level": "Grade 8",
    "source": [{"name": "test", "url": "https://example.org"}],
}


def _convert(record: dict, task=NE):
    return RowConverter(task).convert("items.jsonl", 7, record)


def _problem(**changes) -> RowProblem:
    record = {**GOOD, **changes}
    result = _convert({k: v for k, v in record.items() if v is not None})
    assert isinstance(result, RowProblem), result
    assert result.file == "items.jsonl" and result.row == 7
    return result


def test_registered_next_to_nlue_without_changing_nlue() -> None:
    assert list(BENCHMARKS)[:2] == ["nlue", "mcq"]  # neDIOM comes after the exams
    assert len(TASK_NAMES) == 12 and "mcq_ne" not in TASK_NAMES
    assert {"mcq_ne", "mcq_ur"} <= set(TASKS)
    kind = NE.kind
    assert kind.splits == ("demo", "test") and not kind.trainable
    assert NE.primary_metric == "accuracy_all_items" and "accuracy_parseable" in NE.metrics
    assert "generation" in kind.evaluators and "causal-LM log-likelihood" in kind.evaluators
    assert NE.label_names == ("A", "B", "C", "D") and NE.language == "ne" and UR.language == "ur"
    assert "nlue convention" in NE.primary_note


def test_a_good_row_is_normalised_and_completed() -> None:
    row = _convert({**GOOD, "subdomain": "सामाजिक अध्ययन", "level": "BLE", "domain": None})
    assert isinstance(row, dict), row
    assert row["correct_key"] == 1 and row["correct_option"] == "काठमाडौँ"
    assert (row["subdomain"], row["domain"], row["level"], row["language"]) == (
        "social studies", "Social Sciences", "Grade 8", "ne",
    )  # fmt: skip
    assert [row[letter] for letter in "ABCD"] == list(GOOD["options"].values())
    flat = {**{k: v for k, v in GOOD.items() if k != "options"}, **GOOD["options"], "correct_key": "(b)"}
    assert _convert({**flat, "correct_option": None, "level": "कक्षा १०"})["level"] == "Grade 10"


@pytest.mark.parametrize(
    ("changes", "field", "reason"),
    [
        ({"options": {"A": "पोखरा", "B": "काठमाडौँ", "C": "पोखरा ", "D": "धनगढी"}}, "C", "same after normalisation"),
        ({"options": {"A": "पोखरा", "B": "काठमाडौँ", "C": "\u200b ", "D": "धनगढी"}}, "C", "empty"),
        ({"options": ["पोखरा", "काठमाडौँ", "धनगढी"]}, "options", "expected 4 options"),
        ({"options": {"A": "a", "B": "b", "C": "c"}}, "options", "exactly the options A, B, C, D"),
        ({"options": None}, "options", "no options"),
        ({"correct_key": "E"}, "correct_key", "A, B, C or D"),
        ({"correct_key": 1}, "correct_key", "numbers are ambiguous"),
        ({"correct_option": "पोखरा"}, "correct_option", "text of option B"),
        ({"subdomain": "astrology"}, "subdomain", "unknown"),
        ({"domain": "STEM"}, "domain", "belongs to domain 'Social Sciences'"),
        ({"level": "Grade 3"}, "level", "unknown"),
        ({"language": "ur"}, "language", "holds items in 'ne'"),
    ],
)
def test_each_rule_names_the_field_of_a_failing_row(changes: dict, field: str, reason: str) -> None:
    problem = _problem(**changes)
    assert problem.field == field and reason in problem.reason


def test_a_fifth_option_column_is_refused() -> None:
    flat = {**{k: v for k, v in GOOD.items() if k != "options"}, **GOOD["options"], "E": "भरतपुर"}
    problem = _convert(flat)
    assert isinstance(problem, RowProblem) and problem.field == "E"


def test_urdu_rows_fold_look_alike_code_points() -> None:
    record = {
        "question": "پاکستان کا دارالحكومت كون سا شہر ہے؟\u200f",  # Arabic kaf and a right-to-left mark
        "options": {"A": "کراچی", "B": "اسلام آباد", "C": "لاہور", "D": "پشاور"},
        "correct_key": "B", "subdomain": "pakistan studies", "level": "10",
    }  # fmt: skip
    row = _convert(record, UR)
    assert row["question"] == "پاکستان کا دارالحکومت کون سا شہر ہے؟" and row["level"] == "SSC-II"


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_conflicting_duplicates_are_rejected_in_the_pool(tmp_path: Path) -> None:
    demo = _write(tmp_path / "demo.jsonl", [GOOD, {**GOOD, "correct_key": "A", "correct_option": "पोखरा"}, GOOD])
    test = _write(tmp_path / "test.jsonl", [{**GOOD, "question": "नेपालको सबैभन्दा ठूलो सहर कुन हो?"}])
    options = BuildOptions(name="mcq", show_progress=False)
    result = build_repo([TaskSources(NE, {"demo": [demo], "test": [test]})], tmp_path / "out", options)
    report = result.configs["mcq_ne"].splits["demo"]
    assert (report.kept, report.conflicting_duplicates, report.duplicates) == (1, 1, 1)
    rejects = [json.loads(line) for line in result.rejects_path.read_text(encoding="utf-8").splitlines()]
    assert [(r["split"], r["row"], r["field"]) for r in rejects] == [("demo", 2, "correct_key")]


def test_discovery_takes_the_tasks_splits_and_one_benchmark_per_build() -> None:
    assert split_of(Path("demo.jsonl"), NE.splits) == "demo"
    assert split_of(Path("dev.jsonl"), NE.splits) is None  # no validation split to alias
    assert split_of(Path("dev-1.csv")) == "validation"
    default = [s.task.name for s in task_sources_from_folder(sample_data_dir())]
    assert set(default) == set(TASK_NAMES)
    exams = task_sources_from_folder(sample_data_dir(), ["mcq_ne", "mcq_ur"])
    assert [set(s.files) for s in exams] == [{"demo", "test"}] * 2
    with pytest.raises(NlueError, match="one build is one benchmark"):
        task_sources_from_folder(sample_data_dir(), ["sa", "mcq_ne"])


def test_the_sample_builds_and_loads_with_datasets(exam_build) -> None:
    assert exam_build.rejects == 0
    ne = datasets.load_dataset(str(exam_build.repo_dir), "mcq_ne")
    ur = datasets.load_dataset(str(exam_build.repo_dir), "mcq_ur")
    assert set(ne) == {"demo", "test"} and ne["test"].num_rows >= 60 and ur["test"].num_rows >= 30
    assert ne["test"].features["correct_key"].names == ["A", "B", "C", "D"]
    assert ne["test"].features["source"] == datasets.List(
        {"name": datasets.Value("string"), "url": datasets.Value("string")}
    )
    for row in ne["test"]:
        assert row["correct_option"] == row["ABCD"[row["correct_key"]]]


def test_the_sample_meets_its_brief() -> None:
    for task, least in ((NE, 60), (UR, 30)):
        test, demo = sample_split(task, "test"), sample_split(task, "demo")
        assert len(test) >= least and len(demo) >= 12
        assert overlapping(demo, test) == []  # the pool never holds a test item
        keys = Counter(item["correct_key"] for item in test)
        assert set(keys) == set("ABCD") and max(keys.values()) - min(keys.values()) <= 2
        for item in test + demo:
            assert item["options"][item["correct_key"]] == item["correct_option"]
    assert len({item["subdomain"] for item in sample_split(NE, "test")}) >= 6
    assert len({item["level"] for item in sample_split(NE, "test")}) >= 3


def test_the_card_says_sample_data_and_counts_subjects(exam_build) -> None:
    card = DatasetCard.load(exam_build.repo_dir / "README.md")
    assert set(card.data.language) == {"ne", "ur"} and "sample data" in card.data.pretty_name
    text = card.text
    assert "SAMPLE data" in text and SAMPLE_STATEMENT in text
    assert "#### Items per subject" in text and "| STEM | mathematics | 2 | 8 |" in text
    assert "| Humanities | urdu literature | 1 | 4 |" in text
    assert "Items per level in `test`: Grade 8" in text and "2606.07167" in text
    assert "| config | task | category | primary metric | demo | test |" in text
    assert "Paper sizes:** train none (zero-shot), test 26,431" in text  # Urdu: UrduMMLU's size; Nepali: none


def test_scores_count_invalid_outputs_as_wrong_or_leave_them_out() -> None:
    references = [0, 1, 2, 3, 0]
    predictions = [0, 1, 3, -1, "A"]
    scores = score_task("mcq_ne", predictions, references)
    assert scores["accuracy_all_items"] == pytest.approx(3 / 5)
    assert scores["accuracy_parseable"] == pytest.approx(3 / 4)
    assert scores["invalid_rate"] == pytest.approx(1 / 5)
    with_ci = score_task("mcq_ne", predictions, references, bootstrap_resamples=200)
    assert with_ci["accuracy_all_items_ci_low"] <= 0.6 <= with_ci["accuracy_all_items_ci_high"]
    with pytest.raises(ValueError, match="outside the labels"):
        score_task("mcq_ne", [4], [0])


def test_the_nlue_evaluate_module_scores_an_exam() -> None:
    evaluate = pytest.importorskip("evaluate")
    from nlue.scores import metric_path

    metric = evaluate.load(metric_path("nlue"), "mcq_ur")
    scores = metric.compute(predictions=[0, 1, -1, 3], references=[0, 2, 1, 3])
    assert scores == pytest.approx({"accuracy_all_items": 0.5, "accuracy_parseable": 2 / 3, "invalid_rate": 0.25})


def test_table4_is_kept_as_printed_and_checked() -> None:
    assert len(URDUMMLU_TABLE4) == 30
    for row in URDUMMLU_TABLE4:  # overall = item-weighted mean of the domains, where few outputs are invalid
        for values, invalid in ((row.en, row.en_invalid), (row.ur, row.ur_invalid)):
            if invalid in ("0", "<0.1"):
                assert micro_overall(values) == pytest.approx(values[-1], abs=0.011), row.model
    assert [(f["model"], f["prompt"]) for f in denominator_flags()] == [("BLOOMZ-3B", "ur")]
    assert [format_invalid_rate(r) for r in (0.0, 0.0004, 0.0005, 0.742)] == ["0", "<0.1", "0.1", "74.2"]
