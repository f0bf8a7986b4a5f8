"""Lists of names on the command line (issue 29, item 24): spaces, commas or both, in every command."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from nlue.cli_lists import split_names
from nlue.cli_support import EXIT_INPUT, accept_both_spellings, parse_or_exit_code

SRC = Path(__file__).resolve().parents[1] / "src" / "nlue"


def _main_parser():
    from nlue.cli import build_parser

    return build_parser()


def _own(module: str) -> Callable:
    def build():
        import importlib

        return importlib.import_module(module).build_parser()

    return build


# (command, parser, the arguments before the list, the list's option, its dest, two valid names, an invalid one)
LIST_OPTIONS = [
    ("build", _main_parser, ["build", "--out", "o"], "--configs", "configs", ("sa", "rte"), "squad"),
    ("evaluate", _main_parser, ["evaluate", "--model", "m"], "--task", "task", ("sa", "rte"), "gmet"),
    ("evaluate", _main_parser, ["evaluate", "--model", "m"], "--tasks", "task", ("sa", "rte"), "squad"),
    ("baseline", _own("nlue.evals.baseline_cli"), [], "--tasks", "tasks", ("sa", "rte"), "squad"),
    ("llm nlue", _own("nlue.evals.llm.cli"), ["nlue", "--model", "m"], "--tasks", "tasks", ("sa", "rte"), "gmet"),
    ("export", _own("nlue.evals.export.cli"), ["lm-eval", "--out", "o"], "--tasks", "tasks", ("sa", "rte"), "gmet"),
    ("compare", _own("nlue.evals.compare.cli"), ["run_a", "run_b"], "--tasks", "tasks", ("sa", "rte"), "squad"),
    (
        "idioms",
        _own("nlue.idioms.cli"),
        ["eval", "--model", "m"],
        "--setting",
        "setting",
        ("zero-shot", "5-shot"),
        "2-shot",
    ),
    (
        "idioms",
        _own("nlue.idioms.cli"),
        ["eval", "--model", "m", "--setting", "zero-shot"],
        "--context",
        "context",
        ("S2", "S1+S2"),
        "S9",
    ),
]
IDS = [f"{case[0]} {case[3]}" for case in LIST_OPTIONS]


def _spellings(option: str, names: tuple[str, str]) -> list[list[str]]:
    a, b = names
    return [
        [option, a, b],  # spaces
        [option, f"{a},{b}"],  # commas
        [f"{option}={a},{b}"],
        [option, f"{a},", b],  # both
        [option, a, option, b],  # repeated
        [option.replace("-", "_").replace("__", "--"), f"{a}, {b}"],  # the snake spelling, a quoted "a, b"
        [option, a, b, a],  # a name twice counts once
    ]


@pytest.mark.parametrize(("command", "parser", "before", "option", "dest", "names", "invalid"), LIST_OPTIONS, ids=IDS)
def test_every_list_of_names_takes_spaces_commas_or_both(command, parser, before, option, dest, names, invalid):
    """issue 29, item 24: `--tasks sa rte` and `--tasks sa,rte` mean the same in every command."""
    for spelling in _spellings(option, names):
        parsed = parse_or_exit_code(accept_both_spellings(parser()), [*before, *spelling])
        assert not isinstance(parsed, int), spelling
        assert list(getattr(parsed, dest)) == list(names), spelling


@pytest.mark.parametrize(("command", "parser", "before", "option", "dest", "names", "invalid"), LIST_OPTIONS, ids=IDS)
def test_an_unknown_name_is_refused_with_the_valid_ones(command, parser, before, option, dest, names, invalid, capsys):
    """issue 29, item 24: a name the command does not take is a usage error (exit 2) that lists the valid names."""
    code = parse_or_exit_code(accept_both_spellings(parser()), [*before, option, f"{names[0]},{invalid}"])
    err = capsys.readouterr().err
    assert code == EXIT_INPUT
    assert re.search(rf"argument [-\w/]*{option}\b[-\w/]*: {invalid!r}", err), err  # --task/--tasks: one option
    assert " this command takes; valid: " in err
    valid = err.split("; valid: ")[1]
    assert names[0] in valid.split(", ") and names[1] in valid.split(", ") and invalid not in valid


def test_a_near_miss_is_named_and_all_stands_alone(capsys) -> None:
    """issue 29, item 24: the nearest valid name is suggested; 'all' means every task and takes no company."""
    from nlue.evals.baseline_cli import build_parser

    assert parse_or_exit_code(build_parser(), ["--tasks", "sa,rtee"]) == EXIT_INPUT
    assert "'rtee' (did you mean 'rte'?) is not a task this command takes" in capsys.readouterr().err
    assert parse_or_exit_code(build_parser(), ["--tasks", "all"]).tasks is None
    assert parse_or_exit_code(build_parser(), ["--tasks", "all,sa"]) == EXIT_INPUT
    assert "'all' stands alone" in capsys.readouterr().err
    assert parse_or_exit_code(build_parser(), ["--tasks", ","]) == EXIT_INPUT
    assert "give at least one task" in capsys.readouterr().err


def test_the_sweep_splits_its_models_and_names_the_rosters() -> None:
    """issue 29, item 24: `nlue sweep --models a,b` as `--models a b`; an unknown one lists the roster's models."""
    from nlue.errors import NlueError
    from nlue.evals.sweep.cli import _select, build_parser
    from nlue.evals.sweep.roster import Roster, RosterModel

    models = parse_or_exit_code(build_parser(), ["tiny", "--models", "encoder,causal-lm"]).models
    assert models == ["encoder", "causal-lm"]
    roster = Roster(Path("r.yaml"), "r", "", Path("out"), {}, (RosterModel("encoder", "e", "encoder"),
                    RosterModel("causal-lm", "c", "causal-lm"), RosterModel("masked-lm", "m", "masked-lm")), ())  # fmt: skip
    assert [m.name for m in _select(roster, models, None).models] == ["encoder", "causal-lm"]
    with pytest.raises(NlueError, match="'encodr' \\(did you mean 'encoder'\\?\\) is not a model in the roster; "
                       "valid: encoder, causal-lm, masked-lm"):  # fmt: skip
        _select(roster, ["encodr"], None)


