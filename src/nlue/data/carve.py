"""Carving a validation split out of train: a seeded, stratified hold-out with flat memory."""

from __future__ import annotations

from typing import Any

import numpy as np

from nlue.registry.tasks import TaskSpec


def stratum_dtype(task: TaskSpec) -> np.dtype:
    """Strata are score bands 0..5 or class ids (a handful per task): one byte holds them."""
    return np.dtype(np.int8 if len(task.label_names) <= 127 else np.int32)


def stratified_holdout(strata: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """Boolean mask choosing ``fraction`` of each stratum (at least one where it has 2+).

    Memory: the mask (1 byte per row) and the positions of one stratum at a time (4
    bytes per row of that stratum), shuffled in place.
    """
    mask = np.zeros(len(strata), dtype=bool)
    rng = np.random.default_rng(seed)
    for value in np.unique(strata):
        positions = positions_of(strata, value)
        count = round(fraction * len(positions))
        if count == 0 and len(positions) >= 2 and fraction > 0:
            count = 1
        # rng.permutation(positions) copies and then shuffles; shuffling in place draws
        # the same numbers (for any integer dtype), so the same rows are held out.
        rng.shuffle(positions)
        mask[positions[:count]] = True
    return mask


_POSITION_CHUNK = 1 << 20


def positions_of(strata: np.ndarray, value: Any) -> np.ndarray:
    """Ascending positions where ``strata == value``, as uint32 where that can hold them."""
    is_value = strata == value
    dtype = np.uint32 if len(strata) <= np.iinfo(np.uint32).max else np.int64
    positions = np.empty(np.count_nonzero(is_value), dtype=dtype)
    filled = 0
    # By chunk: np.flatnonzero over all rows would allocate 8 bytes per match.
    for start in range(0, len(strata), _POSITION_CHUNK):
        found = np.flatnonzero(is_value[start : start + _POSITION_CHUNK])
        positions[filled : filled + len(found)] = found + start
        filled += len(found)
    return positions
