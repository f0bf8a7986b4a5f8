"""How `nlue build` scales: wall time and peak memory on a large synthetic source.

Generates a synthetic Devanagari sentiment CSV (``text,label``; ~2% exact duplicate rows
and a few empty/blank texts, so de-duplication and rejects are exercised), streamed to
disk, then runs in a child process each:

* our builder: ``python -m nlue.cli build --task sa --train SRC --out OUT --quiet``;
* the reference: ``pandas.read_csv -> drop_duplicates -> to_parquet`` of the same file.

Each child's peak RSS is its own ``ru_maxrss`` from ``os.wait4``. Linux carries a
parent's high-water RSS into a child across fork/exec, so this launcher never imports
pandas or pyarrow and never holds the rows; its own peak is printed as the floor below
which no child figure can read. Runs at two sizes show how memory grows with rows; what
the builder is expected to grow by is printed beside the measured growth.

The goals (issue 14) are checked and printed: at 1,000,000 rows the builder's rows/s at
least half the reference's, and its peak RSS at most 400 MiB at every size run. The
machine's load average is printed beside each run: on a shared machine the ratio moves
with it.

    python benchmarks/build_scale.py                      # 1,000,000 and 250,000 rows
    python benchmarks/build_scale.py --rows 5000000 --also-rows 1000000 --profile-rows 0
    python benchmarks/build_scale.py --rows 200000 --also-rows 0 --profile-rows 0
"""

from __future__ import annotations

import argparse
import collections
import csv
import importlib.metadata
import importlib.util
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SLOW_BUILD_SECONDS = 180.0  # budget for 1M rows on 2 cores (the streaming builder takes well under a minute)
GOAL_SPEED_RATIO = 0.5  # the builder's rows/s over the reference's, at GOAL_SPEED_ROWS
GOAL_SPEED_ROWS = 1_000_000
GOAL_PEAK_RSS_MIB = 400.0  # the builder's peak RSS at every size
PROFILE_TOP = 15
PROFILE_TOP_OWN = 10
DUPLICATE_SHARE = 0.02
RECENT_ROWS = 4096  # duplicates are copies of recent rows: bounded memory while generating

_CONSONANTS = "कखगघङचछजझटठडढणतथदधनपफबभमयरलवशषसह"
_VOWEL_SIGNS = ("", "", "ा", "ि", "ी", "ु", "ू", "े", "ै", "ो", "ौ")
_INITIAL_VOWELS = "अआइईउएओ"
_CODAS = ("", "", "", "", "ं", "्")

BASELINE_CODE = """\
import sys
import pandas as pd
src, dst = sys.argv[1], sys.argv[2]
frame = pd.read_csv(src)
frame = frame.drop_duplicates()
frame.to_parquet(dst, index=False)
print(len(frame))
"""
BASELINE_DESCRIPTION = "pandas read_csv -> drop_duplicates -> to_parquet, the same input (one file, default options)"
# What the builder holds per distinct row (see nlue.data.config_builder.ConfigBuilder and nlue.data.fingerprints).
GROWTH_EXPLANATION = (
    "what grows: nlue build keeps, per distinct row, an 8-byte fingerprint (to the end of the config: test rows\n"
    "           must not repeat train) and an 8-byte key of the folded text for the near-duplicate counts, plus a\n"
    "           1-byte label code while train is de-duplicated and a 1-byte stratum while validation is carved (and,\n"
    "           during the seeded draw, 4 bytes per row of the largest class): ~18-21 bytes per row. Rows, statistics\n"
    "           (length histograms), Arrow's read-ahead and Parquet buffers are bounded per batch of a few MiB. The\n"
    "           whole-run peak can be set by fixed costs after the rows are done (rendering the card), hence the\n"
    "           peak before the card; a few bytes either way is allocator noise."
)


# --------------------------------------------------------------------------- data


def _word(rng: random.Random) -> str:
    syllables = []
    if rng.random() < 0.15:
        syllables.append(rng.choice(_INITIAL_VOWELS))
    for _ in range(rng.randint(1, 3)):
        syllables.append(rng.choice(_CONSONANTS) + rng.choice(_VOWEL_SIGNS))
    return "".join(syllables) + rng.choice(_CODAS)


