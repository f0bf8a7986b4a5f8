"""Property tests of the readers, normalisers and parsers a user's data passes through (issue 22).

The properties and their strategies are in :mod:`tests.reliability_cases`; here each runs a few
hundred examples (``Property.suite_examples``), the whole file in well under a minute.
``benchmarks/reliability_properties.py`` runs the same ones 10,000 times each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings

from .reliability_cases import PROPERTIES, Property

_BY_NAME = {prop.name: prop for prop in PROPERTIES}
_RUN: list[str] = []


def _property_test(name: str) -> Callable[[], None]:
    prop: Property = _BY_NAME[name]
    _RUN.append(name)

    @settings(
        max_examples=prop.suite_examples,
        deadline=None,  # file writes on a shared machine: time is not the property
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )
    @given(prop.strategy)
    def test(case: Any) -> None:
        prop.check(case)

    test.__doc__ = f"Property: {name} (see tests/reliability_cases.py)."
    return test


test_csv_and_tsv_reader = _property_test("csv/tsv reader")
test_jsonl_reader = _property_test("jsonl reader")
test_parquet_reader = _property_test("parquet reader")
test_record_through_a_tasks_rules = _property_test("record through a task's rules")
test_normalize_text = _property_test("normalize_text")
test_normalize_answer = _property_test("normalize_answer")
test_normalize_mcq_text = _property_test("normalize_mcq_text")
test_idiom_span_parser = _property_test("idiom span parser")
test_exam_answer_parser = _property_test("exam answer parser")
test_label_parser = _property_test("label parser")


def test_every_property_runs_here() -> None:
    assert sorted(_RUN) == sorted(_BY_NAME)
