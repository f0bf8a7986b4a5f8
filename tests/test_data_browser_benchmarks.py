"""The sample of every benchmark loads on its own (one repo each), and the data browser shows all of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlue.data.access import dataset_description, load_task, resolve_dataset
from nlue.registry.tasks import BENCHMARKS, get_task
from nlue.space.data import DataBrowser


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NLUE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_each_benchmark_sample_is_its_own_repo(cache: Path) -> None:
    for name, benchmark in BENCHMARKS.items():
        first = benchmark.tasks[0]
        repo = Path(resolve_dataset(None, first))
        assert repo.name == name and repo.is_relative_to(cache)
        assert set(load_task(None, first)) == set(first.splits)
    assert dataset_description(None, "mcq_ur", "test")["path"].endswith("/mcq")


def test_the_browser_pages_every_benchmark_and_marks_the_idiom(cache: Path) -> None:
    browser = DataBrowser(None)
    exam, _, _ = browser.page("mcq_ne", "test", 1, 3)
    assert exam["correct_key"].isin(list("ABCD")).all()
    assert exam["source"].map(lambda s: isinstance(s, str) and "{" not in s).all()  # list of {name, url} as text
    idioms, _, _ = browser.page("nediom", "test", 1, 5)
    stored = load_task(None, get_task("nediom"))["test"]
    for shown, row in zip(idioms.to_dict("records"), stored, strict=False):
        marked = row["S2"][row["span_start"] : row["span_end"]]
        assert f"【{marked}】" in shown["S2"] and shown["S2"].replace("【", "").replace("】", "") == row["S2"]
