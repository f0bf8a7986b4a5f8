"""The leaderboard tab's "can a score be trusted" tables (contamination, memorisation), built and re-read together.

The boards are read from the results folders when the page is built (:func:`trust_boards`, before the warm-up
imports torch in its thread) and again when the leaderboard's "Re-read results folder" button is pressed
(:func:`trust_updates`: after a Hub results repo has been mirrored again), so that new findings and memorisation
files show without a restart and removed ones disappear.
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


def trust_boards(folders: Sequence[ResultsFolder]) -> TrustBoards:
    """Both boards of the results folders (empty ones show nothing)."""
    return TrustBoards(contamination_board_of(folders), memorisation_board_of(folders))


def build_trust_sections(boards: TrustBoards) -> list[Any]:
    """The contamination components, then the memorisation ones, in the order :func:`trust_updates` fills them."""
    return [*build_contamination_board(boards.contamination), *build_memorisation_board(boards.memorisation)]


def trust_updates(folders: Sequence[ResultsFolder]) -> list[Any]:
    """The results folders read again: an update for each component of :func:`build_trust_sections`."""
    boards = trust_boards(folders)
    shown = [*contamination_updates(boards.contamination), *memorisation_updates(boards.memorisation)]
    return [gr.update(**values) for values in shown]