@dataclass(frozen=True)
class Lexicon:
    neutral: list[str]
    positive: list[str]
    negative: list[str]


def make_lexicon(rng: random.Random, size: int = 400, polar: int = 30) -> Lexicon:
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:
        word = _word(rng)
        if word not in seen:
            seen.add(word)
            words.append(word)
    return Lexicon(neutral=words[2 * polar :], positive=words[:polar], negative=words[polar : 2 * polar])


def _sentence(rng: random.Random, lex: Lexicon, label: int) -> str:
    length = rng.randint(6, 20)
    polar_count = rng.randint(1, 2)
    words = rng.choices(lex.neutral, k=length - polar_count)
    own, other = (lex.positive, lex.negative) if label == 1 else (lex.negative, lex.positive)
    for _ in range(polar_count):
        words.insert(rng.randrange(len(words) + 1), rng.choice(own))
    if rng.random() < 0.1:  # a contrary word now and then, as in real reviews
        words[rng.randrange(len(words))] = rng.choice(other)
    text = " ".join(words)
    if rng.random() < 0.03:  # some untidy spacing for the normaliser
        cut = text.find(" ")
        text = text[:cut] + "  " + text[cut + 1 :]
    end = rng.random()
    if end < 0.70:
        text += "।"
    elif end < 0.80:
        text += " |"  # ASCII stand-in for the danda
    elif end < 0.85:
        text += "!"
    return text


@dataclass(frozen=True)
class SourceInfo:
    path: Path
    rows: int
    duplicates: int
    blank: int
    expected_builder_rows: int  # distinct, non-blank rows (assumes no accidental collisions)
    expected_pandas_rows: int  # distinct (text, label) pairs, blanks included
    size_bytes: int
    seconds: float


