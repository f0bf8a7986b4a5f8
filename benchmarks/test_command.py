"""The README's second command, timed and weighed: `bash scripts/test.sh` in a fresh clone of this repository.

Prints the wall time, pytest's own time and summary line, the peak resident memory of the whole process tree
(the shell, pytest, its workers and every server and command they start, summed, sampled every half second), the
load average before and after, beside the goals the project holds it to: under 8 minutes and 8 GiB on the
2-core machine (docs/benchmarks.md#the-test-command).

    python benchmarks/test_command.py               # clone HEAD beside this checkout, run, remove the clone
    python benchmarks/test_command.py --keep        # keep the clone (its test-artifacts/ hold the screenshots)
    NLUE_TEST_WORKERS=0 python benchmarks/test_command.py   # the suite in one process, for comparison

The clone is made beside this checkout, so that the tests find ``../shared`` as they do in CI. Needs psutil.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from readme_llm_commands import PeakMemory  # the same sampler of a process tree's memory

ROOT = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 8 * 60
GOAL_BYTES = 8 * 2**30


def minutes(seconds: float) -> str:
    whole, rest = divmod(round(seconds), 60)  # rounded first: 419.6 s is 7 min 0 s, not 6 min 60 s
    return f"{whole} min {rest} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the clone")
    args = parser.parse_args()
    clone = Path(tempfile.mkdtemp(prefix=".nlue-test-command-", dir=ROOT.parent))
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    log = clone.parent / f"{clone.name}.log"
    load_before = os.getloadavg()
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as out, PeakMemory() as memory:
        shell = subprocess.Popen(["bash", "scripts/test.sh"], cwd=clone, stdout=out, stderr=subprocess.STDOUT)
        memory.pids.append(shell.pid)
        shell.wait()
    peak = memory.peak
    wall = time.perf_counter() - started
    load_after = os.getloadavg()
    text = log.read_text(encoding="utf-8", errors="replace")
    summary = re.findall(r"^=+ (.*(?:passed|failed).*) in ([\d.]+)s", text, re.M)
    print(f"the test command, fresh clone of {subprocess.check_output(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, text=True).strip()}"
          f" on {os.cpu_count()} cores; exit {shell.returncode}")  # fmt: skip
    print(f"  wall time      {minutes(wall):>14}   goal under {minutes(GOAL_SECONDS)}")
    if summary:
        result, seconds = summary[-1]
        print(f"  pytest         {minutes(float(seconds)):>14}   {result}")
    print(f"  peak memory    {peak / 2**30:>10.1f} GiB   goal under {GOAL_BYTES / 2**30:.0f} GiB (whole process tree)")
    print(f"  load average   {load_before[0]:.1f} before, {load_after[0]:.1f} after")
    print(f"  log: {log}" + (f"; clone: {clone}" if args.keep else ""))
    if not args.keep:
        shutil.rmtree(clone, ignore_errors=True)
    return shell.returncode


if __name__ == "__main__":
    sys.exit(main())
