"""The GPU recipes on a GPU: one command that checks every GPU path of nlue and measures it (issue 25).

Sections, each isolated (a failure is recorded with its error and the rest go on), each timed:

* ``train`` - `nlue train` (the recipe's own command-line path) on a BERT-base-shaped and an
  XLM-R-large-shaped encoder (random weights, mBERT's and XLM-R's vocabulary sizes), MNLI sample data:
  full fine-tuning, preset VI and LoRA in bf16; steps/s and samples/s after warm-up steps, peak GPU
  memory, LoRA's memory against full fine-tuning's; then fp32 and bf16 loss curves on BERT-base over
  300 steps with the same seed, compared mean by mean over each tenth of the steps.
* ``evaluator`` - our batched ``predict_logits`` against ``pipeline`` (one item at a time and batched)
  and ``Trainer.predict`` on a BERT-base classifier, bf16: ex/s, each path's useful TFLOP/s as a share
  of the bf16 ``torch.mm`` rate measured in the same run, and agreement of the predicted classes.
* ``llm`` - log-likelihood (requests/s) and greedy generation (tokens/s) of ``LocalCausalLM`` against
  lm-eval's ``hf`` backend (HFLM) on the same exam items, on 1B- and 7B-shaped Llama models in bf16;
  the bf16 log-likelihoods against fp32 ones of the same weights; parity with lm-eval.
* ``gmet`` - GMET full mode on a BERT-base-shaped masked LM: items/s against the fill-mask loop.
* ``torchrun`` - ``torchrun --standalone --nproc_per_node 1`` through the recipe: the distributed path
  starts, trains and reports a process group of one.

Outputs ``--out DIR/gpu_suite.json`` (rewritten after every section, ``complete`` false until the end: a
run killed mid-way keeps what it measured; versions, device, plan, each section's status, checks, figures,
seconds) and ``DIR/gpu_suite.md`` (the Markdown table), each written to a temporary file and moved into
place. Exit code: 0 every section passed, 1 a section failed or was skipped, 2 refused (no CUDA).

Modes:
* real (default) - real sizes, within ``--budget`` seconds (default 540: a 10-minute command on one H100
  with room for start-up); refused without CUDA (exit 2) unless ``--allow-cpu``. The plan is printed first;
  a section whose planned seconds no longer fit the budget is skipped, and the record says so.
* ``--smoke`` - tiny models, a few steps: runs on a CPU in about a minute (CI). Without a GPU the bf16
  paths run in fp32 (bf16 on a CPU measures nothing useful), and the output says so; the loss-curve
  check runs bf16 as CPU autocast.

On the GPU machine (no network). Here, with PyPI at hand:

    python benchmarks/gpu_suite.py --wheels wheels/            # nlue's wheel + requirements-gpu.txt (pins)
    python benchmarks/gpu_suite.py --wheels wheels/ --download  # also the pinned wheels (no torch, no CUDA libs)

There, keeping the machine's own torch (its CUDA build):

    pip install --no-index --find-links wheels/ -r wheels/requirements-gpu.txt wheels/nlue-*.whl
    HF_HUB_OFFLINE=1 python benchmarks/gpu_suite.py --out build/gpu-suite

The JSON's ``versions`` says which torch, transformers, peft, accelerate, lm-eval and nlue ran.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling benchmarks, imported by name

import torch
from gpu_suite_common import Section, Settings

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("train", "evaluator", "llm", "gmet", "torchrun")
# Planned seconds on one H100 (real mode) and on 2 CPU cores (smoke); a section starts only if its plan fits.
PLAN = {"train": (190, 30), "evaluator": (45, 8), "llm": (230, 12), "gmet": (30, 5), "torchrun": (35, 20)}
LLM_7B_SECONDS = 150  # of the llm section's plan: the 7B model is left out when less than this is left
PACKAGES = ("torch", "transformers", "peft", "accelerate", "datasets", "tokenizers", "lm_eval", "nlue")
EXCLUDED_WHEELS = ("torch", "triton", "nvidia-", "nlue", "pip", "setuptools", "wheel")


def versions() -> dict[str, Any]:
    found: dict[str, Any] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name.replace("_", "-"))
        except metadata.PackageNotFoundError:
            found[name] = None
    import nlue

    found["nlue_location"] = str(Path(nlue.__file__).parent)
    found["cuda"] = torch.version.cuda
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        found["device"] = {"name": props.name, "memory_gib": round(props.total_memory / 2**30, 1),
                           "capability": f"{props.major}.{props.minor}", "count": torch.cuda.device_count(),
                           "bf16": torch.cuda.is_bf16_supported()}  # fmt: skip
    else:
        found["device"] = {"name": f"CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)"}
    return found


def run_section(name: str, function: Callable[[], Section], inject: set[str]) -> dict[str, Any]:
    """Run one section; any exception becomes a failed check with its error, and the suite goes on."""
    print(f"[{name}] started", file=sys.stderr, flush=True)
    started = time.perf_counter()
    try:
        if name in inject:
            raise RuntimeError(f"failure injected by --inject-failure {name} (a test of the suite's isolation)")
        section = function()
        record = {"status": "passed" if all(c["passed"] for c in section.checks) else "failed",
                  "checks": section.checks, "figures": section.figures, "rows": section.rows, "notes": section.notes}  # fmt: skip
    except Exception as exc:  # recorded, not raised: one broken path must not hide the others' figures
        record = {"status": "failed", "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(),
                  "checks": [{"name": f"{name} ran", "passed": False, "detail": f"{type(exc).__name__}: {exc}"}],
                  "figures": {}, "rows": [], "notes": []}  # fmt: skip
    record["seconds"] = round(time.perf_counter() - started, 2)
    print(f"[{name}] {record['status']} in {record['seconds']:.1f} s" + (f": {record.get('error')}" if "error" in
          record else ""), file=sys.stderr, flush=True)  # fmt: skip
    return record


def _number(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 100 else f"{value:,.0f}"
    return str(value)


def markdown(report: dict[str, Any]) -> str:
    """The table: one row per measured figure, then each section's status and checks."""
    device, v = report["versions"]["device"], report["versions"]
    lines = [f"GPU suite ({report['mode']}) on {device['name']}: torch {v['torch']} (CUDA {v['cuda']}), transformers "
             f"{v['transformers']}, peft {v['peft']}, accelerate {v['accelerate']}, lm-eval {v['lm_eval']}, "
             f"nlue {v['nlue']}; {report['seconds']:.0f} s of a {report['budget']:.0f} s budget.", ""]  # fmt: skip
    lines += [f"> {note}" for note in report["notes"]] + ([""] if report["notes"] else [])
    lines += ["| section | figure | value | unit | reference | reference is | ratio | note |",
              "|---|---|---:|---|---:|---|---:|---|"]  # fmt: skip
    for name, section in report["sections"].items():
        for row in section["rows"]:
            ratio = f"{row['ratio']:.2f}x" if row["ratio"] else ""
            lines.append(f"| {name} | {row['what']} | {_number(row['value'])} | {row['unit']} | "
                         f"{_number(row['reference'])} | {row['reference_is']} | {ratio} | {row['note']} |")  # fmt: skip
    lines += ["", "| section | status | seconds | checks |", "|---|---|---:|---|"]
    for name, section in report["sections"].items():
        checks = "; ".join(f"{'ok' if c['passed'] else 'FAILED'}: {c['name']}" for c in section["checks"])
        lines.append(
            f"| {name} | {section['status']} | {section['seconds']:.1f} | {checks or section.get('error', '')} |"
        )
    return "\n".join(lines) + "\n"


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def wheels(target: Path, download: bool) -> int:
    """nlue's wheel, and the pins of this environment's packages (torch and CUDA libraries left out)."""
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(target), str(ROOT)], check=True)
    pins = sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()
                  if not d.metadata["Name"].lower().startswith(EXCLUDED_WHEELS))  # fmt: skip
    requirements = target / "requirements-gpu.txt"
    write_atomic(requirements, "# the environment the suite passed in on CPU (torch and CUDA libraries: the GPU "
                 "machine's own)\n" + "\n".join(pins) + "\n")  # fmt: skip
    if download:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(target), "-r",
                        str(requirements)], check=True)  # fmt: skip
    print(f"{target}: nlue wheel and {requirements.name} ({len(pins)} pins){', downloaded' if download else ''}")
    return 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("build/gpu-suite"), help="folder of the JSON and table")
    parser.add_argument("--smoke", action="store_true", help="tiny models, a few steps: runs on a CPU (CI)")
    parser.add_argument("--allow-cpu", action="store_true", help="run the real sizes without CUDA (very slow)")
    parser.add_argument("--budget", type=float, default=540.0, help="seconds the sections may take (default 540)")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated subset of {SECTIONS}")
    parser.add_argument("--inject-failure", default="", metavar="SECTION",
                        help="make the named sections raise at their start (tests the suite's isolation)")  # fmt: skip
    parser.add_argument("--wheels", type=Path, metavar="DIR", help="write nlue's wheel and the pins to DIR, then exit")
    parser.add_argument("--download", action="store_true", help="with --wheels: also download the pinned wheels")
    parser.add_argument("--torchrun-probe", help=argparse.SUPPRESS)  # the torchrun section's child process
    args, rest = parser.parse_known_args(argv)
    if rest and not args.torchrun_probe:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    chosen = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = [s for s in chosen + [s for s in args.inject_failure.split(",") if s] if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; expected {', '.join(SECTIONS)}")
    args.chosen = chosen
    return args


def quiet() -> None:
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.setdefault(name, "1")  # every model is built here; nothing may be fetched
    import datasets
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    datasets.disable_progress_bars()
    for noisy in ("lm_eval", "transformers", "nlue", "datasets", "accelerate"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    warnings.simplefilter("ignore")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.torchrun_probe:
        from gpu_suite_train import torchrun_probe

        quiet()
        return torchrun_probe([args.torchrun_probe, *args.rest])
    if args.wheels:
        return wheels(args.wheels, args.download)
    cuda = torch.cuda.is_available()
    if not cuda and not args.smoke and not args.allow_cpu:
        print("gpu_suite: no CUDA device is visible, so the real sizes would measure nothing the suite is for. Run it "
              "on a GPU machine, or use --smoke (tiny sizes, CPU) or --allow-cpu (real sizes on a CPU: hours).",
              file=sys.stderr)  # fmt: skip
        return 2
    quiet()
    from gpu_suite_infer import section_evaluator, section_gmet, section_llm
    from gpu_suite_train import section_torchrun, section_train

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="nlue-gpu-suite-") as scratch:
        settings = Settings(smoke=args.smoke, device="cuda" if cuda else "cpu", work=Path(scratch))
        mode = "smoke" if args.smoke else "real"
        notes = [] if cuda else ["No GPU: every bf16 path ran in fp32 on the CPU (bf16 there measures nothing "
                                 "useful); only the loss-curve check ran bf16, as CPU autocast. Figures are not "
                                 "GPU figures."]  # fmt: skip
        if args.smoke:
            notes.append("Smoke mode: every model is tiny (the names are the shapes a real run uses) and every run a "
                         "few steps; the figures check that the paths run, they measure nothing.")  # fmt: skip
        plan = {name: PLAN[name][1 if args.smoke else 0] for name in args.chosen}
        print(f"gpu_suite ({mode}) on {settings.device}: plan {', '.join(f'{k} ~{v} s' for k, v in plan.items())} "
              f"= ~{sum(plan.values())} s of a {args.budget:.0f} s budget", file=sys.stderr, flush=True)  # fmt: skip

        def llm() -> Section:
            left = args.budget - (time.perf_counter() - started)
            names = ["1b", "7b"] if args.smoke or left >= plan["llm"] else ["1b"]
            section = section_llm(settings, names)
            if names == ["1b"]:
                section.check("LLM 7B ran", False, f"left out: {left:.0f} s of the budget left, the plan needs "
                              f"{plan['llm']} s ({LLM_7B_SECONDS} s for the 7B model)")  # fmt: skip
            return section

        functions = {"train": lambda: section_train(settings), "evaluator": lambda: section_evaluator(settings),
                     "llm": llm, "gmet": lambda: section_gmet(settings),
                     "torchrun": lambda: section_torchrun(settings, Path(__file__).resolve())}  # fmt: skip
        inject = {s for s in args.inject_failure.split(",") if s}
        sections: dict[str, Any] = {}
        found = versions()

        def write(final: bool) -> dict[str, Any]:
            """The report so far: rewritten after every section, so that a run killed mid-way keeps its figures."""
            report = {"suite": "nlue gpu_suite", "mode": mode, "budget": args.budget, "plan": plan, "notes": notes,
                      "versions": found, "seconds": round(time.perf_counter() - started, 2), "sections": sections,
                      "complete": final,
                      "passed": final and all(s["status"] == "passed" for s in sections.values())}  # fmt: skip
            text = json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n"
            write_atomic(args.out / "gpu_suite.json", text)
            write_atomic(args.out / "gpu_suite.md", markdown(report))
            return report

        for name in args.chosen:
            left = args.budget - (time.perf_counter() - started)
            if left < plan[name] * (0.5 if name == "llm" else 1.0):
                sections[name] = {"status": "skipped", "seconds": 0.0, "rows": [], "figures": {}, "notes": [],
                                  "checks": [{"name": f"{name} ran", "passed": False, "detail": f"skipped: {left:.0f} s "
                                              f"of the budget left, its plan is {plan[name]} s"}]}  # fmt: skip
            else:
                sections[name] = run_section(name, functions[name], inject)
            write(final=False)
        report = write(final=True)
    print(markdown(report))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
