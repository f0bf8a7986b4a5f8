"""neDIOM's task kind: registration, row rules (each with a failing row), the sample built and loaded, variants, scores."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import datasets
import pytest
from huggingface_hub import DatasetCard
from sklearn.metrics import accuracy_score, f1_score

from nlue.data.build import build_repo
from nlue.data.discover import task_sources_from_folder
from nlue.data.report import BuildOptions, TaskSources
from nlue.data.rows import RowConverter
from nlue.data.sample import sample_data_dir, sample_split
from nlue.errors import RowProblem
from nlue.idioms.split import draw_pool, shots
from nlue.registry.kinds.idiomaticity import VARIANTS, context_text, get_variant, variant_input
from nlue.registry.nediom import TABLE3, TABLE3_MODELS
from nlue.registry.tasks import BENCHMARKS, TASK_NAMES, TASKS, get_task
from nlue.registry.views import readme_tasks_table
from nlue.scores import score_task
from nlue.text.idiom_position import mark_position, parse_position
from nlue.text.idiom_prefix import compile_idiom

TASK = get_task("nediom")
S2 = "पाहुना धेरै आएपछि भोजको खर्चले डाँडो काट्यो।"
GOOD = {
    "idiom": "डाँडो काट्नु",
    "S1": "छोरीको बिहे धुमधामसँग गर्ने योजना थियो।",
    "S2": S2,
    "S3": "अब ऋण तिर्न दुई वर्ष लाग्ने भयो।",
    "label": "I",
    "position": "पाहुना धेरै आएपछि भोजको खर्चले ###डाँडो काट्यो###।",
}


def _convert(record: dict):
    return RowConverter(TASK).convert("idioms.jsonl", 3, record)


def _problem(**changes) -> RowProblem:
    result = _convert({**GOOD, **changes})
    assert isinstance(result, RowProblem), result
    assert (result.file, result.row) == ("idioms.jsonl", 3)
    return result


def test_registered_as_its_own_benchmark_without_changing_nlue() -> None:
    assert list(BENCHMARKS) == ["nlue", "mcq", "nediom"] and BENCHMARKS["nediom"].task_names == ("nediom",)
    assert len(TASK_NAMES) == 12 and "nediom" not in TASK_NAMES and TASKS["nediom"] is TASK
    assert TASK.kind.name == "idiomaticity" and TASK.splits == ("train", "test") and not TASK.kind.carves_validation
    assert TASK.label_names == ("idiomatic", "literal") and TASK.primary_metric == "macro_f1"
    assert TASK.primary_is_paper_defined and "paper's one metric" in TASK.primary_note
    assert "`nediom`" in readme_tasks_table()  # the generated README table lists it from the registry


def test_a_good_row_gets_offsets_and_the_prefix_flag() -> None:
    row = _convert(GOOD)
    assert isinstance(row, dict), row
    assert row["label"] == 0 and row["S2"][row["span_start"] : row["span_end"]] == "डाँडो काट्यो"
    assert row["prefix_match"] is True and row["id"].startswith("nediom-")
    assert _convert({**GOOD, "label": "\u0399"})["label"] == 0  # the Greek capital iota OCR put for I
    assert _convert({**GOOD, "label": "literal"})["label"] == 1 and _convert({**GOOD, "label": 1})["label"] == 1
    edge = _convert({**GOOD, "S1": None, "S3": ""})  # a hit in a document's first and last sentence
    assert (edge["S1"], edge["S3"]) == ("", "")
    # Markers typed against the words still read: the field without them is S2 ignoring spaces.
    tight = _convert({**GOOD, "position": "पाहुना धेरै आएपछि भोजको खर्चले###डाँडो काट्यो ###।"})
    assert (tight["span_start"], tight["span_end"]) == (row["span_start"], row["span_end"])


def test_a_span_the_prefix_rule_misses_is_kept_and_flagged() -> None:
    s2 = "पाहुना धेरै आएपछि भोजको खर्चले डाँडो नै काट्यो।"  # a particle inside the idiom
    row = _convert({**GOOD, "S2": s2, "position": s2.replace("डाँडो नै काट्यो", "###डाँडो नै काट्यो###")})
    assert isinstance(row, dict) and row["prefix_match"] is False


@pytest.mark.parametrize(
    ("changes", "field", "reason"),
    [
        ({"label": "NA"}, "label", "NA (incoherent context) items are not part of the dataset"),
        ({"label": "X"}, "label", "expected I or L"),
        ({"position": S2}, "position", "found no span"),
        ({"position": "###पाहुना### धेरै ###आएपछि### भोजको खर्चले डाँडो काट्यो।"}, "position", "found 4 markers"),
        ({"position": "#### डाँडो काट्यो####"}, "position", "a run of 4 '#'"),
        ({"position": "अर्कै वाक्यमा ###डाँडो काट्यो###।"}, "position", "is not S2"),
        ({"position": "पाहुना धेरै आएपछि भोजको खर्चले ### ###डाँडो काट्यो।"}, "position", "span is empty"),
        ({"position": None}, "position", "missing"),
        ({"S2": "भोजको खर्चले ###डाँडो काट्यो###।"}, "S2", "plain text"),
        ({"S3": "अर्को ###वाक्य###।"}, "S3", "plain text"),
        ({"idiom": "डाँडो"}, "idiom", "at least two words"),
        ({"S2": " \u200b "}, "S2", "empty text"),
    ],
)
def test_each_rule_names_the_field_of_a_failing_row(changes: dict, field: str, reason: str) -> None:
    problem = _problem(**changes)
    assert problem.field == field and reason in problem.reason, problem


def test_the_position_field_round_trips_and_picks_the_marked_occurrence() -> None:
    s2 = "हात लाग्यो, फेरि हात लाग्यो।"
    span = parse_position("हात लाग्यो, फेरि ###हात लाग्यो###।", s2)
    second = s2.rindex("हात लाग्यो")
    assert second > 0 and (span.start, span.end, span.text) == (second, second + 10, "हात लाग्यो")
    assert mark_position(s2, span.start, span.end) == "हात लाग्यो, फेरि ###हात लाग्यो###।"


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_rejects_are_listed_and_na_can_be_dropped_by_the_label_map(tmp_path: Path) -> None:
    train = _write(tmp_path / "train.jsonl", [GOOD, {**GOOD, "label": "NA"}, {**GOOD, "position": S2}])
    test = _write(tmp_path / "test.jsonl", [{**GOOD, "idiom": "खर्च डाँडो काट्नु", "label": "L"}])
    result = build_repo([TaskSources(TASK, {"train": [train], "test": [test]})], tmp_path / "out",
                        BuildOptions(name="nediom", show_progress=False))  # fmt: skip
    rejects = [json.loads(line) for line in result.rejects_path.read_text(encoding="utf-8").splitlines()]
    assert [(r["split"], r["row"], r["field"]) for r in rejects] == [("train", 2, "label"), ("train", 3, "position")]
    assert set(result.configs["nediom"].splits) == {"train", "test"}  # no validation carved from the pool


@pytest.fixture(scope="module")
def idiom_build(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("nediom-build")
    options = BuildOptions(name="nediom", is_sample=True, license="apache-2.0", show_progress=False)
    return build_repo(task_sources_from_folder(sample_data_dir(), ["nediom"]), out, options)


def test_the_sample_meets_its_brief_and_every_span_checks_out() -> None:
    train, test = sample_split(TASK, "train"), sample_split(TASK, "test")
    items = train + test
    assert len(items) >= 60 and len({item["idiom"] for item in items}) >= 25
    assert Counter(item["label"] for item in train) == {"I": 10, "L": 10}
    assert {item["label"] for item in test} == {"I", "L"}
    assert not {item["idiom"] for item in train} & {item["idiom"] for item in test}  # no idiom in both
    for item in items:
        span = parse_position(item["position"], item["S2"])
        pattern = compile_idiom(item["idiom"])
        # The marked span is exactly what the miner marks: the idiom through its inflected last word.
        assert pattern.match_at(item["S2"], span.start) == (span.start, span.end), item["id"]
    # The shipped split is the documented draw: 10 per label over whole idioms, seed 42, from the items in id order.
    ordered = sorted(items, key=lambda item: item["id"])
    assert draw_pool(ordered, 10, 42) == (train, sorted(test, key=lambda item: item["id"]))
    five = shots(train, 5)  # the 5-shot set: the first 5 per label of the pool, nested in the 10-shot set
    assert Counter(item["label"] for item in five) == {"I": 5, "L": 5} and shots(train, 10) == train
    assert five == [
        item for item in train if [i["label"] for i in train[: train.index(item) + 1]].count(item["label"]) <= 5
    ]


def test_the_sample_builds_and_loads_with_datasets(idiom_build) -> None:
    assert idiom_build.rejects == 0
    ds = datasets.load_dataset(str(idiom_build.repo_dir), "nediom")
    assert set(ds) == {"train", "test"} and ds["train"].num_rows == 20 and ds["test"].num_rows >= 40
    assert ds["test"].features["label"].names == ["idiomatic", "literal"]
    for row in ds["test"]:
        assert row["prefix_match"] and "###" not in row["S2"]
        assert row["idiom"].split()[0] in row["S2"][row["span_start"] : row["span_end"]]


def test_the_card_says_sample_data_and_our_decisions(idiom_build) -> None:
    card = DatasetCard.load(idiom_build.repo_dir / "README.md")
    assert card.data.language == ["ne"] and "sample data" in card.data.pretty_name
    text = card.text
    assert "SAMPLE data" in text and "Pokharel" in text and "no idiom occurs in both" in text
    assert "| 8 | S1+S2+S3 | no |" in text and "never shown to a model" in text
    assert "through the inflected form of its last word" in text and "suppletive" in text
    assert "| test | 0 | 0 | 0 | 0 |" in text  # the card's overlap table: no idiom shared with train


def test_nlue_build_builds_the_sample_from_the_command_line(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "nlue.cli", "build", "--configs", "nediom", "--name", "nediom", "--out",
               str(tmp_path), "-q"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert datasets.load_dataset(str(tmp_path / "nediom"), "nediom")["train"].num_rows == 20


def test_the_eight_variants_are_the_papers_and_never_show_markers() -> None:
    assert [(v.number, v.context, v.with_idiom) for v in VARIANTS] == [
        (1, "S2", True), (2, "S2", False), (3, "S1+S2", True), (4, "S1+S2", False),
        (5, "S2+S3", True), (6, "S2+S3", False), (7, "S1+S2+S3", True), (8, "S1+S2+S3", False),
    ]  # fmt: skip
    row = _convert(GOOD)
    assert variant_input(row, get_variant("S2", True)) == (GOOD["idiom"], S2)
    assert variant_input(row, get_variant("S1+S2+S3", False)) == (f"{GOOD['S1']} {S2} {GOOD['S3']}", None)
    assert context_text({**row, "S1": ""}, "S1+S2") == S2  # an empty neighbour leaves no stray space
    for variant in VARIANTS:
        assert "#" not in "".join(filter(None, variant_input(row, variant)))
    assert TASK.kind.text_pair(TASK, row) == variant_input(row, VARIANTS[0])
    with pytest.raises(ValueError, match="unknown context"):
        get_variant("S1", True)


def test_scores_are_sklearns_macro_f1_and_accuracy() -> None:
    references = [0, 0, 0, 1, 1, 0, 1, 0]
    predictions = [0, 1, 0, 1, 0, 0, 0, 0]
    scores = score_task("nediom", predictions, references)
    assert scores["macro_f1"] == pytest.approx(f1_score(references, predictions, average="macro"))
    assert scores["accuracy"] == pytest.approx(accuracy_score(references, predictions))
    always_i = score_task("nediom", [0] * 8, references)["macro_f1"]  # a test set without literal answers scores 0
    assert always_i == pytest.approx(f1_score(references, [0] * 8, average="macro", labels=[0, 1]))
    with pytest.raises(ValueError):
        score_task("nediom", [2], [0])


def test_table3_is_kept_as_printed() -> None:
    assert list(TABLE3) == ["S2", "S1+S2", "S2+S3", "S1+S2+S3"] and len(TABLE3_MODELS) == 7
    best = max(v for row in TABLE3.values() for cells in row.values() for v in cells if v is not None)
    assert best == 0.56 and TABLE3["S1+S2"]["GPT-3.5"][4] == 0.56
    assert TABLE3["S1+S2+S3"]["Llama2-7b"] == (None,) * 6 and TABLE3["S1+S2+S3"]["BLOOM-3b"][4:] == (None, None)
