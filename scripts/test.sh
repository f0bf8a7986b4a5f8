#!/usr/bin/env bash
# README command 2 (and what CI runs): set up, lint, build the documentation site, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The Space's end-to-end test drives Debian's chromium through Playwright (browsers cannot
# be downloaded by Playwright here).
# (Noto fonts so that Devanagari renders in the screenshots the test saves.)
if { ! command -v chromium >/dev/null 2>&1 || [ ! -d /usr/share/fonts/truetype/noto ]; } \
  && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-core fonts-noto-color-emoji >/dev/null
fi
# shellcheck disable=SC1091
. .venv/bin/activate
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1
ruff check .
ruff format --check .
# The documentation site is built strictly (a broken link, a missing page or a failing reference generator
# fails) by tests/test_docs_site.py, into a temporary folder, beside the other tests rather than before them.
# The suite on every core (at most 4), each worker one process with one torch thread. Each worker holds its
# own session fixtures, hence the cap; NLUE_TEST_WORKERS sets the number (0: one process, no workers).
# Each module is one unit of work (its fixtures made once), the docs pages one each (tests/conftest.py), the
# long units first: --no-loadscope-reorder keeps the order conftest gives them.
workers="${NLUE_TEST_WORKERS:-$(python -c 'import os; print(min(len(os.sched_getaffinity(0)), 4))')}"
python -m pytest -n "$workers" --dist loadscope --no-loadscope-reorder "$@"
