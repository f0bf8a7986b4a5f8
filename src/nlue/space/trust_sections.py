"""The leaderboard tab's "can a score be trusted" tables (contamination, memorisation), built and re-read together.

The boards are read from the results folders when the page is built (:func:`trust_boards`, before the warm-up
imports torch in its thread) and again when the leaderboard's "Re-read results folder" button is pressed
(:func:`trust_updates`: after a Hub results repo has been mirrored again), so that new findings and memorisation
files show without a restart and removed ones disappear. The contamination board is the service's (read with the
leaderboard, whose clean columns it gives); the memorisation board is read here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from nlue.boards.contamination import ContaminationBoard, contamination_board_of
from nlue.boards.memorisation import MemorisationBoard, memorisation_board_of
from nlue.results_folders import ResultsFolder
from nlue.space.contamination_section import build_contamination_board, contamination_updates
from nlue.space.memorisation_section import build_memorisation_board, memorisation_updates


@dataclass(frozen=True)
class TrustBoards:
    contamination: ContaminationBoard
    memorisation: MemorisationBoard


def trust_boards(folders: Sequence[ResultsFolder], contamination: ContaminationBoard | None = None) -> TrustBoards:
    """Both boards of the results folders (empty ones show nothing); ``contamination``: already read."""
    return TrustBoards(contamination or contamination_board_of(folders), memorisation_board_of(folders))


def build_trust_sections(boards: TrustBoards) -> list[Any]:
    """The contamination components, then the memorisation ones, in the order :func:`trust_updates` fills them."""
    return [*build_contamination_board(boards.contamination), *build_memorisation_board(boards.memorisation)]


def trust_updates(boards: TrustBoards) -> list[Any]:
    """An update for each component of :func:`build_trust_sections`, from the boards as read again."""
    shown = [*contamination_updates(boards.contamination), *memorisation_updates(boards.memorisation)]
    return [gr.update(**values) for values in shown]
