"""The training sections of ``benchmarks/gpu_suite.py``: `nlue train` (full, a preset, LoRA; fp32 vs bf16
loss curves) and `torchrun --nproc_per_node 1` through the recipe.

Every run goes through :func:`nlue.training.cli.run_hf_command` ("train"), the code path of `nlue train`
and ``trainers/train.py``, with its own command-line flags. The one addition is a timing callback put on
the recipe's Trainer (:func:`instrumented`): it stamps every optimizer step after draining the GPU's queue,
so that steps/s leave out the first steps (kernel choice, allocator growth) that the Trainer's own
``train_runtime`` includes.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
from gpu_suite_common import Section, Settings, free_memory, gib, peak_gib, reset_peak, sync

from nlue.lm.tiny import tiny_config, train_tokenizer
from nlue.registry.tasks import TRAINABLE_TASKS, get_task

# The pair task with the most classes (MNLI): the same pick as benchmarks/eval_throughput.py.
TASK = max(
    (get_task(name) for name in TRAINABLE_TASKS),
    key=lambda t: (t.kind.has_classes and len(t.text_fields) == 2, t.num_labels),
)
# Real shapes, real vocabularies (mBERT's and XLM-R's: the embeddings are most of the memory a LoRA run saves).
ENCODERS = {
    "bert-base": ("bert", {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                           "intermediate_size": 3072, "max_position_embeddings": 512, "vocab_size": 119_547}),
    "xlmr-large": ("roberta", {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
                               "intermediate_size": 4096, "max_position_embeddings": 514, "vocab_size": 250_002}),
}  # fmt: skip
PRESET = "VI"  # head + the top third of the layers: the middle of the paper's configurations
STEPS = {"full": (40, 6), "smoke": (4, 1)}  # timed steps per run, of which the first are warm-up
CURVE_STEPS = {"full": 300, "smoke": 16}
CURVE_TOLERANCE = 0.1  # nats: largest difference of the two curves' means over each tenth of the steps


class StepClock:
    """A TrainerCallback that stamps each optimizer step (GPU queue drained first)."""

    def __init__(self) -> None:
        self.stamps: list[float] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("on_"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if not self.stamps:
            sync()
            self.stamps.append(time.perf_counter())

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        sync()
        self.stamps.append(time.perf_counter())

    def steps_per_second(self, warm_up: int) -> float:
        timed = self.stamps[warm_up:]
        return (len(timed) - 1) / (timed[-1] - timed[0])


@contextlib.contextmanager
def instrumented(clock: StepClock) -> Iterator[None]:
    """The recipe's Trainer with ``clock`` added (and nothing else changed)."""
    import nlue.training.run as run

    original = run.build_trainer

    def build(*args: Any, **kwargs: Any) -> Any:
        trainer = original(*args, **kwargs)
        trainer.add_callback(clock)
        return trainer

    run.build_trainer = build
    try:
        yield
    finally:
        run.build_trainer = original


