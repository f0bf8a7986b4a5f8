"""Input checks shared by every scorer.

Each check turns user input into a NumPy array or raises a ``ValueError`` whose message
names the argument, the position and what was expected, so that a caller of
``evaluate.load(...).compute(...)`` can fix the input without reading our code.
"""

from __future__ import annotations

from collections.abc import Sequence, Sized
from typing import Any

import numpy as np

from nlue.errors import NlueError


def as_vector(values: Any, name: str) -> np.ndarray:
    """Return ``values`` as a 1-D array; reject scalars and nested tables."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise NlueError(f"{name} must be a flat list with one value per item, got an array of shape {array.shape}")
    return array


def check_not_empty(n_items: int, what: str = "predictions and references") -> None:
    """Refuse to score nothing: every metric here is undefined on zero items."""
    if n_items == 0:
        raise NlueError(f"empty input: {what} hold no items, so there is nothing to score")


def check_same_length(**columns: Sized) -> int:
    """Return the common length of the named columns, or name the ones that differ."""
    lengths = {}
    for name, column in columns.items():
        if isinstance(column, str) or not hasattr(column, "__len__"):
            raise NlueError(f"{name} must be a list with one value per item, got {type(column).__name__}")
        lengths[name] = len(column)
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{length} {name}" for name, length in lengths.items())
        raise NlueError(f"lengths differ: got {shown}; each item needs exactly one of each")
    return next(iter(lengths.values()))


def label_codes(values: Any, labels: Sequence[int], name: str, owner: str) -> np.ndarray:
    """Map label ids to positions 0..L-1 in ``labels``; refuse ids the owner does not define.

    ``owner`` says whose labels these are (e.g. "task 'qnli'") for the error message.
    """
    array = as_vector(values, name)
    if array.dtype == bool:
        array = array.astype(np.int64)
    if array.dtype.kind == "f":
        _check_finite(array, name)
        if not np.all(array == np.round(array)):
            position = int(np.flatnonzero(array != np.round(array))[0])
            raise NlueError(f"{name} must be integer label ids; position {position} holds {array[position].item()!r}")
        array = array.astype(np.int64)
    elif array.dtype.kind not in "iu":
        raise NlueError(f"{name} must be integer label ids, got values of type {array.dtype}")
    label_array = np.asarray(labels, dtype=np.int64)
    # searchsorted finds each id's slot among the sorted labels; a slot holding another id means "unknown".
    order = np.argsort(label_array, kind="stable")
    sorted_labels = label_array[order]
    slots = np.clip(np.searchsorted(sorted_labels, array), 0, len(sorted_labels) - 1)
    unknown = sorted_labels[slots] != array
    if np.any(unknown):
        position = int(np.flatnonzero(unknown)[0])
        raise NlueError(
            f"label id {int(array[position])} in {name} (position {position}) is outside the labels of {owner}; "
            f"valid ids: {', '.join(str(int(v)) for v in label_array)}"
        )
    return order[slots].astype(np.int64)


def finite_scores(values: Any, name: str) -> np.ndarray:
    """Return real-valued scores as float64, refusing NaN and infinities."""
    array = as_vector(values, name)
    if array.dtype.kind not in "biuf":
        raise NlueError(f"{name} must be numbers, got values of type {array.dtype}")
    array = array.astype(np.float64)
    _check_finite(array, name)
    return array


def _check_finite(array: np.ndarray, name: str) -> None:
    bad = ~np.isfinite(array)
    if np.any(bad):
        position = int(np.flatnonzero(bad)[0])
        kind = "NaN" if np.isnan(array[position]) else "an infinite value"
        raise NlueError(f"{name} hold {kind} at position {position}; scores must be finite numbers")


def check_probability(value: float, name: str) -> float:
    """Confidence levels live strictly between 0 and 1."""
    if not 0.0 < float(value) < 1.0:
        raise NlueError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    return float(value)


def check_positive_int(value: Any, name: str) -> int:
    """Resample counts must be whole and positive."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise NlueError(f"{name} must be a positive whole number, got {value!r}")
    return int(value)
