"""The Space's leaderboard fed from a results repo on the Hub, and `nlue submit` that fills it (offline)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nlue.cli import main
from nlue.space.results_source import looks_like_repo


@pytest.fixture
def run(sample_build, tmp_path: Path) -> Path:
    """A real run (the TF-IDF baseline on three tasks) on a built release that is not the sample."""
    release = tmp_path / "release"
    shutil.copytree(sample_build.repo_dir, release)
    card = release / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace("sample-data", "release"), encoding="utf-8")
    assert main(["baseline", "--tasks", "sa,rte,cola", "--dataset", str(release), "--bootstrap", "0",
                 "--results-dir", str(tmp_path / "results"), "--name", "tfidf", "-q"]) == 0  # fmt: skip
    return tmp_path / "results" / "tfidf"


def test_submit_checks_the_run_and_a_dry_run_prints_the_files_and_the_pull_request(run: Path, capsys) -> None:
    release = run.parent.parent / "release"
    assert main(["submit", str(run), "--repo-id", "org/nlue-results", "--release", str(release), "--dry-run"]) == 0
    out = capsys.readouterr().out
    for task in ("sa", "rte", "cola"):
        assert f"runs/tfidf/{task}.json" in out and f"runs/tfidf/{task}.predictions.jsonl" in out
    assert "title: Results: baseline:tfidf on cola, rte, sa" in out and "dry run: nothing was sent" in out


def test_submit_refuses_sample_data_a_partial_run_and_missing_predictions(run: Path, sample_build, tmp_path, capsys):
    release = str(run.parent.parent / "release")
    sample = tmp_path / "sample-results"
    assert main(["baseline", "--tasks", "sa", "--dataset", str(sample_build.repo_dir), "--bootstrap", "0",
                 "--results-dir", str(sample), "--name", "on-sample", "-q"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["submit", str(sample / "on-sample"), "--repo-id", "o/r", "--release", release, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "scored on the embedded SAMPLE data" in err and "nothing was sent" in err
    rows = run / "sa.predictions.jsonl"
    rows.write_text("".join(rows.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    (run / "rte.predictions.jsonl").unlink()
    assert main(["submit", str(run), "--repo-id", "o/r", "--release", release, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "do not give the dataset fingerprint" in err and "scored on other items than the release" in err
    assert "rte.predictions.jsonl: cannot be read" in err and "(5 problems)" in err  # every problem at once
    assert "sa.json: macro_f1: stored 0.69697, its predictions give 0.666667" in err  # the cut rows, rescored


def test_submit_opens_one_pull_request_with_the_checked_files(run: Path, monkeypatch, capsys) -> None:
    sent = {}

    class FakeApi:
        def create_commit(self, repo_id, operations, **kwargs):
            sent.update(repo_id=repo_id, paths=sorted(op.path_in_repo for op in operations), **kwargs)
            return type("Info", (), {"pr_url": "https://huggingface.co/datasets/org/r/discussions/1"})()

    monkeypatch.setattr("huggingface_hub.HfApi", FakeApi)
    assert main(["submit", "tfidf", "--results-dir", str(run.parent), "--repo-id", "org/r", "--release",
                 str(run.parent.parent / "release")]) == 0  # fmt: skip
    assert sent["repo_type"] == "dataset" and sent["create_pr"] is True and len(sent["paths"]) == 6
    assert "| sa | baseline:tfidf |" in sent["commit_description"]
    assert "pull request: https://huggingface.co/datasets/org/r/discussions/1" in capsys.readouterr().out


def test_the_space_reads_a_results_repo_mirrored_at_start_and_marks_each_row_source(run: Path, tmp_path, monkeypatch):
    from nlue.boards.columns import PRIMARY_VIEW
    from nlue.boards.leaderboard import leaderboard_frame
    from nlue.space.service import SpaceService
    from nlue.space.settings import SpaceSettings

    snapshot = tmp_path / "snapshot"  # what the repo holds after the pull request was merged
    shutil.copytree(run, snapshot / "runs" / "tfidf")
    fetched = []

    def fetch(repo_id: str, folder: Path) -> None:  # stands in for snapshot_download, offline
        fetched.append(repo_id)
        shutil.copytree(snapshot, folder, dirs_exist_ok=True)

    monkeypatch.setenv("NLUE_SPACE_RESULTS", "org/nlue-results")
    monkeypatch.setenv("NLUE_SPACE_RESULTS_CACHE", str(tmp_path / "mirror"))
    assert looks_like_repo("org/nlue-results") and not looks_like_repo(str(tmp_path))
    settings = SpaceSettings.from_env(models=tmp_path / "no-models")
    assert settings.results_repo == "org/nlue-results" and settings.results_dir.parent == tmp_path / "mirror"
    service = SpaceService(settings, fetch=fetch)
    assert fetched == ["org/nlue-results"]  # downloaded at start
    frame = leaderboard_frame(service.board.rows, view=PRIMARY_VIEW)
    sources = dict(zip(frame["Model"], frame["Source"], strict=True))
    assert sources["runs/tfidf"] == "submitted" and set(sources.values()) == {"paper", "submitted"}
    (snapshot / "runs" / "tfidf" / "cola.json").unlink()  # the repo changed: a refresh reads it again
    shutil.rmtree(settings.results_dir)
    service.reload_results(fetch_again=True)
    (row,) = [r for r in service.board.rows if r.source == "submitted"]
    assert set(row.task_scores) == {"sa", "rte"} and len(fetched) == 2


def test_a_results_repo_out_of_reach_leaves_the_paper_rows(tmp_path, monkeypatch) -> None:
    from nlue.space.service import SpaceService
    from nlue.space.settings import SpaceSettings

    def unreachable(repo_id: str, folder: Path) -> None:
        raise OSError("no network")

    monkeypatch.setenv("NLUE_SPACE_RESULTS_CACHE", str(tmp_path / "mirror"))
    settings = SpaceSettings.from_env(models=tmp_path / "none", results_dir="org/gone")
    service = SpaceService(settings, fetch=unreachable)
    assert service.board.rows and all(r.source == "paper" for r in service.board.rows)
    saved = json.dumps([r.model for r in service.board.rows])
    assert "org/gone" not in saved
