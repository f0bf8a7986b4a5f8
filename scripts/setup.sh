#!/usr/bin/env bash
# Set up a fresh machine: a virtual environment in .venv with nlue and everything its
# tools and tests need. Safe to run again; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
# torch first and pinned: 2.13.0 is a CPU build on disk here; letting pip choose another
# version would download several GB of CUDA wheels.
python -m pip install -q "torch==2.13.0"
python -m pip install -q -e ".[all,test]"
