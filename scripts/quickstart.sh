#!/usr/bin/env bash
# README command 1: set up, then run the main job on the embedded sample data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
nlue quickstart --out build "$@"
