"""Where the option-order and prompt-wording numbers are shown (issue 32, items 3 and 4, follow-ups).

* ``nlue llm mcq --show-prompt`` shows the first item in every wording and under every rotation it would ask;
* user tasks' report sections carry the wordings table; the Space shows the spread beside the score (checked);
* ``nlue export lm-eval`` exports each wording as a task of its own, rendering nlue's prompt;
* the consistent share and the letter shares have bootstrap intervals, recomputed by verify.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from nlue.cli import main
from nlue.evals.mcq.run import exam_task, load_exam
from nlue.registry.wordings import worded_task, wording_names


def test_show_prompt_shows_every_wording_and_rotation(
    exam_build, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """issue 32 follow-up, item 1: --show-prompt with --wordings all and --option-orders cyclic shows the first
    item's prompt as a run asks it, each labelled: the main wording under each rotation, every other wording in
    the given order (a run measures orders on the main wording, wordings in the given order); no model loaded."""
    base = ["llm", "mcq", "--model", str(tmp_path / "no-such-model"), "--dataset", str(exam_build.repo_dir),
            "--task", "mcq_ne", "--show-prompt", "--no-chat"]  # fmt: skip
    assert main(base) == 0
    plain = capsys.readouterr().out
    assert plain.count("=====") == 2 and "wording" not in plain and "rotation" not in plain
    assert main([*base, "--wordings", "all", "--option-orders", "cyclic"]) == 0
    out = capsys.readouterr().out
    task = exam_task("mcq_ne")
    names = wording_names(task, "en")
    asked = [(n, r) for n in names for r in (range(4) if n == names[0] else range(1))]
    assert len(names) >= 2 and names[0] == "main" and out.count("=====") == 2 * len(asked)
    (item,), _ = load_exam(exam_build.repo_dir, task, 0, 1)
    blocks = out.split("===== ")[1:]
    for index, (name, rotation) in enumerate(asked):
        header, _, body = blocks[index].partition(" =====\n")
        order = "".join("ABCD"[(j + rotation) % 4] for j in range(4))
        assert header.endswith(f"· wording {name} · rotation {rotation} (order shown {order})")
        assert body.startswith(worded_task(task, "en", name).prompts["en"].instruction)
        first_shown = item[order[0]] if order[0] in item else item["options"][order[0]]
        assert f"A. {first_shown}" in body or f"A) {first_shown}" in body
    assert blocks[0].partition(" =====\n")[2] == plain.split("===== ")[1].partition(" =====\n")[2]
    assert not (tmp_path / "build").exists()


# ------------------------------------------------------------------ a user task asked in two wordings
TOPIC_WORDING = """\
    wordings:
    - name: short
      instruction: समाचारको विषय छान्नुहोस्।
"""
WORDING_RUN = "reader__ne-0shot-wordings-all"


@dataclass(frozen=True)
class UserWordingRun:
    task_file: Path
    results: Path
    spread: float  # sklearn's: macro-F1 of the gold answers minus that of answering "politics" throughout


@pytest.fixture(scope="module")
def user_wording_run(tmp_path_factory: pytest.TempPathFactory) -> UserWordingRun:
    """A user task (ours, from tests/user_tasks.py) with a second wording, asked by a stand-in model that is right
    under the main wording and answers the first topic under the other (no model, no server)."""
    from sklearn.metrics import f1_score

    from nlue.evals.llm.nlue_llm import run_nlue_llm, task_splits
    from nlue.registry.tasks import get_task, registered_task_files
    from tests.test_prompt_wordings import GOLD, WordingReader
    from tests.user_tasks import build_user_task, write_user_tasks

    root = tmp_path_factory.mktemp("user-wordings")
    task_file = write_user_tasks(root / "sources")["ne_news_topic"]
    text = task_file.read_text(encoding="utf-8")
    task_file.write_text(text.replace("\ndata:\n", f"\n{TOPIC_WORDING}data:\n", 1), encoding="utf-8")
    repo = build_user_task(task_file, root / "build").repo_dir
    results = root / "results"
    with registered_task_files([task_file]):
        task = get_task("ne_news_topic")
        test, _ = task_splits(str(repo), task, 0, None)
        model = WordingReader(task, "ne", {"main": GOLD, "short": 0}, list(test))
        run_nlue_llm(model, str(repo), [task], "ne", 0, results, WORDING_RUN, bootstrap_resamples=50, wordings="all")
    golds = list(test[task.label_field])
    spread = 1.0 - f1_score(golds, [0] * len(golds), average="macro")
    return UserWordingRun(task_file, results, spread)


def test_a_user_tasks_report_section_shows_its_wordings(user_wording_run: UserWordingRun) -> None:
    """issue 32 follow-up, item 2: the report's section of a task from a task file has the prompt-wording table
    of its --wordings all runs, as the shipped tasks' sections do."""
    from nlue.evals.report.declared import declared_sections
    from nlue.registry.tasks import registered_task_files
    from nlue.results_folders import ResultsFolder

    results = user_wording_run.results
    with registered_task_files([user_wording_run.task_file]):
        (section,), skipped = declared_sections([ResultsFolder(results, results)])
    assert skipped == []
    tables = {getattr(part, "key", None): part for part in section.parts}
    table = tables["declared_ne_news_topic_prompt_wordings"]
    (row,) = table.frame.to_dict("records")
    assert row["run"] == WORDING_RUN and row["task"] == "ne_news_topic"
    assert row["spread (points)"] == pytest.approx(100 * user_wording_run.spread, abs=0.01)
    assert row["score, main wording (%)"] == pytest.approx(100.0) and "short" in row["wordings (%)"]


