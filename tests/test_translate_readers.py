"""The English source readers: every declared GLUE-style format, its quirks, and row-level rejects."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlue.errors import NlueError
from nlue.registry.tasks import TASKS, get_task
from nlue.registry.translation_sources import TRANSLATION_SOURCES
from nlue.translate.readers import choose_format, read_source, split_from_name

GLUE = Path(__file__).parent / "data" / "glue"

# file -> (task, format, rows kept, {row: (field, reason start)} rejected, dropped)
EXPECTED = {
    "SST-2.train.tsv": ("sa", "glue-sst2", 6, {7: ("text", "empty text"), 8: ("label", "unknown label")}, {}),
    "CoLA.in_domain_train.tsv": ("cola", "glue-cola", 5, {6: ("label", "unknown label")}, {}),
    "winogrande.train_xs.jsonl": (
        "wg", "winogrande-jsonl", 4, {5: ("sentence", "expected exactly one blank"), 6: ("(row)", "not valid JSON")}, {},
    ),
    "QQP.train.tsv": ("qqp", "glue-qqp", 5, {5: ("(row)", "has 4 tab-separated cells, expected 6")}, {}),
    "MRPC.msr_paraphrase_train.txt": ("mrpc", "glue-mrpc", 4, {}, {}),
    "STS-B.train.tsv": (
        "stsb", "glue-stsb", 4, {5: ("label", "score outside 0-5"), 6: ("(row)", "has 11 tab-separated cells")}, {},
    ),
    "xglue.qadsm.en.train": ("qadsm", "xglue-qadsm", 4, {5: ("relevance_label", "unknown label")}, {}),
    "MNLI.train.tsv": ("mnli", "glue-mnli", 4, {}, {"-": 1}),
    "QNLI.train.tsv": ("qnli", "glue-qnli", 4, {}, {}),
    "RTE.train.tsv": ("rte", "glue-rte", 12, {}, {}),
    "WNLI.train.tsv": ("cr", "glue-wnli", 3, {}, {}),
    "WSC.val.jsonl": ("cr", "superglue-wsc", 2, {3: ("sentence2", "the words at target.span2_index=3 are not 'he'")}, {}),
}  # fmt: skip


def test_every_classification_task_of_the_registry_declares_a_source_and_a_sample_covers_it() -> None:
    trainable = {name for name, task in TASKS.items() if task.kind.trainable and task.benchmark == "nlue"}
    assert set(TRANSLATION_SOURCES) == trainable
    sampled = {fmt for _, fmt, *_ in EXPECTED.values()}
    declared = {fmt.name for formats in TRANSLATION_SOURCES.values() for fmt in formats}
    assert sampled == declared
    for name, formats in TRANSLATION_SOURCES.items():
        task = get_task(name)
        for fmt in formats:  # a declaration names only fields the registry has
            assert set(fmt.fields) <= set(task.input_fields)
            derived = {fmt.substitution.into} if fmt.substitution else set()
            assert set(fmt.fields) | derived == set(task.input_fields)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_sample_reads_with_the_builders_rejects(name: str) -> None:
    task_name, fmt, kept, rejected, dropped = EXPECTED[name]
    result = read_source(get_task(task_name), GLUE / name)
    assert result.format.name == fmt
    assert len(result.rows) == kept
    assert {p.row: p.field for p in result.rejects} == {row: field for row, (field, _) in rejected.items()}
    for problem in result.rejects:
        assert problem.reason.startswith(rejected[problem.row][1]) and problem.file.endswith(name)
    assert dict(result.dropped) == dropped
    assert result.read == kept + len(rejected) + sum(dropped.values())
    task = get_task(task_name)
    for row in result.rows:
        assert set(row.fields) == set(task.input_fields) and all(row.fields.values())


def test_quirks_quotes_ids_labels_scores_and_substitution() -> None:
    mrpc = read_source(get_task("mrpc"), GLUE / "MRPC.msr_paraphrase_train.txt").rows
    # an unbalanced quote is text, not quoting; the BOM is not part of the first column's name
    assert mrpc[1].fields["sentence1"] == 'The company said profits rose by "about 4 percent.'
    assert [r.source_id for r in mrpc] == ["9001+9002", "9003+9004", "9005+9006", "9007+9008"]
    assert [r.label for r in mrpc] == [1, 0, 1, 0]  # Quality 1 = equivalent (id 1)
    qqp = read_source(get_task("qqp"), GLUE / "QQP.train.tsv").rows
    assert qqp[2].fields["question1"] == 'What is a good "first" bike for a child?' and qqp[2].source_id == "103"
    stsb = read_source(get_task("stsb"), GLUE / "STS-B.train.tsv").rows
    assert [r.label for r in stsb] == [4.8, 0.4, 4.0, 2.2]
    wg = read_source(get_task("wg"), GLUE / "winogrande.train_xs.jsonl").rows
    assert [r.label for r in wg] == [1, 0, 0, 1] and wg[0].source_id == "wg-1"  # answer 2 -> option2 (id 1)
    qadsm = read_source(get_task("qadsm"), GLUE / "xglue.qadsm.en.train").rows
    assert [r.label for r in qadsm] == [1, 0, 1, 0]  # Good -> relevant (1), Bad -> irrelevant (0)
    mnli = read_source(get_task("mnli"), GLUE / "MNLI.train.tsv").rows
    assert [r.label for r in mnli] == [0, 1, 2, 0] and mnli[0].fields["premise"].startswith("The market")
    wsc = read_source(get_task("cr"), GLUE / "WSC.val.jsonl").rows
    assert wsc[0].fields["sentence2"] == "The cat chased the mouse because The cat was hungry."
    assert wsc[1].fields["sentence2"] == "The cat chased the mouse because the mouse was hungry."
    assert [r.label for r in wsc] == [1, 0]  # true -> correct (1)
    wnli = read_source(get_task("cr"), GLUE / "WNLI.train.tsv").rows
    assert [r.label for r in wnli] == [1, 0, 1]


def test_format_detection_naming_and_split_names(tmp_path: Path) -> None:
    assert choose_format(get_task("cr"), GLUE / "WSC.val.jsonl").name == "superglue-wsc"
    assert choose_format(get_task("cr"), GLUE / "WNLI.train.tsv", "glue-wnli").name == "glue-wnli"
    with pytest.raises(NlueError, match="has no source format 'glue-rte'; it has glue-wnli, superglue-wsc"):
        choose_format(get_task("cr"), GLUE / "WNLI.train.tsv", "glue-rte")
    with pytest.raises(NlueError, match=r"does not look like any source of task 'rte'.*glue-rte: GLUE RTE TSV"):
        choose_format(get_task("rte"), GLUE / "QQP.train.tsv")
    with pytest.raises(NlueError, match="declares no English source"):
        choose_format(get_task("gmet"), GLUE / "RTE.train.tsv")
    assert split_from_name(Path("dev_matched.tsv")) == "validation"
    assert split_from_name(Path("WSC.val.jsonl")) == "validation"
    assert split_from_name(Path("xglue.qadsm.en.train")) == "train"
    assert split_from_name(Path("test.tsv")) == "test"
    assert split_from_name(Path("rte.tsv")) is None
    assert split_from_name(Path("train_and_test.tsv")) is None  # two splits named: the user must say
