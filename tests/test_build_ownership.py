"""Issue 29, item 11: a build replaces only what nlue wrote under ``<out>``.

``nlue build --out o`` used to delete an ``o/nlue/`` that was someone's checkout (its ``.git`` and
``setup.py`` gone, exit 0). Now a build recognises its own output (a marker in the repo folder, or
the report that describes it) and refuses anything else, before reading a source.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nlue.cli import main
from nlue.data.ownership import BUILD_MARKER
from nlue.data.publish import plan_upload

from .conftest import SENTENCES


def _train(tmp_path: Path) -> Path:
    train = tmp_path / "train.csv"
    rows = [f"{SENTENCES[i]} {i},{i % 2}" for i in range(8)]
    train.write_text("text,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return train


def _build(tmp_path: Path, out: Path, *extra: str) -> int:
    train = tmp_path / "train.csv" if (tmp_path / "train.csv").exists() else _train(tmp_path)
    return main(["build", "--task", "sa", "--train", str(train), "--out", str(out), "--quiet", *extra])


def _refused(capsys, code: int, path: Path) -> str:
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{path}" in err and "it is not the output of an nlue build" in err and "nothing was changed" in err
    assert "--out elsewhere" in err and f"move {path} away" in err
    assert "Traceback" not in err and "internal error" not in err
    return err


def _no_staging_left(out: Path) -> None:
    assert not [p for p in out.iterdir() if p.name.startswith(".nlue.")], list(out.iterdir())


def test_a_folder_that_is_not_a_build_is_never_replaced(tmp_path: Path, capsys) -> None:
    """issue 29, item 11: an ``o/nlue/`` checkout (.git, setup.py) survives ``nlue build --out o`` (exit 2)."""
    out = tmp_path / "o"
    (out / "nlue" / ".git").mkdir(parents=True)
    (out / "nlue" / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (out / "nlue" / "setup.py").write_text("from setuptools import setup\nsetup()\n", encoding="utf-8")
    _refused(capsys, _build(tmp_path, out), out / "nlue")
    assert (out / "nlue" / "setup.py").read_text(encoding="utf-8").startswith("from setuptools")
    assert (out / "nlue" / ".git" / "HEAD").is_file()
    assert not (out / "nlue.report.json").exists()
    _no_staging_left(out)
    # Another name beside it is fine, and a build of ours is replaced by the next build.
    assert _build(tmp_path, out, "--name", "nlue_sa") == 0
    assert (out / "nlue_sa" / BUILD_MARKER).is_file() and _build(tmp_path, out, "--name", "nlue_sa") == 0
    assert (out / "nlue" / "setup.py").is_file()


def test_the_marker_is_not_published(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert _build(tmp_path, out) == 0
    marker = json.loads((out / "nlue" / BUILD_MARKER).read_text(encoding="utf-8"))
    assert marker["tool"] == "nlue build" and marker["name"] == "nlue"
    files = [path for path, _ in plan_upload(out / "nlue", "me/nlue", "dataset").files]
    assert "README.md" in files and BUILD_MARKER not in files


def test_a_build_from_before_the_marker_is_recognised_by_its_report(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert _build(tmp_path, out) == 0
    (out / "nlue" / BUILD_MARKER).unlink()
    assert _build(tmp_path, out) == 0 and (out / "nlue" / BUILD_MARKER).is_file()


def test_an_unmarked_folder_with_another_builds_report_is_refused(tmp_path: Path, capsys) -> None:
    out = tmp_path / "o"
    assert _build(tmp_path, out) == 0
    (out / "nlue" / BUILD_MARKER).unlink()
    (out / "nlue" / "README.md").write_text("# my own notes\n", encoding="utf-8")  # not the card the report names
    _refused(capsys, _build(tmp_path, out), out / "nlue")
    assert (out / "nlue" / "README.md").read_text(encoding="utf-8") == "# my own notes\n"


def test_an_empty_folder_may_be_replaced(tmp_path: Path) -> None:
    out = tmp_path / "o"
    (out / "nlue").mkdir(parents=True)
    assert _build(tmp_path, out) == 0 and (out / "nlue" / "README.md").is_file()


@pytest.mark.parametrize("entry", ["nlue.report.json", "nlue.rejects.jsonl"])
def test_a_file_of_someone_elses_under_a_report_name_is_refused(tmp_path: Path, capsys, entry: str) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / entry).write_text('{"my": "own data"}\n', encoding="utf-8")
    _refused(capsys, _build(tmp_path, out), out / entry)
    assert (out / entry).read_text(encoding="utf-8") == '{"my": "own data"}\n'
    assert not (out / "nlue").exists()


def test_a_symbolic_link_is_never_replaced(tmp_path: Path, capsys) -> None:
    out = tmp_path / "o"
    assert _build(tmp_path, tmp_path / "elsewhere") == 0
    out.mkdir()
    os.symlink(tmp_path / "elsewhere" / "nlue", out / "nlue")
    err = _refused(capsys, _build(tmp_path, out), out / "nlue")
    assert "is a symbolic link" in err and (out / "nlue").is_symlink()


def test_a_file_where_the_repo_folder_goes_is_refused(tmp_path: Path, capsys) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "nlue").write_text("a file\n", encoding="utf-8")
    err = _refused(capsys, _build(tmp_path, out), out / "nlue")
    assert "is not a folder" in err