def write_source_csv(path: Path, rows: int, seed: int) -> SourceInfo:
    """Stream ``rows`` synthetic rows to ``path``; only a small window of recent rows is held."""
    start = time.perf_counter()
    rng = random.Random(seed)
    lex = make_lexicon(rng)
    blank_every = max(rows // max(4, rows // 50_000), 1)  # ~20 blank texts per million rows
    recent: collections.deque[tuple[str, int]] = collections.deque(maxlen=RECENT_ROWS)
    duplicates = blank = 0
    blank_pairs: set[tuple[str, int]] = set()
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(("text", "label"))
        for i in range(rows):
            label = rng.randint(0, 1)
            if i % blank_every == blank_every // 2:
                text = "" if blank % 2 == 0 else "   "
                blank += 1
                blank_pairs.add((text, label))
            elif recent and rng.random() < DUPLICATE_SHARE:
                text, label = rng.choice(recent)
                duplicates += 1
            else:
                text = _sentence(rng, lex, label)
                recent.append((text, label))
            writer.writerow((text, label))
    return SourceInfo(
        path=path,
        rows=rows,
        duplicates=duplicates,
        blank=blank,
        expected_builder_rows=rows - duplicates - blank,
        expected_pandas_rows=rows - duplicates - blank + len(blank_pairs),
        size_bytes=path.stat().st_size,
        seconds=time.perf_counter() - start,
    )


# --------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class ChildRun:
    seconds: float
    maxrss_kib: int
    stdout: str
    stderr: str
    load: float  # the 1-minute load average when the run started


class ChildFailed(RuntimeError):
    pass


_launcher_peak_kib = 0


def run_child(argv: list[str], log_dir: Path, label: str, env: dict[str, str] | None = None) -> ChildRun:
    """Run ``argv`` to completion; wall time and the child's own peak RSS (KiB on Linux)."""
    global _launcher_peak_kib
    _launcher_peak_kib = max(_launcher_peak_kib, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    out_path, err_path = log_dir / f"{label}.stdout", log_dir / f"{label}.stderr"
    load = os.getloadavg()[0]
    with out_path.open("wb") as out, err_path.open("wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4; tell Popen
    stdout = out_path.read_text(encoding="utf-8", errors="replace")
    stderr = err_path.read_text(encoding="utf-8", errors="replace")
    if proc.returncode != 0:
        raise ChildFailed(f"{label} exited with {proc.returncode}:\n{stderr[-3000:] or stdout[-3000:]}")
    return ChildRun(seconds=seconds, maxrss_kib=usage.ru_maxrss, stdout=stdout, stderr=stderr, load=load)


def builder_args(src: Path, out: Path) -> list[str]:
    return ["build", "--task", "sa", "--train", str(src), "--out", str(out), "--quiet"]


# `python -m nlue.cli`, plus a note of the peak RSS when the card is about to be written: the
# rows' part of the peak. What follows (rendering the card) costs a fixed amount of memory
# that can exceed the rows' part and so hide, in ru_maxrss, how memory grows with rows.
BUILDER_CODE = """\
import os, resource, sys
import nlue.data.card
from nlue.cli import main
write_card = nlue.data.card.write_dataset_card
def noting_peak(*args, **kwargs):
    with open(os.environ["NLUE_BENCH_PEAK_FILE"], "w") as handle:
        handle.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
    return write_card(*args, **kwargs)
nlue.data.card.write_dataset_card = noting_peak
sys.exit(main(sys.argv[1:]))
"""


def builder_argv(src: Path, out: Path) -> list[str]:
    return [sys.executable, "-c", BUILDER_CODE, *builder_args(src, out)]


@dataclass(frozen=True)
class Result:
    approach: str
    rows: int
    run: ChildRun
    rows_out: int
    note: str = ""
    peak_before_card_kib: int | None = None  # nlue build only


def run_builder(source: SourceInfo, work: Path, keep: bool) -> Result:
    out = work / f"build-{source.rows}"
    peak_file = work / f"builder-{source.rows}.peak-before-card"
    env = {**os.environ, "NLUE_BENCH_PEAK_FILE": str(peak_file)}
    run = run_child(builder_argv(source.path, out), work, f"builder-{source.rows}", env)
    peak_before_card = int(peak_file.read_text(encoding="utf-8"))
    report = json.loads((out / "nlue.report.json").read_text(encoding="utf-8"))
    splits = report["configs"]["sa"]["splits"]
    kept = sum(s["kept"] for s in splits.values())
    train = splits["train"]
    note = (
        f"peak before the card {peak_before_card / 1024:,.1f} MiB; "
        f"kept {kept:,} (train {train['kept']:,} + carved validation {splits['validation']['kept']:,}); "
        f"duplicates {train['duplicates']:,} (generated {source.duplicates:,}); "
        f"rejected {train['rejected']:,} (blank texts generated {source.blank:,}); "
        f"expected kept {source.expected_builder_rows:,}"
    )
    if not keep:
        shutil.rmtree(out, ignore_errors=True)
    return Result("nlue build", source.rows, run, kept, note, peak_before_card)


def run_baseline(source: SourceInfo, work: Path, keep: bool) -> Result:
    out = work / f"pandas-{source.rows}.parquet"
    run = run_child([sys.executable, "-c", BASELINE_CODE, str(source.path), str(out)], work, f"pandas-{source.rows}")
    rows_out = int(run.stdout.split()[-1])
    note = f"wrote {rows_out:,} rows (expected {source.expected_pandas_rows:,}: duplicates dropped, blanks kept)"
    if not keep:
        out.unlink(missing_ok=True)
    return Result("pandas baseline", source.rows, run, rows_out, note)


def profile_builder(source: SourceInfo, work: Path) -> str:
    """cProfile the builder in a child; the top entries by cumulative time."""
    import io
    import pstats

    prof = work / "builder.prof"
    out = work / "build-profile"
    argv = [sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "nlue.cli", *builder_args(source.path, out)]
    run = run_child(argv, work, "builder-profile")
    shutil.rmtree(out, ignore_errors=True)
    parts = [f"profile of nlue build on {source.rows:,} rows ({run.seconds:.1f} s wall under cProfile)"]
    for key, top in (("cumulative", PROFILE_TOP), ("tottime", PROFILE_TOP_OWN)):
        buffer = io.StringIO()
        pstats.Stats(str(prof), stream=buffer).sort_stats(key).print_stats(top)
        lines = [line for line in buffer.getvalue().splitlines() if line.strip()]
        start = next((i for i, line in enumerate(lines) if "function calls" in line), 0)
        parts += [f"-- top {top} by {key} --", *lines[start:]]
    return "\n".join(parts)


# --------------------------------------------------------------------------- report


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> str:
    """The 1/5/15-minute load averages, as ``uptime`` prints them."""
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def machine_lines() -> list[str]:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [
        f"load    : {load_average()} (1/5/15 min) at the start",
        f"machine : {os.cpu_count()} CPUs ({usable} usable), {_cpu_model()}, {platform.system()} {platform.release()}",
        f"python  : {platform.python_version()} ({sys.executable})",
        f"versions: nlue {_version('nlue')}, pyarrow {_version('pyarrow')}, pandas {_version('pandas')}, "
        f"datasets {_version('datasets')}",
    ]


def table(results: list[Result]) -> str:
    head = ("approach", "rows", "seconds", "rows/s", "peak RSS MiB", "rows out", "load at start")
    body = [
        (
            r.approach,
            f"{r.rows:,}",
            f"{r.run.seconds:.1f}",
            f"{r.rows / r.run.seconds:,.0f}",
            f"{r.run.maxrss_kib / 1024:,.1f}",
            f"{r.rows_out:,}",
            f"{r.run.load:.2f}",
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in (head, *body)) for i in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths)), *(fmt.format(*row) for row in body)])


