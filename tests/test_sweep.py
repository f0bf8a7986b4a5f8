"""`nlue sweep`: a roster checked whole, its grid and costs, a real sweep of three tiny models on the
sample, a rerun that skips every cell, and a kill mid-sweep whose rerun gives the same results tree."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from nlue.cli import main
from nlue.cli_support import EXIT_INPUT
from nlue.evals.sweep.cli import shipped_rosters
from tests.answer_store import count_answers
from tests.sweep_processes import start_sweep

CELLS = 10  # the tiny roster's grid


# ------------------------------------------------------------------ helpers
def _tiny_roster(path: Path, models: Path, builds: dict[str, Path], out: Path, **changes: Any) -> Path:
    """The shipped tiny roster, pointed at this test's models, sample builds and output folder."""
    data = yaml.safe_load(shipped_rosters()["tiny"].read_text(encoding="utf-8"))
    data["datasets"] = {key: str(folder) for key, folder in builds.items()}
    for model in data["models"]:
        model["id"] = str(models / Path(model["id"]).name)
    data["out"] = str(out)
    data.update(changes)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def builds(sample_build, exam_build, nediom_build) -> dict[str, Path]:
    return {"nlue": sample_build.repo_dir, "mcq": exam_build.repo_dir, "nediom": nediom_build.repo_dir}


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three tiny models, made the way a user makes them: nlue sweep --make-tiny-models DIR."""
    pytest.importorskip("transformers")
    folder = tmp_path_factory.mktemp("tiny-models")
    assert main(["sweep", "--make-tiny-models", str(folder), "-q"]) == 0
    return folder


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory, tiny_models: Path, builds: dict[str, Path]) -> dict[str, Any]:
    """One uninterrupted sweep of the tiny roster, run as a user runs it (its own process)."""
    root = tmp_path_factory.mktemp("sweep")
    roster = _tiny_roster(root / "tiny.yaml", tiny_models, builds, root / "out")
    started = time.perf_counter()
    process = start_sweep(str(roster), "-q", cwd=root)
    stdout, stderr = process.communicate(timeout=900)
    assert process.returncode == 0, stderr[-3000:] + stdout[-3000:]
    return {"roster": roster, "out": root / "out", "stdout": stdout, "seconds": time.perf_counter() - started}


# ------------------------------------------------------------------ the roster, checked whole
def test_every_problem_of_a_roster_is_reported_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "folder").mkdir()
    roster = {
        "name": "bad", "colour": "blue",
        "defaults": {"limt": 3},
        "models": [
            {"name": "a", "id": str(tmp_path / "folder"), "kind": "causal-lm"},
            {"name": "b", "id": "./no/such/model", "kind": "llm"},
            {"name": "api", "id": "gpt-x", "kind": "served"},
            {"name": "a", "id": str(tmp_path / "folder"), "kind": "masked-lm"},
            {"name": "with space", "id": "org/model", "kind": "encoder"},
        ],
        "runs": [
            {"run": "llm nlue", "tasks": ["sa", "squad"], "modes": ["loglik", "sample"]},
            {"run": "llm mcq", "tasks": ["mcq_ne"]},
            {"run": "finetune"},
            {"run": "idioms", "models": ["a", "ghost"], "settings": ["zero-shot"], "modes": ["generate"]},
            {"run": "train", "tasks": ["gmet"], "seeds": 0},
        ],
    }  # fmt: skip
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(roster), encoding="utf-8")
    assert main(["sweep", str(path), "--dry-run"]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"nlue sweep: error: the roster {path} has ") and "nothing was run" in err
    expected = [
        "colour: unknown key", "defaults.limt: unknown key",
        "models[1].kind: expected one of encoder, masked-lm, causal-lm, served (got 'llm')",
        "models[1].id: no such model folder './no/such/model'",
        "models[2].endpoint: a served model needs the base URL",
        "models[3].name: 'a' names two models",
        "models[4].name: names results folders",
        "runs[0].tasks: expected one of", "(got 'squad')", "runs[0].modes: expected one of auto, loglik, generate (got 'sample')",
        "runs[1]: llm mcq needs datasets.mcq",
        "runs[2].run: expected one of train, llm nlue, llm mcq, gmet, idioms (got 'finetune')",
        "runs[3].models[1]: no model named 'ghost'",
        "runs[4].tasks: expected one of sa, cola", "runs[4].seeds: expected an integer >= 1 (got 0)",
    ]  # fmt: skip
    missing = [e for e in expected if e not in err]
    assert missing == [], err
    assert not (tmp_path / "build").exists()


def test_a_model_named_for_what_it_cannot_run_is_a_problem_not_a_skip(tmp_path: Path, capsys) -> None:
    (tmp_path / "mlm").mkdir()
    roster = {"models": [{"name": "mlm", "id": str(tmp_path / "mlm"), "kind": "masked-lm"}],
              "runs": [{"run": "idioms", "models": ["mlm"], "settings": ["zero-shot"], "modes": ["generate"]}]}  # fmt: skip
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(roster), encoding="utf-8")
    assert main(["sweep", str(path), "--dry-run"]) == EXIT_INPUT
    assert "runs[0].models[0]: mlm: a masked LM does not generate: use mode loglik" in capsys.readouterr().err


def test_yaml_that_does_not_parse_is_named_by_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("models:\n  - name: a\n   id: b\n", encoding="utf-8")
    assert main(["sweep", str(path)]) == EXIT_INPUT
    assert f"nlue sweep: error: {path}, line 3" in capsys.readouterr().err


def test_a_cell_whose_command_refuses_its_arguments_stops_the_sweep_before_it_starts(
    tmp_path: Path, builds, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "lm").mkdir()
    roster = {"datasets": {"nlue": str(builds["nlue"])},
              "models": [{"name": "lm", "id": str(tmp_path / "lm"), "kind": "causal-lm"}],
              "runs": [{"run": "llm nlue", "tasks": ["sa"], "args": ["--no-such-option", "1"]}]}  # fmt: skip
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(roster), encoding="utf-8")
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "runs[0]: nlue llm nlue: error: unrecognized arguments: --no-such-option 1" in err
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ the dry run
def test_the_dry_run_prints_the_grid_its_commands_and_its_cost(
    tmp_path: Path, builds, capsys: pytest.CaptureFixture[str]
) -> None:
    models = tmp_path / "models"
    for name in ("encoder", "causal-lm", "masked-lm"):  # a dry run loads no model: empty folders will do
        (models / name).mkdir(parents=True)
    roster = _tiny_roster(tmp_path / "tiny.yaml", models, builds, tmp_path / "out")
    assert main(["sweep", str(roster), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"3 models, {CELLS} cells" in out
    # 8 items per split (limit): NLUE loglik 2 tasks x 8 x 2 labels x 2 languages; generation one per item;
    # the exam 8 x 4 choices x 2 languages; neDIOM 8 x 4 variants x 2 labels (the masked LM too).
    assert "cost of the whole grid: 3 trainings, 336 requests, 8 GMET items" in out
    for cost in ("2 trainings", "64 requests", "32 requests", "16 requests", "8 GMET items"):
        assert cost in out
    assert f"nlue llm nlue --model {models / 'causal-lm'}" in out and "--prompt-language both --mode generate" in out
    assert f"nlue train --model {models / 'encoder'} --task sa" in out and "--seeds 2" in out
    assert "idioms eval" in out and "--mode generate" in out and out.count("nlue gmet ") == 1
    assert "masked-lm" not in [line.split()[2] for line in out.splitlines() if " generate" in line and "to run" in line]
    assert "dry run: no model was loaded and nothing was written" in out
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["nlue-paper", "nediom-paper", "urdummlu-paper"])
def test_the_paper_rosters_list_exactly_the_papers_models_with_the_registrys_ids(name: str, tmp_path: Path) -> None:
    from nlue.evals.sweep.grid import build_grid
    from nlue.evals.sweep.roster import load_roster
    from nlue.registry.paper_models import PAPER_MODEL_LISTS, PAPER_TABLE_NAMES

    path = shipped_rosters()[name]
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    benchmark = next(iter(data["datasets"]))
    listed = {m.name: m for m in PAPER_MODEL_LISTS[benchmark]}
    in_roster = {m.get("paper_name", m["name"]): m for m in data["models"]}
    assert sorted(in_roster) == sorted(PAPER_TABLE_NAMES[benchmark]) == sorted(listed)  # every model, no extra
    for paper_name, model in in_roster.items():
        assert model["id"] == listed[paper_name].id, paper_name
        assert model["hub_id_guess"] is listed[paper_name].id_is_guess, paper_name
        assert (model["kind"] == "served") is listed[paper_name].api_only, paper_name
        if model["kind"] == "served":
            assert model["endpoint"].startswith("https://") and model["api_key_env"].endswith("_API_KEY")
    # It loads and expands (on the embedded sample: no dataset folder is needed for that).
    (tmp_path / "data").mkdir()
    roster = load_roster(path, tmp_path / "out", {benchmark: str(tmp_path / "data")})
    roster = dataclasses.replace(roster, datasets={})
    cells = build_grid(roster)
    expected = {"nlue-paper": 10 * 11 + 10, "nediom-paper": 7 + 4 * 2, "urdummlu-paper": 30 + 4 * 3}[name]
    assert len(cells) == expected


def test_the_tiny_roster_runs_the_models_make_tiny_models_writes() -> None:
    from nlue.evals.sweep.cli import DEFAULT_TINY_MODELS

    data = yaml.safe_load(shipped_rosters()["tiny"].read_text(encoding="utf-8"))
    assert {m["id"] for m in data["models"]} == {str(DEFAULT_TINY_MODELS / n) for n in ("encoder", "causal-lm",
                                                                                          "masked-lm")}  # fmt: skip


# ------------------------------------------------------------------ a real sweep, a rerun, a kill
def _results(out: Path) -> list[str]:
    """The results tree's files; a hidden one is a temporary file a kill left mid-write, read by no one."""
    root = out / "results"
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name[0] != ".")


