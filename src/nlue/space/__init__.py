"""The NLUE Gradio Space: try models, fill GMET blanks, browse data, read the leaderboard.

The logic lives here, importable and tested; ``spaces/nlue/app.py`` only builds and
launches it. Gradio is imported by :mod:`nlue.space.ui` alone, so the handlers
(:mod:`nlue.space.service`) and the leaderboard assembly work without it.
"""

from nlue.space.serve import add_space_arguments, build_demo, launch, run_space_command
from nlue.space.settings import SpaceSettings

__all__ = ["SpaceSettings", "add_space_arguments", "build_demo", "launch", "run_space_command"]