def goal_lines(results: list[Result]) -> list[str]:
    """The issue's goals, each with the measured figure and whether it is met."""
    lines = []
    for rows in sorted({r.rows for r in results}):
        ours = next(r for r in results if r.rows == rows and r.approach == "nlue build")
        peak = ours.run.maxrss_kib / 1024
        verdict = "met" if peak <= GOAL_PEAK_RSS_MIB else "NOT met"
        lines.append(
            f"goal     : nlue build's peak RSS at {rows:,} rows is {peak:,.1f} MiB "
            f"(goal <= {GOAL_PEAK_RSS_MIB:.0f} MiB): {verdict}"
        )
        reference = next((r for r in results if r.rows == rows and r.approach == "pandas baseline"), None)
        if rows == GOAL_SPEED_ROWS and reference is not None:
            ratio = reference.run.seconds / ours.run.seconds  # rows/s over rows/s, the same rows
            verdict = "met" if ratio >= GOAL_SPEED_RATIO else "NOT met"
            lines.append(
                f"goal     : nlue build at {rows:,} rows runs at {ratio:.2f}x the reference's rows/s "
                f"(goal >= {GOAL_SPEED_RATIO}x): {verdict} (1-minute load {ours.run.load:.2f} / "
                f"{reference.run.load:.2f} at the start of each)"
            )
    return lines


def growth_lines(results: list[Result]) -> list[str]:
    lines = []
    for approach in dict.fromkeys(r.approach for r in results):
        runs = sorted((r for r in results if r.approach == approach), key=lambda r: r.rows)
        if len(runs) < 2:
            continue
        small, large = runs[0], runs[-1]
        lines.append(_growth_line(f"RSS growth, {approach}", small, large, small.run.maxrss_kib, large.run.maxrss_kib))
        if small.peak_before_card_kib is not None and large.peak_before_card_kib is not None:
            lines.append(
                _growth_line(
                    f"RSS growth, {approach} (peak before the card)",
                    small,
                    large,
                    small.peak_before_card_kib,
                    large.peak_before_card_kib,
                )
            )
    return lines