def test_the_sweep_runs_every_cell_and_ends_with_the_summary(swept: dict[str, Any]) -> None:
    out = swept["out"]
    assert len(list((out / "sweep" / "done").glob("*.json"))) == CELLS
    assert f"{CELLS} cells: {CELLS} ran, 0 skipped" in swept["stdout"]
    files = _results(out)
    # The roster's limit (8 items) makes every run partial: each folder says so (-limit8), never a full run's name.
    for expected in ("tiny-encoder-limit8/sa.json", "tiny-encoder-limit8/rte.json",
                     "tiny-causal-lm__ne-0shot-generate-limit8/rte.json",
                     "tiny-causal-lm__en-0shot-loglik-limit8/mcq_ne.json", "tiny-masked-lm-limit8/gmet.json",
                     "tiny-masked-lm__zero-shot-en-limit8__v7-S1-S2-S3-with-idiom/nediom.json", "summary.md",
                     "summary.csv"):  # fmt: skip
        assert expected in files, files
    assert not any(f.startswith(("runs/", "sweep/")) or f.endswith("nlue_results.json") for f in files)
    summary = (out / "results" / "summary.md").read_text(encoding="utf-8")
    assert "| tiny-encoder · train preset I, 2 seeds, limit8 |" in summary and "v1-S2-with-idiom" in summary
    rows = (out / "results" / "summary.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0].startswith("model,benchmark,command,setting,column,task,primary_metric,score")
    assert {r.split(",")[0] for r in rows[1:]} == {"tiny-encoder", "tiny-causal-lm", "tiny-masked-lm"}
    marker = json.loads(next((out / "sweep" / "done").glob("*.json")).read_text(encoding="utf-8"))
    assert marker["exit_code"] == 0 and marker["argv"][0] == "nlue" and marker["results"]


def test_a_rerun_skips_every_cell_and_touches_no_result(swept: dict[str, Any]) -> None:
    out = swept["out"]
    before = {f: (out / "results" / f).stat().st_mtime_ns for f in _results(out) if not f.startswith("summary")}
    process = start_sweep(str(swept["roster"]), "-q", cwd=out.parent)
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert f"{CELLS} cells: 0 ran, {CELLS} skipped (done before)" in stdout
    assert {f: (out / "results" / f).stat().st_mtime_ns for f in before} == before


def _comparable(value: Any) -> Any:
    """A results file without what differs between two identical runs: times, dates, versions, paths."""
    # The checkpoint's fingerprint too: two trainings to the same weights leave different bytes beside them
    # (PEFT writes target_modules, a set, in hash order; tokenizer.json records the last truncation used).
    volatile = ("created", "timings", "versions", "runtime", "samples_per_second", "steps_per_second", "checkpoint")
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items() if not k.endswith(volatile)}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if isinstance(value, float):
        return "nan" if math.isnan(value) else round(value, 6)
    if isinstance(value, str) and ("/out/" in value or "/killed/" in value):
        return value.replace("/killed/", "/out/").split("/out/", 1)[1]
    return value


