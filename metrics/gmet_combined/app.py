"""The Space page of the gmet_combined metric: a table of items in, the scores out."""

from pathlib import Path

import evaluate

# evaluate.utils.launch_gradio_widget is written for Gradio 3 and fails on this Space's Gradio 6;
# nlue ships a drop-in with the same call.
from nlue.space.metric_widget import launch_gradio_widget

# The script beside this file, so the page shows exactly the code of this Space's revision.
module = evaluate.load(str(Path(__file__).with_name("gmet_combined.py")))
launch_gradio_widget(module)