def _tampered(results: Path, tmp_path: Path, change) -> Path:
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    path = copy / WORDING_RUN / "ne_news_topic.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return copy


def test_the_space_shows_the_checked_wording_spread_beside_the_score(
    user_wording_run: UserWordingRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 32 follow-up, item 3: the leaderboard tab has a table of the run's score with its wording spread beside
    it, recomputed first (a tampered spread is left out with the reason, never shown), with no option-order
    columns when no run has option orders; the exams tab has none; the page builds."""
    import gradio as gr

    from nlue.boards.robustness import robustness_board_of
    from nlue.registry.tasks import registered_task_files
    from nlue.results_folders import ResultsFolder
    from nlue.space.robustness_section import build_robustness_board
    from nlue.space.settings import SpaceSettings
    from nlue.space.ui import build_demo

    results = user_wording_run.results
    with registered_task_files([user_wording_run.task_file]):
        board = robustness_board_of([ResultsFolder(results, results)], exams=False)
        assert robustness_board_of([ResultsFolder(results, results)], exams=True).rows == []
        (row,) = board.rows
        assert board.skipped == [] and "consistent (%)" not in board.columns and "order spread (points)" not in row
        assert row["score (%)"] == pytest.approx(100.0) and row["check"] == "✓ recomputed"
        assert row["wording spread (points)"] == pytest.approx(100 * user_wording_run.spread, abs=0.01)
        assert row["wordings (%)"].startswith("main 100.0 · short ")

        def cheat(data: dict) -> None:
            data["details"]["prompt_wording_robustness"]["spread"] = 0.0

        copy = _tampered(results, tmp_path, cheat)
        refused = robustness_board_of([ResultsFolder(copy, copy)], exams=False)
        assert refused.rows == [] and len(refused.skipped) == 1 and "spread: stored 0.0" in refused.skipped[0]

        monkeypatch.setenv("NLUE_CACHE", str(tmp_path / "cache"))
        (tmp_path / "models").mkdir()
        demo = build_demo(SpaceSettings(models=tmp_path / "models", results_dir=results))
        tables = {b.elem_id: b.value for b in demo.blocks.values() if isinstance(b, gr.Dataframe)}
    shown = tables["robustness-table"]
    assert "wording spread (points)" in shown["headers"] and len(shown["data"]) == 1
    assert "exam-robustness-table" not in tables
    with gr.Blocks() as empty:
        assert build_robustness_board(robustness_board_of([], exams=True), "x") is False
    assert not empty.blocks


# ------------------------------------------------------------------ the lm-eval export of every wording
def _harness_prompts(folder: Path, names: list[str]) -> dict[str, list[str]]:
    """What lm-evaluation-harness itself renders for each test doc of each named task (no model asked)."""
    lm_eval_tasks = pytest.importorskip("lm_eval.tasks")

    manager = lm_eval_tasks.TaskManager(include_path=str(folder), include_defaults=False)
    loaded = manager.load(names)["tasks"]
    return {name: [task.doc_to_text(doc) for doc in task.test_docs()] for name, task in loaded.items()}


@pytest.mark.parametrize("which", ["nlue", "exam"])
def test_the_lm_eval_export_holds_every_wording_as_nlue_renders_it(
    sample_build, exam_build, tmp_path: Path, capsys: pytest.CaptureFixture, which: str
) -> None:
    """issue 32 follow-up, item 4: `nlue export lm-eval --wordings all` writes each other wording as a task of its
    own, in a group with the main one, and lm-eval renders every test item of it as nlue's own evaluator renders
    that wording; without the option the export is the main wording alone, as before."""
    import yaml

    from nlue.data.access import load_task
    from nlue.evals.llm.nlue_llm import render_prompt
    from nlue.evals.mcq.loglik import loglik_context
    from nlue.evals.mcq.run import without_gold
    from nlue.registry.tasks import get_task

    name, language = ("sa", "ne") if which == "nlue" else ("mcq_ne", "ne")
    build = sample_build if which == "nlue" else exam_build
    folder = tmp_path / "yaml"
    argv = ["export", "lm-eval", "--out", str(folder), "--dataset", str(build.repo_dir), "--tasks", name,
            "--languages", language]  # fmt: skip
    assert main(argv) == 0 and not list(folder.glob("*wordings*"))
    assert main([*argv, "--wordings", "all"]) == 0
    assert f"nlue_{name}_{language}_wordings" in capsys.readouterr().out
    task = get_task(name)
    others = wording_names(task, language)[1:]
    group = yaml.safe_load((folder / f"nlue_{name}_{language}_wordings.yaml").read_text(encoding="utf-8"))
    assert group["task"] == [f"nlue_{name}_{language}", *(f"nlue_{name}_{language}_{w}" for w in others)]
    benchmark_groups = [yaml.safe_load(p.read_text("utf-8")) for p in folder.glob("*.yaml") if "wordings" not in p.name]
    assert [g["task"] for g in benchmark_groups if "group" in g] == [[f"nlue_{name}_{language}"]]
    rendered = _harness_prompts(folder, [group["group"]])
    test = list(load_task(str(build.repo_dir), task)["test"])
    for wording in ("main", *others):
        worded = worded_task(task, language, wording)
        if which == "nlue":
            ours = [render_prompt(worded, item, language) for item in test]
        else:
            ours = [loglik_context(without_gold(item, worded), language, 0, [], "letters", 0, worded) for item in test]
        theirs = rendered[f"nlue_{name}_{language}" + ("" if wording == "main" else f"_{wording}")]
        assert theirs == ours, wording
    assert rendered[f"nlue_{name}_{language}"] != rendered[f"nlue_{name}_{language}_{others[0]}"]


# ------------------------------------------------------------------ intervals of the option-order shares
def test_the_consistent_and_letter_shares_have_item_bootstrap_intervals() -> None:
    """issue 32 follow-up, item 5: the consistent share and each letter's share get a 95% percentile interval over
    items (an item's rotations drawn together), the same as a plain numpy bootstrap of the items with the run's
    seed gives; verify draws them again from the rows and refuses a changed interval, seed or a missing seed."""
    import numpy as np

    from nlue.evals.mcq.order_robustness import FIELD, SECTION, ask_rotations, disagreements, order_text
    from nlue.evals.mcq.permute import rotated_items
    from tests.test_mcq_option_orders import _asker, _gold_text, _items, _rows

    items = _items(tuple(i % 4 for i in range(24)))
    ask = _asker(lambda item: _gold_text(item) if int(item["id"].split("-")[1]) % 3 else "A")  # 2 in 3 consistent
    resamples, seed = 300, 11
    orders = ask_rotations(ask, items, ask(rotated_items(items, 0)), "cyclic", resamples, seed)
    section, rows = orders.section, _rows(items, orders.records)
    assert section["consistent_share"] == pytest.approx(16 / 24) and section["bootstrap"] == {"resamples": 300,
                                                                                               "seed": 11}  # fmt: skip
    # the same resamples, drawn here without nlue: per item, consistent (0/1) and the share of its answers per letter
    consistent = np.array([len({r["option"] for r in rec}) == 1 for rec in orders.records], dtype=float)
    chosen_a = np.array([sum(r["key"] == "A" for r in rec) / 4 for rec in orders.records])
    drawn = np.random.default_rng(seed).integers(0, len(items), size=(resamples, len(items)))
    for values, low, high in ((consistent, section["consistent_share_ci_low"], section["consistent_share_ci_high"]),
                              (chosen_a, *section["letter_choice_share_intervals"]["A"])):  # fmt: skip
        assert (low, high) == pytest.approx(tuple(np.quantile(values[drawn].mean(axis=1), [0.025, 0.975])))
        assert low < values.mean() < high
    assert section["letter_choice_share_intervals"]["invalid"] == [0.0, 0.0]
    assert disagreements(section, rows) == []
    text = order_text(section)
    low, high = (100 * section[f"consistent_share_ci_{end}"] for end in ("low", "high"))
    assert f"66.7% [95% CI {low:.1f}, {high:.1f}] of 24 items" in text and "chosen 95% CI" in text

    changed = {**section, "consistent_share_ci_high": 1.0}
    assert any("consistent_share_ci_high: stored 1.0" in p for p in disagreements(changed, rows))
    assert disagreements({**section, "bootstrap": {"resamples": 300, "seed": 12}}, rows)  # another seed, other draws
    unseeded = {k: v for k, v in section.items() if k != "bootstrap"}
    assert any("without the resamples and seed" in p for p in disagreements(unseeded, rows))
    assert any("not a resample count" in p for p in disagreements({**section, "bootstrap": {"resamples": 10**9,
                                                                                            "seed": 1}}, rows))  # fmt: skip
    assert FIELD in rows[0] and SECTION == "option_order_robustness"
    none = ask_rotations(ask, items, ask(rotated_items(items, 0)), "cyclic", 0, seed).section
    assert "bootstrap" not in none and "consistent_share_ci_low" not in none and disagreements(none, rows) == []


def test_a_cyclic_exam_run_shows_its_intervals_in_the_report_and_the_space(
    exam_build, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """issue 32 follow-up, items 3 and 5: an exam run with --option-orders cyclic: the report's option-order table
    has the consistent share's interval and the letters'; the Space's Exams tab shows the consistent share and its
    interval beside the score (verified), the leaderboard tab's table has no exam row."""
    import csv

    from nlue.boards.robustness import robustness_board_of
    from nlue.evals.mcq.run import run_mcq
    from nlue.registry.tasks import get_task
    from nlue.results_folders import ResultsFolder
    from tests.test_mcq_option_orders import FakeExamTaker, gold_text

    dataset = str(exam_build.repo_dir)
    items, _ = load_exam(dataset, get_task("mcq_ne"), 0, 6)
    run = run_mcq(FakeExamTaker(items, gold_text), dataset, "mcq_ne", "en", 0, tmp_path, "taker", limit=6,
                  bootstrap_resamples=100, chart=False, option_orders="cyclic")  # fmt: skip
    section = run.result.details["option_order_robustness"]
    assert section["consistent_share"] == section["consistent_share_ci_low"] == section["consistent_share_ci_high"] == 1
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "report"), "-q"]) == 0
    with (tmp_path / "report" / "mcq_option_orders.csv").open(encoding="utf-8") as handle:
        (row,) = csv.DictReader(handle)
    assert row["consistent 95% CI"] == "100.0–100.0" and row["chosen 95% CI"].startswith("A ")
    folders = [ResultsFolder(tmp_path, tmp_path)]
    (shown,) = robustness_board_of(folders, exams=True).rows
    assert (shown["consistent (%)"], shown["95% CI (consistent)"], shown["score (%)"]) == (100.0, "100.0–100.0", 100.0)
    assert "wording spread (points)" not in robustness_board_of(folders, exams=True).columns
    assert robustness_board_of(folders, exams=False).rows == []