def _tree(out: Path) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for name in _results(out):
        text = (out / "results" / name).read_text(encoding="utf-8")
        if name.startswith("journals/"):  # answers in the order they came: the same answers, perhaps reordered
            tree[name] = sorted(json.loads(line)["key"] for line in text.splitlines() if line.strip())
        elif name.endswith(".json"):
            tree[name] = _comparable(json.loads(text))
        elif name.endswith(".jsonl"):
            tree[name] = [_comparable(json.loads(line)) for line in text.splitlines() if line.strip()]
        else:
            tree[name] = text
    return tree


def test_a_kill_mid_sweep_and_a_rerun_give_the_same_results_tree(swept: dict[str, Any], answer_cache: Path) -> None:
    psutil = pytest.importorskip("psutil")
    root = swept["out"].parent
    killed = root / "killed"
    data = yaml.safe_load(swept["roster"].read_text(encoding="utf-8"))
    data["out"] = str(killed)
    roster = root / "killed.yaml"
    roster.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    process = start_sweep(str(roster), "-q", cwd=root)
    done = killed / "sweep" / "done"
    deadline = time.monotonic() + 600
    # Kill it in the middle of the first LLM cell (its answers half stored), or at worst between cells. This test's
    # answer cache is its own, so the killed sweep asks afresh what the first sweep (the session's cache) asked.
    while time.monotonic() < deadline and process.poll() is None:
        answered = count_answers(answer_cache)
        if answered >= 20 or len(list(done.glob("*.json"))) >= 3:
            break
        time.sleep(0.05)
    assert process.poll() is None, "the sweep ended before it could be killed"
    children = psutil.Process(process.pid).children(recursive=True)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    _, alive = psutil.wait_procs(children, timeout=30)
    assert alive == []  # the cell died with the sweep: nothing goes on writing into the results
    assert len(list(done.glob("*.json"))) < CELLS
    rerun = start_sweep(str(roster), "-q", cwd=root)
    stdout, stderr = rerun.communicate(timeout=900)
    assert rerun.returncode == 0, stderr[-3000:]
    assert "skipped (done before)" in stdout
    assert len(list(done.glob("*.json"))) == CELLS
    first, second = _tree(swept["out"]), _tree(killed)
    assert sorted(first) == sorted(second)
    assert {k: v for k, v in first.items() if first[k] != second[k]} == {}


