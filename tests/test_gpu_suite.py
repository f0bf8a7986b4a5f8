"""``benchmarks/gpu_suite.py`` in its CPU smoke mode: every section passes, the JSON and the table hold what
they promise, real mode refuses to run without CUDA, and one broken section leaves the others' results.

The smoke run is a subprocess, as CI runs it (about a minute on 2 cores); the failure-isolation run
injects its failure with the suite's own ``--inject-failure`` option and runs two small sections only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("lm_eval")

import torch

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_suite.py"
SECTIONS = ("train", "evaluator", "llm", "gmet", "torchrun")


def run_suite(*args: str, timeout: int = 400) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "OMP_NUM_THREADS": "1"}  # fmt: skip
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=ROOT)  # fmt: skip


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], str]:
    out = tmp_path_factory.mktemp("gpu-suite")
    done = run_suite("--smoke", "--out", str(out))
    report = json.loads((out / "gpu_suite.json").read_text(encoding="utf-8"))
    return done, report, (out / "gpu_suite.md").read_text(encoding="utf-8")


def test_every_section_passes_in_smoke_mode(smoke: tuple[Any, dict[str, Any], str]) -> None:
    done, report, _ = smoke
    failed = {n: s.get("error") or [c for c in s["checks"] if not c["passed"]] for n, s in report["sections"].items()
              if s["status"] != "passed"}  # fmt: skip
    assert done.returncode == 0 and not failed, (failed, done.stderr[-3000:])
    assert list(report["sections"]) == list(SECTIONS) and report["passed"] is True and report["complete"] is True
    assert report["mode"] == "smoke" and report["seconds"] < report["budget"]


def test_the_json_says_what_ran_and_what_each_section_measured(smoke: tuple[Any, dict[str, Any], str]) -> None:
    _, report, _ = smoke
    versions = report["versions"]
    for package in ("torch", "transformers", "peft", "accelerate", "lm_eval", "nlue"):
        assert versions[package], package
    assert versions["device"]["name"]
    assert set(report["plan"]) == set(SECTIONS)
    for name, section in report["sections"].items():
        assert {"status", "seconds", "checks", "figures", "rows"} <= set(section), name
        assert section["seconds"] > 0 and section["checks"] and section["rows"], name
        assert all({"what", "value", "unit", "reference", "ratio"} <= set(row) for row in section["rows"])
    train = report["sections"]["train"]["figures"]
    for model in ("bert-base", "xlmr-large"):
        for kind in ("full", "preset", "lora"):
            assert train[f"{model}/{kind}"]["steps_per_second"] > 0
    curves = train["loss_curves"]
    assert len(curves["fp32"]) == len(curves["bf16"]) > 1
    evaluator = report["sections"]["evaluator"]["figures"]
    assert evaluator["matmul_tflops"]["median"] > 0
    assert {"pipeline", "pipeline_batched", "trainer"} <= set(evaluator["ours_vs"])
    llm = report["sections"]["llm"]["figures"]
    assert {"1b", "7b"} <= set(llm) and llm["1b"]["parity_with_lm_eval"]["requests"] > 0
    assert report["sections"]["gmet"]["figures"]["passes_per_item"] > 0
    assert report["sections"]["torchrun"]["figures"]["probe"]["world_size"] == 1


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU fallback is what is checked")
def test_without_a_gpu_the_output_says_bf16_fell_back_to_fp32(smoke: tuple[Any, dict[str, Any], str]) -> None:
    _, report, table = smoke
    assert any("ran in fp32 on the CPU" in note for note in report["notes"])
    assert "ran in fp32 on the CPU" in table and "(fp32)" in table


def test_the_markdown_table_has_a_row_per_figure_and_a_status_per_section(
    smoke: tuple[Any, dict[str, Any], str],
) -> None:
    _, report, table = smoke
    lines = table.splitlines()
    assert "| section | figure | value | unit | reference | reference is | ratio | note |" in lines
    rows = [line for line in lines if line.startswith("| ") and not line.startswith(("| section", "|---"))]
    figures = sum(len(s["rows"]) for s in report["sections"].values())
    assert len(rows) == figures + len(SECTIONS)
    assert all(len(line.split(" | ")) >= 4 for line in rows)
    for name in SECTIONS:
        assert f"| {name} | passed |" in table
    assert report["versions"]["transformers"] in lines[0]


@pytest.mark.skipif(torch.cuda.is_available(), reason="refusal needs a machine without CUDA")
def test_real_mode_refuses_to_run_without_cuda(tmp_path: Path) -> None:
    done = run_suite("--out", str(tmp_path), timeout=120)
    assert done.returncode == 2
    assert "no CUDA device is visible" in done.stderr and "--smoke" in done.stderr
    assert not (tmp_path / "gpu_suite.json").exists()


def test_a_failing_section_is_recorded_and_the_others_go_on(tmp_path: Path) -> None:
    done = run_suite("--smoke", "--out", str(tmp_path), "--sections", "evaluator,gmet", "--inject-failure", "evaluator")
    assert done.returncode == 1, done.stderr[-2000:]
    report = json.loads((tmp_path / "gpu_suite.json").read_text(encoding="utf-8"))
    evaluator, gmet = report["sections"]["evaluator"], report["sections"]["gmet"]
    assert evaluator["status"] == "failed" and "injected" in evaluator["error"]
    assert "RuntimeError" in evaluator["traceback"] and not evaluator["checks"][0]["passed"]
    assert gmet["status"] == "passed" and gmet["rows"]
    assert report["passed"] is False
    assert "| evaluator | failed |" in (tmp_path / "gpu_suite.md").read_text(encoding="utf-8")


def test_unknown_sections_are_refused() -> None:
    done = run_suite("--smoke", "--sections", "train,nope", timeout=120)
    assert done.returncode == 2 and "unknown section(s) nope" in done.stderr
