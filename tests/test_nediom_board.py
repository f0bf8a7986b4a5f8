"""neDIOM's leaderboard: 8 variant columns, our runs, their floors and the paper's Table 3; off NLUE's table."""

from __future__ import annotations

from pathlib import Path

from nlue.boards.leaderboard import result_rows
from nlue.boards.nediom import COLUMNS, VARIANT_COLUMNS, load_nediom_board
from nlue.idioms.evaluate import variant_folder
from nlue.registry.kinds.idiomaticity import VARIANTS
from nlue.registry.nediom import TABLE3
from nlue.results import RunResult, write_result

FLOORS = {"always idiomatic": 0.44, "always literal": 0.18}


def _write(results: Path, setting: str, variant_index: int, macro_f1: float, sd: float | None = None) -> None:
    variant = VARIANTS[variant_index]
    metrics = {"macro_f1": macro_f1, "accuracy": 0.5} | ({"macro_f1_sd": sd} if sd is not None else {})
    result = RunResult(
        task="nediom",
        model="tiny-gpt2",
        kind="zero-shot" if setting == "zero-shot" else "fine-tune",
        metrics=metrics,
        dataset={"id": "nlue-sample", "config": "nediom", "split": "test", "is_sample": True},
        details={
            "setting": setting,
            "variant": {"number": variant.number, "context": variant.context, "with_idiom": variant.with_idiom},
            "floors": FLOORS,
        },
    )
    write_result(result, results, variant_folder("tiny", setting, variant))


def test_runs_floors_and_the_papers_rows_in_one_table(tmp_path: Path) -> None:
    results = tmp_path / "results"
    for index in range(len(VARIANTS)):
        _write(results, "zero-shot", index, 0.4 + index / 100)
    _write(results, "5-shot", 0, 0.61, sd=0.05)
    frame = load_nediom_board(results).frame()
    assert list(frame.columns) == list(COLUMNS) and len(VARIANT_COLUMNS) == 8
    zero = frame[(frame["model"] == "tiny") & (frame["setting"] == "zero-shot")].iloc[0]
    assert [zero[c] for c in VARIANT_COLUMNS] == [f"{0.4 + i / 100:.2f}" for i in range(8)]
    five = frame[(frame["model"] == "tiny") & (frame["setting"] == "5-shot")].iloc[0]
    assert five[VARIANT_COLUMNS[0]] == "0.61 ± 0.05" and five.isna()[VARIANT_COLUMNS[1]]
    floors = frame[frame["kind"] == "floor"]
    assert set(floors["model"]) == set(FLOORS) and set(floors[VARIANT_COLUMNS[3]]) == {"0.44", "0.18"}
    paper = frame[frame["kind"] == "paper"]
    assert len(paper) == 3 * len(next(iter(TABLE3.values())))  # 7 models x 3 settings
    gpt = paper[(paper["model"] == "GPT-3.5") & (paper["setting"] == "10-shot")].iloc[0]
    # Table 3, S2 context, GPT-3.5, 10-shot with / without the idiom, as printed.
    assert gpt[VARIANT_COLUMNS[0]] == "0.52" and gpt[VARIANT_COLUMNS[1]] == "0.50"
    llama = paper[(paper["model"] == "Llama2-7b") & (paper["setting"] == "5-shot")].iloc[0]
    assert llama[VARIANT_COLUMNS[0]] == "-"  # the paper ran no few-shot Llama 2


def test_idiom_files_stay_off_nlues_table_and_bad_ones_are_reported(tmp_path: Path) -> None:
    results = tmp_path / "results"
    _write(results, "zero-shot", 0, 0.5)
    broken = RunResult(task="nediom", model="x", kind="zero-shot", metrics={"macro_f1": 0.5})
    write_result(broken, results, "broken")
    board = result_rows(results)
    assert board.rows == [] and board.skipped == []
    nediom = load_nediom_board(results)
    assert [s.split(":")[0] for s in nediom.skipped] == ["broken/nediom.json"]
