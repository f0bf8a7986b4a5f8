"""The NLUE Space. The page and its logic live in the nlue package (nlue.space); this file
only picks the configuration, builds the page and launches it. Settings: models.yaml beside
this file and the NLUE_SPACE_* variables described in README.md; your own tasks' files in
NLUE_TASK_FILES, and those the datasets of NLUE_SPACE_DATASET carry (registered for the process's life)."""

import contextlib
import logging
import os
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # before gradio is imported: no telemetry

from nlue.space import SpaceSettings, build_demo, launch
from nlue.space.serve import space_task_files

HERE = Path(__file__).resolve().parent
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

# Defaults: the models file beside this one (it scans ../../build/models) and the repository's
# build/results, i.e. what the README's main job produces; NLUE_SPACE_* variables override both.
settings = SpaceSettings.from_env(
    default_models=HERE / "models.yaml",
    default_results=HERE.parents[1] / "build" / "results",
)
# Tasks of your own (NLUE_TASK_FILES, and the task files the datasets carry), registered before the page is
# built and for as long as it serves.
TASKS = contextlib.ExitStack()
TASKS.enter_context(space_task_files(settings))
demo = build_demo(settings)

if __name__ == "__main__":
    launch(settings, demo)  # loopback locally; the Hub's runtime sets GRADIO_SERVER_NAME=0.0.0.0
