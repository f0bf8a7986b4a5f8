"""Every block the guides mark as runnable runs as written, in a fresh folder, and writes nothing into the repository.

The pages are run one by one (``tests/docs_blocks.py``): the blocks of a page in order, in one temporary
folder, on the embedded sample with the tiny random models the pages make themselves
(``nlue sweep --make-tiny-models``), and a real ``transformers serve`` where a page starts one.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.docs_blocks import DOCS, MARK, ROOT, pages_with_blocks, run_page, runnable_blocks, shell_lines

PAGES = pages_with_blocks()


# What the test suite itself writes into the checkout while it runs, on other workers at the same time as a
# page's commands (the screenshots and pages tests save for people to look at, pytest's cache), and the virtual
# environment the suite runs in (libraries write caches beside their code): not the repository's files.
NOT_THE_REPOSITORY = ("test-artifacts", ".pytest_cache", ".venv")


def _repository_state() -> tuple[list[str], list[str]]:
    """Files git does not track (new or ignored), and the top-level entries: what a command writing here would add."""
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--ignored", "--", ".",
                             *(f":!{name}" for name in NOT_THE_REPOSITORY)], cwd=ROOT,
                            capture_output=True, text=True, check=False).stdout  # fmt: skip
    # The pathspec leaves NOT_THE_REPOSITORY out of git's listing itself (and spares listing the .venv's files).
    added = sorted(line for line in status.splitlines() if line.startswith(("??", "!!")) and "__pycache__" not in line)
    return added, sorted(path.name for path in ROOT.iterdir() if path.name not in NOT_THE_REPOSITORY)


def test_the_guides_mark_blocks_and_only_bash_or_python() -> None:
    names = {page.relative_to(DOCS).as_posix() for page in PAGES}
    for guide in ("get-started.md", "guides/load-and-score.md", "guides/fine-tune.md", "guides/gmet.md",
                  "guides/llm.md", "guides/exams.md", "guides/nediom.md", "guides/compare.md",
                  "guides/own-task.md"):  # fmt: skip
        assert guide in names, f"{guide} has no block marked {MARK}"
    for page in PAGES:
        for block in runnable_blocks(page):
            assert block.language in ("bash", "python"), block
            if block.language == "bash":
                assert shell_lines(block.code), f"{block.page}: an empty runnable block"


def test_a_continued_line_is_one_command_and_comments_go() -> None:
    assert shell_lines("nlue build --task sa \\\n    --out build   # a comment\n# only a comment\n") == [
        "nlue build --task sa --out build"
    ]


@pytest.mark.parametrize("page", PAGES, ids=[page.relative_to(DOCS).as_posix() for page in PAGES])
def test_every_runnable_block_runs_as_written(page: Path, tmp_path: Path) -> None:
    before = _repository_state()
    started = time.perf_counter()
    ran = run_page(page, tmp_path)
    failed = [r for r in ran if r.status != 0]
    assert not failed, f"{page.name}: `{failed[0].what}` exited {failed[0].status}:\n{failed[0].output}"
    expected = sum(len(shell_lines(b.code)) if b.language == "bash" else 1 for b in runnable_blocks(page))
    assert len(ran) == expected
    print(f"{page.name}: {len(ran)} commands in {time.perf_counter() - started:.1f} s")
    after = _repository_state()
    added = sorted(set(after[0]) - set(before[0])) + sorted(set(after[1]) - set(before[1]))
    removed = sorted(set(before[0]) - set(after[0])) + sorted(set(before[1]) - set(after[1]))
    assert after == before, f"a documented command wrote into the repository: added {added[:20]}, gone {removed[:20]}"
