"""Class-wise batches, the request's content, the strict reading of answers, and the retry/split schedule."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from nlue.registry.spec import TaskSpec
from nlue.registry.tasks import get_task
from nlue.translate.batches import RowOutcome, Unit, UnitFailed, make_batches, run_schedule
from nlue.translate.prompts import PROMPT_VERSION, ReplyError, batch_request, item_fields, parse_reply
from nlue.translate.readers import SourceRow, read_source

GLUE = Path(__file__).parent / "data" / "glue"


def _rows(labels: Sequence[object]) -> list[SourceRow]:
    return [SourceRow(str(i), "f.tsv", i + 1, {"sentence1": f"a{i}", "sentence2": f"b{i}"}, lab)
            for i, lab in enumerate(labels)]  # fmt: skip


def test_batches_hold_one_class_in_source_order_and_at_most_the_batch_size() -> None:
    task = get_task("rte")
    rows = _rows([0, 1, 0, 0, 1, 0, 0])
    units = make_batches(task, rows, batch_size=2)
    assert [(u.batch, [r.row for r in u.rows]) for u in units] == [
        ("entailment-0001", [1, 3]), ("entailment-0002", [4, 6]), ("entailment-0003", [7]),
        ("not_entailment-0001", [2, 5]),
    ]  # fmt: skip
    assert [len(u.rows) for u in make_batches(task, _rows([0] * 250))] == [100, 100, 50]
    stsb = get_task("stsb")
    bands = make_batches(stsb, _rows([4.8, 0.4, 4.6, 2.2]), batch_size=10)
    assert [(u.batch, len(u.rows)) for u in bands] == [("score-0-0001", 1), ("score-2-0001", 1), ("score-5-0001", 2)]
    with pytest.raises(ValueError, match="at least 1"):
        make_batches(task, rows, batch_size=0)
    first, second = units[0].halves()
    assert (first.name, second.name) == ("entailment-0001/1", "entailment-0001/2")
    assert [u.name for u in second.halves()] == ["entailment-0001/2.1", "entailment-0001/2.2"]


def test_the_request_carries_text_only_numbered_with_the_rules() -> None:
    wg = get_task("wg")
    rows = read_source(wg, GLUE / "winogrande.train_xs.jsonl").rows
    request = batch_request(wg, [r.fields for r in rows], attempt=0, max_new_tokens=500)
    system, user = request.messages
    assert PROMPT_VERSION in system.content and "names of people" in system.content
    items = json.loads(user.content.split("Items:\n", 1)[1])
    assert [item["n"] for item in items] == [1, 2, 3, 4]
    assert all(set(item) == {"n", "sentence", "option1", "option2"} for item in items)  # no answer
    assert "keep the blank marker '_' exactly once" in user.content and "exactly 4 objects" in user.content
    retry = batch_request(wg, [r.fields for r in rows], attempt=1, max_new_tokens=500)
    assert retry.to_dict() != request.to_dict() and "Retry 1" in retry.messages[1].content
    assert item_fields(get_task("qadsm")) == ("query", "ad_title", "ad_description")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ('[{"n": 1, "text": "क"}]', "count mismatch: 2 items sent, 1 returned"),
        ('[{"n": 1, "text": "क"}, {"n": 2, "text": "ख"', "not valid JSON"),
        ('Sure! [{"n": 1, "text": "क"}, {"n": 2, "text": "ख"}]', "not valid JSON"),
        ('{"1": "क", "2": "ख"}', "expected a JSON array"),
        ('[{"n": 1, "text": "क"}, {"n": 1, "text": "ख"}]', "item 1 is answered twice"),
        ('[{"n": 1, "text": "क"}, {"n": 3, "text": "ख"}]', "n=3, expected a number from 1 to 2"),
        ('[{"n": 1, "text": "क"}, {"n": 2, "text": "ख", "label": 1}]', "has the keys"),
        ('[{"n": 1, "text": "क"}, {"n": 2, "text": "  "}]', "item 2: text is not a non-empty string"),
        ('[{"n": 1, "text": "क"}, "ख"]', "entry 2 is not a JSON object"),
    ],
)
def test_answers_are_read_strictly(reply: str, message: str) -> None:
    with pytest.raises(ReplyError, match=message):
        parse_reply(reply, 2, ["text"])


def test_a_well_formed_answer_in_any_order_or_fenced_is_read() -> None:
    assert parse_reply('[{"n": 2, "text": "ख"}, {"n": 1, "text": "क"}]', 2, ["text"]) == [{"text": "क"}, {"text": "ख"}]
    fenced = '```json\n[{"n": 1, "text": "क"}]\n```'
    assert parse_reply(fenced, 1, ["text"]) == [{"text": "क"}]


class _Scripted:
    """A translator that fails any unit holding a 'bad' row (whole), and one row alone ('odd') row-wise."""

    name = "scripted"

    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    def describe(self) -> dict:
        return {}

    def translate(self, task: TaskSpec, units: Sequence[Unit]) -> list[list[RowOutcome] | UnitFailed]:
        out: list[list[RowOutcome] | UnitFailed] = []
        for unit in units:
            self.asked.append((unit.name, unit.attempt))
            if any(r.fields["sentence1"] == "bad" for r in unit.rows):
                out.append(UnitFailed("count mismatch", "count mismatch: scripted"))
            else:
                out.append([("odd row" if r.fields["sentence1"] == "odd" else dict(r.fields)) for r in unit.rows])
        return out


def test_a_failing_batch_is_retried_then_halved_down_to_the_row_that_fails() -> None:
    rows = _rows([0] * 5)
    rows[3] = SourceRow("3", "f.tsv", 4, {"sentence1": "bad", "sentence2": "x"}, 0)
    rows[0] = SourceRow("0", "f.tsv", 1, {"sentence1": "odd", "sentence2": "x"}, 0)
    translator = _Scripted()
    done, failed, stats = run_schedule(get_task("rte"), make_batches(get_task("rte"), rows), translator, retries=1)
    assert [d.row.row for d in done] == [2, 3, 5]
    assert [(f.row.row, f.reason) for f in failed] == [
        (1, "odd row"), (4, "count mismatch: scripted (translated alone, tried 2 times)")]  # fmt: skip
    assert translator.asked == [
        ("entailment-0001", 0), ("entailment-0001", 1),  # rows 1-5
        ("entailment-0001/1", 0), ("entailment-0001/2", 0), ("entailment-0001/2", 1),  # 1-2, 3-5
        ("entailment-0001/2.1", 0), ("entailment-0001/2.2", 0), ("entailment-0001/2.2", 1),  # 3, 4-5
        ("entailment-0001/2.2.1", 0), ("entailment-0001/2.2.2", 0), ("entailment-0001/2.2.1", 1),  # 4, 5
    ]  # fmt: skip
    assert stats.to_dict() == {"batches": 1, "requests": 11, "retries": 4, "splits": 3,
                               "failed_answers": {"count mismatch": 8}}  # fmt: skip