def build_encoder(settings: Settings, name: str) -> Path:
    """A masked-LM checkpoint of the named shape (tiny in smoke mode) with random weights; cached per run."""
    from transformers import AutoModelForMaskedLM

    out = settings.work / "encoders" / name
    if (out / "config.json").is_file():
        return out
    family, shape = ENCODERS[name]
    tokenizer = train_tokenizer(family)  # type: ignore[arg-type]
    config = tiny_config(family, len(tokenizer), tokenizer)  # type: ignore[arg-type]
    if not settings.smoke:
        config = real_shape(config, "xlm-roberta" if name == "xlmr-large" else "bert", shape, len(tokenizer))
    torch.manual_seed(settings.seed)
    with torch.device(settings.device):  # initialising 560M parameters is quick on a GPU, slow on a CPU
        model = AutoModelForMaskedLM.from_config(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    del model
    free_memory()
    return out


def real_shape(config: Any, model_type: str, shape: dict[str, int], pieces: int) -> Any:
    """``config`` (the tiny one, with the tokenizer's special ids) at a real shape; the vocabulary is the real
    model's (the ids past the sample tokenizer's pieces are never typed, but every row is stored and trained)."""
    from transformers import AutoConfig

    kept = {
        k: v for k, v in config.to_dict().items() if k not in ("model_type", "transformers_version", "architectures")
    }
    return AutoConfig.for_model(model_type, **{**kept, **shape, "vocab_size": max(shape["vocab_size"], pieces)})


def train_argv(model: Path, out: Path, precision: str, steps: int, batch: int, extra: Sequence[str] = ()) -> list[str]:
    """`nlue train` flags for a timed run: fixed steps, no evaluation or checkpoint during training."""
    return ["--model", str(model), "--task", TASK.name, "--output_dir", str(out), "--results_dir", str(out / "results"),
            "--precision", precision, "--max_steps", str(steps), "--per_device_train_batch_size", str(batch),
            "--dataloader_drop_last", "True", "--eval_strategy", "no", "--save_strategy", "no",
            "--load_best_model_at_end", "False", "--early_stopping_patience", "0", "--bootstrap", "0",
            "--logging_strategy", "steps", "--logging_steps", "1", "--max_eval_samples", "16", "--report_to", "none",
            "--seed", "0", "--resume", "False", "-q", *extra]  # fmt: skip


def nlue_train(argv: list[str], warm_up: int) -> dict[str, Any]:
    """One `nlue train` in this process: exit code, steps/s after warm-up, peak GPU memory, the loss per step."""
    from nlue.training.cli import run_hf_command

    clock = StepClock()
    free_memory()
    reset_peak()
    with instrumented(clock):
        code = run_hf_command("train", argv)
    peak = peak_gib()
    out = Path(argv[argv.index("--output_dir") + 1])
    if code != 0:
        raise RuntimeError(f"nlue train exited {code} (its message is on stderr above)")
    state = json.loads((out / "trainer_state.json").read_text(encoding="utf-8"))
    losses = [entry["loss"] for entry in state["log_history"] if "loss" in entry]
    results = json.loads((out / "nlue_results.json").read_text(encoding="utf-8"))
    return {"steps_per_second": clock.steps_per_second(warm_up), "peak_gib": peak, "losses": losses,
            "hyperparameters": results["hyperparameters"]}  # fmt: skip


def section_train(settings: Settings) -> Section:
    section = Section()
    mode = "smoke" if settings.smoke else "full"
    steps, warm_up = STEPS[mode]
    batch = 16
    if not settings.cuda:
        section.notes.append("no GPU: the throughput runs are fp32 on the CPU (bf16 there measures nothing useful)")
    for name in ENCODERS:
        model = build_encoder(settings, name)
        runs = {"full": [], "preset": ["--preset", PRESET], "lora": ["--lora", "True"]}
        for kind, extra in runs.items():
            out = settings.work / "train" / f"{name}-{kind}"
            found = nlue_train(train_argv(model, out, settings.half, steps, batch, extra), warm_up)
            section.figures[f"{name}/{kind}"] = {k: v for k, v in found.items() if k != "hyperparameters"}
            hp = found["hyperparameters"]
            section.check(f"{name} {kind}: trained in {settings.half}", hp["bf16"] == settings.cuda and not hp["fp16"],
                          f"bf16={hp['bf16']} fp16={hp['fp16']}, {hp['trainable']}")  # fmt: skip
            rate = found["steps_per_second"]
            section.row(f"train {name} {kind} ({settings.half}), steps/s", rate, "steps/s",
                        note=f"batch {batch}, {steps - warm_up} timed steps; peak {gib(found['peak_gib'])}")  # fmt: skip
            section.row(f"train {name} {kind} ({settings.half}), samples/s", rate * batch, "samples/s")
        full, lora = section.figures[f"{name}/full"]["peak_gib"], section.figures[f"{name}/lora"]["peak_gib"]
        if full is not None and lora is not None:
            section.row(f"train {name}: LoRA peak memory vs full", lora, "GiB", full, "full fine-tuning")
            section.check(f"{name}: LoRA needs less GPU memory than full fine-tuning", lora < full,
                          f"{lora:.2f} vs {full:.2f} GiB")  # fmt: skip
    curve_steps = CURVE_STEPS[mode]
    model = build_encoder(settings, "bert-base")
    curves = {}
    for precision in ("fp32", "bf16"):  # bf16 on a CPU is CPU autocast: a check of the comparison itself
        out = settings.work / "curve" / precision
        curves[precision] = nlue_train(train_argv(model, out, precision, curve_steps, batch), 1)["losses"]
    section.figures["loss_curves"] = curves
    window = max(1, curve_steps // 10)
    means = {p: [sum(c[i : i + window]) / len(c[i : i + window]) for i in range(0, len(c), window)]
             for p, c in curves.items()}  # fmt: skip
    worst = max(abs(a - b) for a, b in zip(means["fp32"], means["bf16"], strict=True))
    section.figures["loss_curve_max_window_diff"] = worst
    section.row(f"loss curve bert-base fp32 vs bf16, {curve_steps} steps: max diff of {window}-step means", worst,
                "nats", note=f"tolerance {CURVE_TOLERANCE}" + ("" if settings.cuda else "; bf16 = CPU autocast"))  # fmt: skip
    section.check("fp32 and bf16 loss curves agree", worst <= CURVE_TOLERANCE and len(curves["bf16"]) == curve_steps,
                  f"max |mean fp32 - mean bf16| over {window}-step windows {worst:.4f} (tolerance {CURVE_TOLERANCE})")  # fmt: skip
    return section


def torchrun_probe(argv: list[str]) -> int:
    """Run under torchrun: `nlue train` as ``trainers/train.py`` runs it, then say what the process group was."""
    import torch.distributed as dist

    from nlue.training.cli import run_hf_command

    report, rest = Path(argv[0]), argv[1:]
    code = run_hf_command("train", rest, prog="trainers/train.py")
    found = {"exit": code, "initialized": dist.is_available() and dist.is_initialized(),
             "backend": dist.get_backend() if dist.is_available() and dist.is_initialized() else None,
             "world_size": dist.get_world_size() if dist.is_available() and dist.is_initialized() else None,
             "local_rank": os.environ.get("LOCAL_RANK")}  # fmt: skip
    report.write_text(json.dumps(found), encoding="utf-8")
    return code


def section_torchrun(settings: Settings, suite: Path) -> Section:
    section = Section()
    model = build_encoder(settings, "bert-base")
    out = settings.work / "torchrun"
    report = out / "probe.json"
    argv = train_argv(model, out / "run", settings.half, 4 if settings.smoke else 20, 16)
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "1",
               str(suite), "--torchrun-probe", str(report), *argv]  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    seconds = time.perf_counter() - started
    section.figures["command"] = " ".join(command)
    section.figures["seconds"] = seconds
    if done.returncode != 0 or not report.is_file():
        said = [line for line in done.stderr.splitlines() if line.startswith("nlue train")]  # the recipe's message
        section.check("torchrun --nproc_per_node 1 finished", False,
                      f"exit {done.returncode}: {' '.join(said)} ... {done.stderr[-1500:]}")  # fmt: skip
        return section
    found = json.loads(report.read_text(encoding="utf-8"))
    section.figures["probe"] = found
    section.check("torchrun --nproc_per_node 1 finished", found["exit"] == 0, f"exit {found['exit']}")
    section.check("the recipe ran in a process group of one", found["initialized"] and found["world_size"] == 1,
                  f"backend {found['backend']}, world size {found['world_size']}, LOCAL_RANK {found['local_rank']}")  # fmt: skip
    section.row(f"torchrun --nproc_per_node 1, nlue train ({settings.half})", seconds, "s",
                note=f"backend {found['backend']}, whole command incl. start-up")  # fmt: skip
    return section