def test_show_prompt_of_the_nlue_tasks_is_what_a_run_sends_in_each_wording(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """issue 32 follow-up, item 1: `nlue llm nlue --show-prompt --wordings all` prints each task's first prompt in
    every wording, labelled, byte for byte what a run sends (a stand-in model records it); no model is loaded."""
    from nlue.evals.llm.nlue_generate import run_nlue_generation
    from nlue.evals.llm.nlue_llm import task_splits
    from nlue.registry.tasks import get_task
    from tests.test_prompt_wordings import GOLD, WordingReader

    base = ["llm", "nlue", "--model", str(tmp_path / "no-such-model"), "--tasks", "sa", "--show-prompt", "--shots",
            "1", "--mode", "generate", "--no-chat", "--results-dir", str(tmp_path / "results")]  # fmt: skip
    assert main([*base, "--wordings", "all"]) == 0
    blocks = capsys.readouterr().out.split("===== ")[1:]
    task = get_task("sa")
    names = wording_names(task, "en")
    assert [b.partition(" =====\n")[0].rsplit("wording ", 1)[-1] for b in blocks] == list(names)
    test, _ = task_splits(None, task, 1, 1)
    model = WordingReader(task, "en", dict.fromkeys(names, GOLD), list(test))
    run_nlue_generation(model, None, [task], "en", 1, tmp_path / "run", "reader", limit=1, wordings="all",
                        chat=False, bootstrap_resamples=10)  # fmt: skip
    assert [b.partition(" =====\n")[2] for b in blocks] == [f"{text}\n" for text in model.texts]
    assert main(base) == 0 and "wording" not in capsys.readouterr().out
    assert main([*base[:7], "--mode", "loglik", *base[-2:]]) == 0
    shown = capsys.readouterr().out
    assert "· log-likelihood =====" in shown and "continuations scored: ' negative', ' positive'" in shown
    assert not (tmp_path / "results").exists()
