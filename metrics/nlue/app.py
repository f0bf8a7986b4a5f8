"""The Space page of the nlue metric: one tab per NLUE task, a table of items in, the scores out."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# `python app.py` puts this folder first on sys.path, and nlue.py here (the metric script) would then
# shadow the nlue package that both this page and the script import. Drop the folder before importing.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

import evaluate  # noqa: E402

from nlue.registry.tasks import TASK_NAMES  # noqa: E402

# evaluate.utils.launch_gradio_widget is written for Gradio 3 and fails on this Space's Gradio 6;
# nlue ships a drop-in with the same call, which also takes a dict of modules (one tab each).
from nlue.space.metric_widget import launch_gradio_widget  # noqa: E402

launch_gradio_widget({task: evaluate.load(str(HERE / "nlue.py"), task) for task in TASK_NAMES})