def _growth_line(title: str, small: Result, large: Result, small_kib: int, large_kib: int) -> str:
    delta_kib = large_kib - small_kib
    per_row = delta_kib * 1024 / (large.rows - small.rows)
    return (
        f"{title}: {small_kib / 1024:,.1f} -> {large_kib / 1024:,.1f} MiB "
        f"from {small.rows:,} to {large.rows:,} rows = {delta_kib / 1024:+,.1f} MiB, "
        f"{per_row:,.0f} bytes per extra source row"
    )


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1_000_000, help="rows in the main run (default: 1,000,000)")
    p.add_argument("--also-rows", type=int, default=250_000, help="a smaller run to show how memory scales; 0 disables")
    p.add_argument(
        "--profile-rows",
        type=int,
        default=100_000,
        help="cProfile the builder on this many rows and print the top entries; 0 disables (default: 100,000)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic data (default: 0)")
    p.add_argument("--keep-temp", action="store_true", help="keep the temporary folder (sources, outputs, logs)")
    args = p.parse_args(argv)
    if args.rows < 1 or args.also_rows < 0 or args.profile_rows < 0:
        p.error("--rows must be positive; --also-rows and --profile-rows zero or more")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if importlib.util.find_spec("nlue") is None:
        print(f"nlue is not importable by {sys.executable}; activate the project's venv", file=sys.stderr)
        return 2
    began = time.perf_counter()
    sizes = sorted({args.rows, *([args.also_rows] if args.also_rows else [])})
    work = Path(tempfile.mkdtemp(prefix="nlue-build-scale-"))
    print("\n".join(machine_lines()))
    print(f"temp    : {work}{' (kept)' if args.keep_temp else ''}")
    results: list[Result] = []
    notes: list[str] = []
    try:
        for rows in sizes:
            source = write_source_csv(work / f"sa-{rows}.csv", rows, args.seed)
            print(
                f"\nsource  : {rows:,} rows, {source.size_bytes / 2**20:,.1f} MiB ({source.size_bytes:,} bytes), "
                f"{source.duplicates:,} exact duplicates, {source.blank} blank texts; generated in {source.seconds:.1f} s"
            )
            for runner in (run_builder, run_baseline):
                result = runner(source, work, args.keep_temp)
                results.append(result)
                print(
                    f"  {result.approach:<15} {result.run.seconds:7.1f} s  "
                    f"{result.run.maxrss_kib / 1024:8.1f} MiB  {result.note}"
                )
                if result.approach == "nlue build" and rows >= 1_000_000 and result.run.seconds > SLOW_BUILD_SECONDS:
                    notes.append(
                        f"SLOW: nlue build took {result.run.seconds:.0f} s on {rows:,} rows "
                        f"(> {SLOW_BUILD_SECONDS:.0f} s budget); see the profile below"
                    )
            if not args.keep_temp:
                source.path.unlink()
        profile = ""
        if args.profile_rows:
            source = write_source_csv(work / f"sa-profile-{args.profile_rows}.csv", args.profile_rows, args.seed)
            profile = profile_builder(source, work)
        floor_mib = _launcher_peak_kib / 1024
        print(f"\nresults ({len(os.sched_getaffinity(0))} usable CPUs):")
        print(table(results))
        print(f"reference: {BASELINE_DESCRIPTION}")
        print(
            "ours     : python -m nlue.cli "
            + " ".join(builder_args(Path("SRC"), Path("OUT")))
            + " (validate, normalise, dedup,"
        )
        print("           carve a 10% validation split, write Parquet shards + card + report)")
        growth = growth_lines(results)
        for line in growth:
            print(line)
        if any("nlue build" in line for line in growth):
            print(GROWTH_EXPLANATION)
        for line in goal_lines(results):
            print(line)
        print(f"load     : {load_average()} (1/5/15 min) at the end")
        print(
            f"floor    : this launcher peaked at {floor_mib:.1f} MiB RSS; a child's ru_maxrss cannot read lower "
            "(Linux carries the parent's high-water RSS across fork/exec)"
        )
        for note in notes:
            print(note)
        if profile:
            print("\n" + profile)
        print(f"\ntotal wall time {time.perf_counter() - began:.0f} s")
    except ChildFailed as exc:
        print(f"\nFAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        if not args.keep_temp:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
