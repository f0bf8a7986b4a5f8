"""What every section of ``benchmarks/gpu_suite.py`` shares: the run's settings, clocks, memory, checks, rows."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch


@dataclass
class Settings:
    """One run of the suite: where it runs, in which half precision, how big, and its scratch folder."""

    smoke: bool
    device: str  # "cuda" or "cpu"
    work: Path
    seed: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def cuda(self) -> bool:
        return self.device == "cuda"

    @property
    def half(self) -> str:
        """The precision the GPU paths run in: bf16 on CUDA; on a CPU fp32 (bf16 there measures nothing useful)."""
        return "bf16" if self.cuda else "fp32"

    @property
    def half_dtype(self) -> torch.dtype:
        return torch.bfloat16 if self.cuda else torch.float32


@dataclass
class Section:
    """What one section found: checks (name, passed, detail), figures, and rows of the Markdown table."""

    checks: list[dict[str, Any]] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def check(self, name: str, passed: bool, detail: str = "") -> bool:
        self.checks.append({"name": name, "passed": bool(passed), "detail": detail})
        return bool(passed)

    def row(self, what: str, value: float | None, unit: str, reference: float | None = None, ref_label: str = "",
            note: str = "") -> None:  # fmt: skip
        ratio = value / reference if value is not None and reference else None
        self.rows.append({"what": what, "value": value, "unit": unit, "reference": reference,
                          "reference_is": ref_label, "ratio": ratio, "note": note})  # fmt: skip


def sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    """Wall seconds of one call, the GPU's queue drained before and after."""
    sync()
    started = time.perf_counter()
    value = function()
    sync()
    return time.perf_counter() - started, value


def reset_peak() -> None:
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()


def peak_gib() -> float | None:
    """Peak GPU memory allocated by torch since :func:`reset_peak` (None without a GPU)."""
    return torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None


def free_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def matmul_tflops(device: str, dtype: torch.dtype, size: int, calls: int = 10) -> float:
    """Measured TFLOP/s of ``torch.mm`` on two ``size`` x ``size`` matrices (median of ``calls`` after warm-up)."""
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    out = torch.empty(size, size, device=device, dtype=dtype)
    for _ in range(3):
        torch.mm(a, b, out=out)
    times = []
    for _ in range(calls):
        seconds, _ = timed(lambda: torch.mm(a, b, out=out))
        times.append(seconds)
    return 2 * size**3 / statistics.median(times) / 1e12


def gib(value: float | None) -> str:
    return "n/a (no GPU)" if value is None else f"{value:.2f} GiB"