def test_split_names_reads_every_form() -> None:
    assert split_names("sa, rte,,cola") == ["sa", "rte", "cola"]
    assert split_names(["sa,rte", "rte", " cola "]) == ["sa", "rte", "cola"]
    assert split_names([]) == []


def test_no_option_takes_a_list_of_names_another_way() -> None:
    """issue 29, item 24: every `nargs="+"` option left in src/nlue is a list of paths or a positional argument;
    lists of names go through nlue.cli_lists.add_name_list."""
    offenders = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
                continue
            keywords = {k.arg: ast.unparse(k.value) for k in node.keywords}
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            is_option = any(f.startswith("-") for f in flags)
            if keywords.get("nargs") in ("'+'", "'*'") and is_option and keywords.get("type") != "Path":
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}: {flags}")
            names = any(f in ("--tasks", "--configs", "--models", "--languages") for f in flags)
            if names and keywords.get("type") != "Path":
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}: {flags} (use add_name_list)")
    assert offenders == []


def test_the_baseline_runs_tasks_given_with_spaces(sample_build, tmp_path: Path, capsys) -> None:
    """issue 29, item 24: `nlue baseline --tasks sa rte` (it took only `sa,rte` before) scores both tasks."""
    from nlue.cli import main

    code = main(["baseline", "--dataset", str(sample_build.repo_dir), "--tasks", "sa", "rte", "--bootstrap", "0",
                 "--results-dir", str(tmp_path)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    written = sorted(p.name for p in (tmp_path / "baseline__tfidf").glob("*.json"))
    assert written == ["rte.json", "sa.json"]
    assert json.loads((tmp_path / "baseline__tfidf" / "sa.json").read_text(encoding="utf-8"))["task"] == "sa"


def test_a_rosters_task_list_may_be_written_as_the_command_line_takes_it() -> None:
    """issue 29, item 24: a sweep roster's `tasks: sa, rte` is the list `[sa, rte]`, as `--tasks sa,rte` is."""
    from nlue.evals.sweep.problems import Problems
    from nlue.evals.sweep.roster_runs import _settings

    problems = Problems("roster.yaml")
    settings = _settings("llm nlue", {"tasks": "sa, rte", "prompt_languages": "en,native"}, "runs[0]", problems)
    assert problems.items == []
    assert settings["tasks"] == ["sa", "rte"] and settings["prompt_languages"] == ["en", "native"]
    _settings("llm nlue", {"tasks": "sa, squad"}, "runs[0]", problems)
    assert problems.items == ["runs[0].tasks: expected one of sa, cola, wg, qqp, mrpc, stsb, qadsm, mnli, qnli, rte, cr "
                              "(got 'squad')"]  # fmt: skip
