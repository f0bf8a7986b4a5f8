"""The Space page's table handling (Gradio itself is only needed for the last test)."""

from __future__ import annotations

import evaluate
import pytest

from nlue.scores import metric_path
from nlue.space.metric_widget import input_columns, table_to_inputs


def test_columns_follow_the_module_features():
    assert input_columns(evaluate.load(metric_path("nlue"), "mnli")) == [
        ("predictions", "number"),
        ("references", "number"),
    ]
    # GMET references are answer lists or 0/1 judgments: read as JSON to accept both.
    assert input_columns(evaluate.load(metric_path("gmet_combined"))) == [
        ("predictions", "str"),
        ("references", "json"),
        ("categories", "str"),
    ]


def test_table_rows_become_compute_arguments():
    columns = [("predictions", "str"), ("references", "json"), ("categories", "str")]
    rows = [[" झ्याल ", '["झ्याल", "ढोका"]', "House"], ["", "", ""], ["आमा", "1", "Family"], [None, None, None]]
    assert table_to_inputs(rows, columns) == {
        "predictions": ["झ्याल", "आमा"],
        "references": [["झ्याल", "ढोका"], 1],
        "categories": ["House", "Family"],
    }
    assert table_to_inputs([[1.0, "2.5"]], [("predictions", "number"), ("references", "number")]) == {
        "predictions": [1],
        "references": [2.5],
    }
    with pytest.raises(ValueError, match=r"row 2, column 'references': '' is not a number"):
        table_to_inputs([[1, 0], [1, ""]], [("predictions", "number"), ("references", "number")])
    with pytest.raises(ValueError, match=r"row 1, column 'references'.* is not JSON"):
        table_to_inputs([["x", "[not json", "House"]], columns)


def test_page_builds_and_scores():
    pytest.importorskip("gradio")  # the Space's SDK; not a dependency of the package or its CI
    from nlue.space.metric_widget import build_widget

    page = build_widget(evaluate.load(metric_path("gmet_combined")))
    compute = next(iter(page.fns.values())).fn
    scores = compute([["झ्याल", '["झ्याल"]', "House"], ["भाइ", '["दाइ"]', "Family"]], 0)
    assert scores["accuracy"] == 0.5
