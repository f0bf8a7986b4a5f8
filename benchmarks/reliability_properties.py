"""The reliability properties at nightly size: every reader, normaliser and parser a user's data passes through.

Runs each property of ``tests/reliability_cases.py`` (the ones ``tests/test_properties.py`` runs a few
hundred times in the suite) on 10,000 generated cases, and prints per property the cases tried, the
failures and the time. Unlike the suite, a failing case does not stop its property: every one is counted,
and the first few are printed as generated (not shrunk). Exits 1 when any property failed.

Run from the repository root: ``python benchmarks/reliability_properties.py [--examples 10000] [--only NAME]``
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package, for its strategies

from nlue.text_table import text_table
from tests.reliability_cases import PROPERTIES, Property

SHOWN_FAILURES = 3


def run(prop: Property, examples: int) -> tuple[int, list[tuple[Any, BaseException]], float]:
    """Cases tried, the failing ones with what they raised, and seconds, for one property."""
    tried = 0
    failures: list[tuple[Any, BaseException]] = []

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,  # a nightly run starts afresh; the suite keeps hypothesis's examples
        phases=[Phase.generate],  # nothing raises out of `each`, so there is nothing to shrink
        suppress_health_check=list(HealthCheck),
    )
    @given(prop.strategy)
    def each(case: Any) -> None:
        nonlocal tried
        tried += 1
        try:
            prop.check(case)
        except Exception as error:  # counted and shown, not raised: the run goes on
            failures.append((case, error))

    started = time.perf_counter()
    each()
    return tried, failures, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=10_000, help="cases per property (default 10,000)")
    parser.add_argument("--only", action="append", default=[], help="run only the property of this name")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # the code under test logs what it rejects; the table is the output
    chosen = [p for p in PROPERTIES if not args.only or p.name in args.only]
    print(f"{len(chosen)} properties x {args.examples:,} cases; Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs ({platform.machine()})")  # fmt: skip
    rows = [("property", "cases", "failures", "seconds", "cases/s")]
    shown: list[str] = []
    for prop in chosen:
        tried, failures, seconds = run(prop, args.examples)
        rows.append((prop.name, f"{tried:,}", str(len(failures)), f"{seconds:.1f}", f"{tried / seconds:,.0f}"))
        for case, error in failures[:SHOWN_FAILURES]:
            shown.append(f"{prop.name}: {type(error).__name__}: {str(error)[:300]}\n    case: {case!r:.500}")
        print(f"  {prop.name}: {tried:,} cases, {len(failures)} failures, {seconds:.1f} s", flush=True)
    print()
    print(text_table(rows, numbers_right=True))
    if shown:
        print("\nfirst failing cases:\n" + "\n".join(shown))
    return 1 if any(row[2] != "0" for row in rows[1:]) else 0


if __name__ == "__main__":
    sys.exit(main())
