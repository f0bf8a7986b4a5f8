"""Option orders of an exam item: the cyclic rotations that ``nlue llm mcq --option-orders cyclic`` asks (ours).

An item with k options has k cyclic rotations. Under rotation r the option shown at position j is
the option the item gives at position (j + r) mod k: rotation 0 is the item as given, rotation 1
shows B, C, D, A as A, B, C, D, and so on. The key moves with its option (the gold *text* is the
same under every rotation, only its letter changes), ``correct_option`` keeps its text, and the
question, groups and id stay as they are. So an item is asked k times with the same content, and
over its k rotations the key sits once at every letter: the keys are spread evenly over the letters
by construction, whatever the exam's own key distribution, which is why cyclic rotations (k orders,
not all k! permutations) are enough to measure a preference for a position.

The exams' kind (:mod:`nlue.registry.kinds.multiple_choice`) admits exactly four options A-D, so
an exam item has 4 rotations; the functions here take k from the item itself and do not assume it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nlue.errors import NlueError
from nlue.registry.kinds.mcq_text import LETTERS
from nlue.registry.kinds.multiple_choice import item_options, key_letter

GIVEN = "given"  # the options in the order the dataset gives them: one order, no robustness section
CYCLIC = "cyclic"
OPTION_ORDERS: tuple[str, ...] = (GIVEN, CYCLIC)
KEY_FIELD = "correct_key"


def option_count(item: Mapping[str, Any]) -> int:
    """How many options ``item`` has (the exams: always 4)."""
    return len(item_options(item))


def rotation_count(items: Sequence[Mapping[str, Any]]) -> int:
    """The number of cyclic rotations of ``items``: their option count, which must be one for all of them."""
    counts = {option_count(item) for item in items}
    if len(counts) != 1:
        raise NlueError(f"the items have {sorted(counts)} options: cyclic option orders need one option count")
    return counts.pop()


def shown_position(original: int, rotation: int, k: int) -> int:
    """Where the option at position ``original`` is shown under ``rotation`` (the module docstring)."""
    return (original - rotation) % k


def original_position(shown: int, rotation: int, k: int) -> int:
    """Which of the item's own options is shown at position ``shown`` under ``rotation``."""
    return (shown + rotation) % k


def original_letter(shown: str | None, rotation: int, k: int) -> str | None:
    """The item's own letter of the option shown as ``shown`` (None for an invalid answer)."""
    if shown is None:
        return None
    return LETTERS[original_position(LETTERS.index(shown), rotation, k)]


def rotate_item(item: Mapping[str, Any], rotation: int) -> dict[str, Any]:
    """``item`` with its options shown in ``rotation``'s order and its key moved with its option.

    A built row keeps its key as a ClassLabel id, a source item as a letter; the rotated key keeps that form.
    """
    options = item_options(item)
    letters = list(options)
    k = len(letters)
    shown = {letters[j]: options[letters[original_position(j, rotation, k)]] for j in range(k)}
    rotated = {**item, **({"options": shown} if isinstance(item.get("options"), Mapping) else shown)}
    if KEY_FIELD in item and item[KEY_FIELD] is not None:
        gold = letters.index(key_letter(item[KEY_FIELD]))
        moved = shown_position(gold, rotation, k)
        rotated[KEY_FIELD] = letters[moved] if isinstance(item[KEY_FIELD], str) else moved
    return rotated


def rotated_items(items: Sequence[Mapping[str, Any]], rotation: int) -> list[dict[str, Any]]:
    return [rotate_item(item, rotation) for item in items]


def run_suffix(option_orders: str) -> str:
    """What a run folder's name carries for its option orders: nothing for the given order, ``-orders-<name>``
    otherwise, so that a rotated run and an unrotated one never share a folder."""
    if option_orders not in OPTION_ORDERS:
        raise NlueError(f"option orders must be one of {', '.join(OPTION_ORDERS)}, got {option_orders!r}")
    return "" if option_orders == GIVEN else f"-orders-{option_orders}"
