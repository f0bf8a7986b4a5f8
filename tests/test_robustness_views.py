"""Where the option-order and prompt-wording numbers are shown (issue 32, items 3 and 4, follow-ups).

* ``nlue llm mcq --show-prompt`` shows the first item in every wording and under every rotation it would ask;
* user tasks' report sections carry the wordings table; the Space shows the spread beside the score (checked);
* ``nlue export lm-eval`` exports each wording as a task of its own, rendering nlue's prompt;
* the consistent share and the letter shares have bootstrap intervals, recomputed by verify.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nlue.cli import main
from nlue.evals.mcq.run import exam_task, load_exam
from nlue.registry.wordings import worded_task, wording_names


def test_show_prompt_shows_every_wording_and_rotation(
    exam_build, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """issue 32 follow-up, item 1: --show-prompt with --wordings all and --option-orders cyclic shows the first
    item's prompt in each wording under each rotation, each labelled; no model is loaded."""
    base = ["llm", "mcq", "--model", str(tmp_path / "no-such-model"), "--dataset", str(exam_build.repo_dir),
            "--task", "mcq_ne", "--show-prompt", "--no-chat"]  # fmt: skip
    assert main(base) == 0
    plain = capsys.readouterr().out
    assert plain.count("=====") == 2 and "wording" not in plain and "rotation" not in plain
    assert main([*base, "--wordings", "all", "--option-orders", "cyclic"]) == 0
    out = capsys.readouterr().out
    task = exam_task("mcq_ne")
    names = wording_names(task, "en")
    assert len(names) >= 2 and out.count("=====") == 2 * 4 * len(names)
    (item,), _ = load_exam(exam_build.repo_dir, task, 0, 1)
    blocks = out.split("===== ")[1:]
    for index, (name, rotation) in enumerate((n, r) for n in names for r in range(4)):
        header, _, body = blocks[index].partition(" =====\n")
        order = "".join("ABCD"[(j + rotation) % 4] for j in range(4))
        assert header.endswith(f"· wording {name} · rotation {rotation} (order shown {order})")
        assert body.startswith(worded_task(task, "en", name).prompts["en"].instruction)
        first_shown = item[order[0]] if order[0] in item else item["options"][order[0]]
        assert f"A. {first_shown}" in body or f"A) {first_shown}" in body
    assert blocks[0].partition(" =====\n")[2] == plain.split("===== ")[1].partition(" =====\n")[2]
    assert not (tmp_path / "build").exists()
