"""The exams' leaderboard: our LLM runs beside the UrduMMLU paper's Table 4, apart from NLUE's table."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from nlue.boards.exams import COLUMNS, load_exam_board
from nlue.boards.leaderboard import result_rows
from nlue.registry.mcq import URDUMMLU_TABLE4
from nlue.results import SCHEMA_VERSION, RunResult, write_result


def _exam_result(model: str, prompt: str, all_items: float, parseable: float, invalid: float) -> RunResult:
    return RunResult(
        task="mcq_ur",
        model=model,
        kind="zero-shot",
        metrics={
            "accuracy_all_items": all_items,
            "accuracy_all_items_ci_low": all_items - 0.1,
            "accuracy_all_items_ci_high": all_items + 0.1,
            "accuracy_parseable": parseable,
            "invalid_rate": invalid,
        },
        dataset={"id": "nlue-sample", "config": "mcq_ur", "split": "test", "is_sample": True},
        hyperparameters={"prompt_language": prompt, "shots": 0},
        details={"by": {"domain": {"STEM": {"accuracy_parseable": 0.75}, "Other": {"accuracy_parseable": 0.5}}}},
    )


def test_exam_runs_and_the_papers_rows_share_one_table(tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_result(_exam_result("tiny-llm", "en", 0.5, 0.625, 0.2), results, "tiny-llm__en")
    write_result(_exam_result("tiny-llm", "native", 0.25, 0.5, 0.5), results, "tiny-llm__native")
    board = load_exam_board(results)
    frame = board.frame()
    assert list(frame.columns) == list(COLUMNS)
    ours = frame[~frame["kind"].str.startswith("paper")]
    assert list(ours["model"]) == ["tiny-llm__en", "tiny-llm__native"]  # sorted by accuracy over all items
    first = ours.iloc[0]
    assert first["All (all items)"] == 50.0 and first["All (parseable)"] == 62.5 and first["Inv%"] == "20.0"
    assert first["STEM"] == 75.0 and first["95% CI (all items)"] == "40.0-60.0"
    assert first["data"] == "⚠ sample data" and first["prompt"] == "en"
    paper = frame[frame["kind"].str.startswith("paper")]
    assert len(paper) == 2 * len(URDUMMLU_TABLE4)  # English and Urdu prompts per model
    gpt = paper[(paper["model"] == "GPT-5.4") & (paper["prompt"] == "native")].iloc[0]
    # Table 4 as printed: the Urdu-prompt overall and Inv% of GPT-5.4.
    assert gpt["All (parseable)"] == 84.53 and gpt["Inv%"] == "0.4" and pd.isna(gpt["All (all items)"])


def test_exam_files_stay_off_the_nlue_table_and_bad_ones_are_reported(tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_result(_exam_result("tiny-llm", "en", 0.5, 0.625, 0.2), results, "tiny-llm__en")
    broken = results / "broken" / "mcq_ne.json"
    broken.parent.mkdir(parents=True)
    broken.write_text(
        json.dumps({"schema_version": SCHEMA_VERSION, "task": "mcq_ne", "model": "x", "metrics": {"accuracy": 1.0}})
    )
    nlue_board = result_rows(results)
    assert nlue_board.rows == [] and nlue_board.skipped == []
    exams = load_exam_board(results)
    assert [s.split(":")[0] for s in exams.skipped] == ["broken/mcq_ne.json"]


def test_board_columns_fit_their_longest_header_word_so_headers_wrap_between_words() -> None:
    from nlue.boards.table import CHAR_PX, MAX_COLUMN_PX, MIN_COLUMN_PX, PADDING_PX, TableBoard

    board = TableBoard(
        ("model", "All (all items)", "n"),
        [{"model": "m" * 60, "All (all items)": 0.5, "n": None}, {"model": "short", "All (all items)": 12.25}],
    )
    widths = [int(w.removesuffix("px")) for w in board.column_widths()]
    assert widths[0] == MAX_COLUMN_PX  # a very long name wraps inside the widest column
    assert widths[1] == CHAR_PX * len("items)") + PADDING_PX  # the header's longest word, not its numbers
    assert widths[2] == MIN_COLUMN_PX
    real = load_exam_board(Path("/nonexistent"))  # the paper's rows alone
    assert len(real.column_widths()) == len(real.columns)


def test_real_runs_fill_the_domain_columns_and_name_their_prompt_as_the_paper_does(tmp_path: Path) -> None:
    """`nlue llm mcq` keeps its per-domain scores as table rows (details.tables.domain), not as details.by."""
    run = _exam_result("tiny-llm", "en", 0.5, 0.625, 0.2)
    run.details = {"tables": {"domain": [{"group": "STEM", "n_items": 4, "accuracy_parseable": 0.75},
                                         {"group": "Humanities", "n_items": 4, "accuracy_parseable": 0.25}]}}  # fmt: skip
    write_result(run, tmp_path, "tiny-llm__en")
    native = _exam_result("tiny-llm", "ur", 0.5, 0.625, 0.2)
    native.hyperparameters = {"prompt_language": "ur", "prompt_language_role": "native", "shots": 0}
    write_result(native, tmp_path, "tiny-llm__ur")
    rows = {r["model"]: r for r in load_exam_board(tmp_path).rows if r["model"].startswith("tiny-llm")}
    row = rows["tiny-llm__en"]
    assert row["STEM"] == 75.0 and row["Humanities"] == 25.0 and row["Other"] is None
    # named as the paper's rows name the prompt, with the language beside it
    assert row["prompt"] == "en" and rows["tiny-llm__ur"]["prompt"] == "native (ur)"