def test_a_failed_cell_is_recorded_and_the_sweep_goes_on_or_stops(tmp_path: Path, builds, capsys) -> None:
    for name in ("empty-a", "empty-b"):  # folders with no model in them: each gmet cell fails
        (tmp_path / name).mkdir()
    roster = {"datasets": {"nlue": str(builds["nlue"])}, "defaults": {"limit": 2, "bootstrap_resamples": 0},
              "models": [{"name": n, "id": str(tmp_path / n), "kind": "masked-lm"} for n in ("empty-a", "empty-b")],
              "runs": [{"run": "gmet"}]}  # fmt: skip
    path = tmp_path / "fails.yaml"
    path.write_text(yaml.safe_dump(roster), encoding="utf-8")
    out = tmp_path / "out"
    process = start_sweep(str(path), "--out", str(out), "--start", "spawn", "--stop-on-failure", "-q", cwd=tmp_path)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 1, stderr
    failed = list((out / "sweep" / "failed").glob("*.json"))
    assert len(failed) == 1 and not (out / "sweep" / "done").exists()
    record = json.loads(failed[0].read_text(encoding="utf-8"))
    assert record["exit_code"] in (2, 3) and record["message"].startswith("nlue gmet: ")
    assert "1 failed, 1 not run" in stdout and "FAILED (exit" in stdout and "not run empty-b" in stdout
    assert "## Cells without results" in (out / "results" / "summary.md").read_text(encoding="utf-8")


def test_a_done_cell_whose_results_were_removed_or_rewritten_is_to_run_again(
    swept: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    out = swept["out"]
    (out / "results" / "tiny-masked-lm-limit8" / "gmet.json").unlink()
    rewritten = out / "results" / "tiny-encoder-limit8" / "rte.json"
    rewritten.write_text(rewritten.read_text(encoding="utf-8") + " ", encoding="utf-8")  # as a run by hand would
    assert main(["sweep", str(swept["roster"]), "--dry-run"]) == 0
    rows = [re.split(r"\s{2,}", line) for line in capsys.readouterr().out.splitlines() if line[:1].isdigit()]
    states = {(row[2], row[3], row[4]): row[1] for row in rows if len(row) >= 5}
    assert len(states) == CELLS
    assert states[("tiny-masked-lm", "gmet", "zero-shot, automatic verdicts")] == "to run"
    assert states[("tiny-encoder", "train", "rte, LoRA")] == "to run"
    assert list(states.values()).count("done") == CELLS - 2
