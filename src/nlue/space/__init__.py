"""The NLUE Gradio Space: try models, fill GMET blanks, browse data, read the leaderboard.

The logic lives here, importable and tested; ``spaces/nlue/app.py`` only builds and
launches it. Gradio is imported by :mod:`nlue.space.ui` alone, so the handlers
(:mod:`nlue.space.service`) and the leaderboard assembly work without it.
"""

from typing import Any

__all__ = ["SpaceSettings", "add_space_arguments", "build_demo", "launch", "run_space_command"]


def __getattr__(name: str) -> Any:
    # Lazy: importing a submodule (nlue.boards.columns, say) must not pull in the server and Gradio.
    if name == "SpaceSettings":
        from nlue.space.settings import SpaceSettings

        return SpaceSettings
    if name in __all__:
        from nlue.space import serve

        return getattr(serve, name)
    raise AttributeError(f"module 'nlue.space' has no attribute {name!r}")
