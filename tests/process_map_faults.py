"""Per-item functions with faults, for tests/test_num_proc.py and tests/test_corpus_blocks.py: at module level in a light module, because the
worker processes import it by name (spawn)."""

from __future__ import annotations

import os

from nlue.errors import NlueError
from nlue.idioms.mine import Matcher


def fail_on_seven(context: str, item: int) -> str:
    """``context`` and the item; a fault of ours on item 7 and an input error on item 11."""
    if item == 7:
        return str(1 / 0)
    if item == 11:
        raise NlueError("eleven is not allowed")
    return f"{context}{item}"


def exit_on_five(context: str, item: int) -> str:
    """A worker that dies on item 5 (as one killed by the kernel for memory would)."""
    if item == 5:
        os._exit(9)
    return f"{context}{item}"


class FaultyMatcher(Matcher):
    """An idiom matcher with a fault of ours on any document holding the word अन्तिम ("last")."""

    def has_first_word(self, text: str) -> bool:
        if "अन्तिम" in text:
            return bool(1 / 0)
        return super().has_first_word(text)
