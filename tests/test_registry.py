"""The task registry agrees with the paper's figures and with itself."""

from __future__ import annotations

import math
import re

import pytest

from nlue.registry.features import task_features
from nlue.registry.paper import PAPER_MODELS, RESULT_COLUMNS
from nlue.registry.tasks import GMET_CATEGORY_THEME, GMET_THEMES, TASK_NAMES, TASKS, get_task

from .conftest import SHARED

PAPER_FACTS = SHARED / "paper_facts.md"


def test_twelve_configs_in_paper_order() -> None:
    assert TASK_NAMES == ("sa", "cola", "wg", "qqp", "mrpc", "stsb", "qadsm", "mnli", "qnli", "rte", "cr", "gmet")


def test_unknown_task_lists_valid_names() -> None:
    with pytest.raises(ValueError, match=r"unknown NLUE task 'squad'.*sa, cola, wg"):
        get_task("squad")


@pytest.mark.parametrize(
    ("name", "labels"),
    [
        ("sa", ("negative", "positive")),
        ("cola", ("unacceptable", "acceptable")),
        ("mnli", ("entailment", "neutral", "contradiction")),
        ("qnli", ("entailment", "not_entailment")),
        ("rte", ("entailment", "not_entailment")),
        ("qqp", ("not_duplicate", "duplicate")),
        ("mrpc", ("not_equivalent", "equivalent")),
        ("qadsm", ("irrelevant", "relevant")),
        ("cr", ("incorrect", "correct")),
        ("wg", ("option1", "option2")),
    ],
)
def test_label_order_follows_the_paper(name: str, labels: tuple[str, ...]) -> None:
    task = TASKS[name]
    assert task.label_names == labels
    assert task.id2label == dict(enumerate(labels))
    assert task.num_labels == len(labels)


@pytest.mark.parametrize("task", [TASKS[n] for n in TASK_NAMES], ids=TASK_NAMES)
def test_entry_is_complete_and_consistent(task) -> None:
    assert task.title and task.description and task.sources and task.domains and task.citation
    assert task.primary_metric in (*task.metrics, "pearson_spearman_mean")
    if task.problem_type == "classification":
        assert set(task.class_balance) == set(task.label_names)
        assert math.isclose(sum(task.class_balance.values()), 1.0, abs_tol=1e-9)
        assert task.metrics == ("accuracy", "macro_f1") and task.primary_metric == "macro_f1"
    features = task_features(task)
    for field in task.input_fields:
        assert field in features
    if task.label_field:
        assert task.label_field in features
    # Every reported score is on the 0-1 scale and every model has the task's metrics.
    assert set(task.paper_results) == {m.name for m in PAPER_MODELS}
    for scores in task.paper_results.values():
        assert all(0.0 <= v <= 1.0 for v in scores.values())
    assert task.paper_best_model() is not None


def test_stsb_and_gmet_specifics() -> None:
    assert TASKS["stsb"].problem_type == "regression" and TASKS["stsb"].num_labels == 1
    assert TASKS["stsb"].metrics == ("pearson", "spearman", "r2")
    assert TASKS["stsb"].primary_metric == "pearson_spearman_mean"
    gmet = TASKS["gmet"]
    assert gmet.splits == ("test",) and gmet.primary_metric == "combined"
    assert len(GMET_CATEGORY_THEME) == 75 and len(GMET_THEMES) == 7


def _paper_table_rows() -> dict[str, list[float]]:
    """Parse the 'Reported results' table of shared/paper_facts.md: model -> 25 numbers."""
    text = PAPER_FACTS.read_text(encoding="utf-8")
    section = text.split("### Reported results", 1)[1].split("###", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\| ([^|]+?) \((\d+)M\) \|(.*)\|\s*$", line)
        if match:
            rows[match.group(1)] = [float(x) for x in re.findall(r"\d+\.\d+", match.group(3))]
    return rows


def _paper_hparam_rows() -> dict[str, list[str]]:
    text = PAPER_FACTS.read_text(encoding="utf-8")
    section = text.split("### Best hyperparameters", 1)[1].split("###", 1)[0]
    rows = {}
    for line in section.splitlines()[3:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 12:
            rows[cells[0]] = cells[1:]
    return rows


needs_facts = pytest.mark.skipif(not PAPER_FACTS.is_file(), reason="../shared/paper_facts.md not beside the repo")


@needs_facts
def test_reported_results_match_paper_facts() -> None:
    rows = _paper_table_rows()
    assert len(rows) == len(PAPER_MODELS) == 10
    for model in PAPER_MODELS:
        assert rows[model.name] == list(model.results_percent), model.name
        for (task, metric), value in zip(RESULT_COLUMNS, model.results_percent, strict=True):
            assert TASKS[task].paper_results[model.name][metric] == pytest.approx(value / 100, abs=1e-9)


@needs_facts
def test_best_hparams_match_paper_facts() -> None:
    rows = _paper_hparam_rows()
    order = ("sa", "cola", "wg", "qqp", "mrpc", "stsb", "qadsm", "mnli", "qnli", "rte", "cr")
    for model in PAPER_MODELS:
        for task, cell in zip(order, rows[model.name], strict=True):
            preset, lr, epochs, batch = cell.split(",")
            hp = TASKS[task].paper_best_hparams[model.name]
            assert (hp.preset, hp.learning_rate, hp.epochs, hp.batch_size) == (
                preset,
                float(lr),
                int(epochs),
                int(batch),
            )


@needs_facts
def test_sizes_and_categories_match_paper_facts() -> None:
    text = PAPER_FACTS.read_text(encoding="utf-8")
    table = text.split("## NLUE", 1)[1].split("Field names", 1)[0]

    def size(cell: str) -> int | None:
        cell = cell.strip()
        if cell in ("–", "-"):
            return None
        return round(float(cell[:-1]) * 1000) if cell.endswith("K") else int(cell)

    seen = set()
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0] in TASKS:
            task = TASKS[cells[0]]
            seen.add(task.name)
            assert task.category == cells[2]
            assert task.paper_train_size == size(cells[3])
            assert task.paper_test_size == size(cells[4])
    assert seen == set(TASK_NAMES)
    section = " ".join(text.split("### GMET categories", 1)[1].split("###", 1)[0].split())
    for theme, categories in GMET_THEMES.items():
        listed = section.split(f"- {theme}:", 1)[1].split(" - ", 1)[0]
        assert [c.strip() for c in re.split(r",(?![^(]*\))", listed)] == list(categories), theme
