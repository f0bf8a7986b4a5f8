"""64-bit keys of Arrow string columns, computed with numpy over the columns' UTF-8 buffers.

The columnar builder (:mod:`nlue.data.columnar`) needs three keys per row without making
a Python string per row: the fingerprint of a row's normalised inputs (which rows repeat
or leak), and the two keys behind the overlap counts of :mod:`nlue.data.overlap` (the
inputs folded by :data:`nlue.text.normalize.NEAR_DUPLICATE_RULES`, and each field's text).

:func:`hash_array` hashes every string of a column at once: the strings' 8-byte words
are fed, word index by word index, through XXH64's lane round into four accumulators, all
strings of a batch in step (strings sorted by length, so the ones still running are a
prefix), then merged and mixed as XXH64 merges and mixes them. A string's length seeds its state and its last word is zero-padded, so
no two different strings share their words. Strings longer than ``LONG_STRING_BYTES``
would keep a loop running for few rows; they are hashed one by one with blake2b
instead. Equal strings always take the same branch (their lengths are equal), so equal
texts get equal keys; two different texts share a key with odds ~2**-64, as with the row
path's 64-bit blake2b fingerprints. Keys only ever meet keys of the same build.

:func:`loose_keys` keys rows by their inputs folded by the near-duplicate rules. Texts whose
code points are all ASCII or Devanagari (U+0900-U+097F) are folded byte by byte in bulk,
by the rule of the row path's tables (:func:`nlue.text.normalize.fold_rule`): ASCII
punctuation and the space deleted, ASCII letters lower-cased (``bytes.translate``), the
dandas and the abbreviation sign deleted and Devanagari digits made ASCII (found as their
UTF-8 bytes with numpy). Any other text is folded by
:func:`nlue.text.normalize.loose_texts` itself, so both give the same folded text.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nlue.data.fingerprints import SEPARATOR
from nlue.text.normalize import fold_rule, loose_texts

LONG_STRING_BYTES = 1024
_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)
_U64 = np.uint64
# What a text must hold for the bulk fold: ASCII and the Devanagari block only.
_NOT_BULK_FOLDABLE = "[^\\x{001F}-\\x{007E}\\x{0900}-\\x{097F}]"
_DEVANAGARI_LEAD = 0xE0  # U+0800-U+0FFF take 3 bytes, E0 then two continuation bytes


def _as_string_array(array: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return array if pa.types.is_string(array.type) else array.cast(pa.string())


def string_buffers(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A string array's offsets (int64, from 0) and UTF-8 bytes, without copying the bytes."""
    array = _as_string_array(array)
    if array.null_count:
        raise ValueError("string keys are computed for arrays without nulls")
    _, offsets_buffer, data_buffer = array.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32, count=len(array) + 1, offset=array.offset * 4)
    offsets = offsets.astype(np.int64)
    start, stop = int(offsets[0]), int(offsets[-1])
    offsets -= start
    if data_buffer is None or stop == start:
        return offsets, np.zeros(0, dtype=np.uint8)
    return offsets, np.frombuffer(data_buffer, dtype=np.uint8, count=stop - start, offset=start)


def hash_array(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """One 64-bit key per string of ``array`` (no nulls); see the module docstring."""
    offsets, data = string_buffers(array)
    return _hash_spans(offsets[:-1], np.diff(offsets), data)


def row_fingerprints(columns: Sequence[pa.Array | pa.ChunkedArray]) -> np.ndarray:
    """The key of each row's values in ``columns`` joined by SEPARATOR (the row path's fingerprint, in bulk)."""
    arrays = [_as_string_array(column) for column in columns]
    if len(arrays) == 1:
        return hash_array(arrays[0])
    return hash_array(pc.binary_join_element_wise(*arrays, SEPARATOR))


def _hash_spans(starts: np.ndarray, lengths: np.ndarray, data: np.ndarray) -> np.ndarray:
    """The keys of the strings ``data[starts[i]:starts[i] + lengths[i]]``."""
    keys = np.empty(len(starts), dtype=np.uint64)
    long_rows = np.flatnonzero(lengths > LONG_STRING_BYTES)
    for row in long_rows.tolist():
        start = int(starts[row])
        digest = hashlib.blake2b(data[start : start + int(lengths[row])].tobytes(), digest_size=8).digest()
        keys[row] = int.from_bytes(digest, "little")
    if not len(long_rows):
        keys[:] = _hash_short(starts, lengths, data)
    elif len(long_rows) < len(starts):
        short = np.flatnonzero(lengths <= LONG_STRING_BYTES)
        keys[short] = _hash_short(starts[short], lengths[short], data)
    return keys


def _hash_short(starts: np.ndarray, lengths: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Keys of short strings (``starts``/``lengths`` into ``data``), all of them in step.

    XXH64's layout for long inputs: word ``k`` of a string goes through the lane round into
    accumulator ``k % 4``; the accumulators are merged as XXH64 merges them, the length
    is added and XXH64's avalanche ends it. (Not XXH64's values: short inputs and the tail
    are taken the same way as the rest, zero-padded, with the length in the seed.)
    """
    count = len(starts)
    if not count:
        return np.zeros(0, dtype=np.uint64)
    words = (lengths + 7) >> 3
    order = np.argsort(-words, kind="stable")  # longest first: the running strings are a prefix
    sorted_words = words[order]
    position = starts[order]
    remaining = lengths[order]
    seed = remaining.astype(np.uint64)
    accumulators = [seed + _P1 + _P2, seed + _P2, seed.copy(), seed - _P1]
    # running[k]: how many strings have more than k words.
    running = np.searchsorted(-sorted_words, -np.arange(int(sorted_words[0]) + 1), side="left")
    padded = np.zeros(len(data) + 8, dtype=np.uint8)
    padded[: len(data)] = data
    # Every byte position read as the little-endian word that starts there (unaligned view, no copy).
    word_at = np.ndarray(shape=(len(data) + 1,), dtype="<u8", buffer=padded, strides=(1,))
    scratch = np.empty(count, dtype=np.uint64)
    for k in range(int(sorted_words[0])):
        live, last = int(running[k]), int(running[k + 1])
        at = position[:live]
        lane = word_at[at]  # fancy indexing: np.take on an unaligned view is ~10x slower
        if last < live:  # these strings end within this word: keep only their own bytes
            lane[last:live] &= _TAIL_MASKS[remaining[last:live] - 8 * k]
        _round(accumulators[k % 4][:live], lane, scratch[:live])
        at += 8
    spare = scratch
    state = _rotl(accumulators[0], 1, spare) + _rotl(accumulators[1], 7, spare)
    state += _rotl(accumulators[2], 12, spare) + _rotl(accumulators[3], 18, spare)
    for accumulator in accumulators:  # XXH64's merge round
        state ^= _round(np.zeros(count, dtype=np.uint64), accumulator, spare)
        state *= _P1
        state += _P4
    state += seed
    # XXH64's avalanche.
    state ^= state >> _U64(33)
    state *= _P2
    state ^= state >> _U64(29)
    state *= _P3
    state ^= state >> _U64(32)
    keys = np.empty(count, dtype=np.uint64)
    keys[order] = state
    return keys


def _round(accumulator: np.ndarray, lane: np.ndarray, spare: np.ndarray) -> np.ndarray:
    """XXH64's round in place: ``accumulator = rotl(accumulator + lane * P2, 31) * P1``."""
    accumulator += lane * _P2
    np.left_shift(accumulator, _U64(31), out=spare)
    accumulator >>= _U64(33)
    accumulator |= spare
    accumulator *= _P1
    return accumulator


def _rotl(values: np.ndarray, bits: int, spare: np.ndarray) -> np.ndarray:
    """``values`` rotated left by ``bits`` (a new array)."""
    np.left_shift(values, _U64(bits), out=spare)
    return (values >> _U64(64 - bits)) | spare


_TAIL_MASKS = np.array([(1 << (8 * n)) - 1 if n < 8 else (1 << 64) - 1 for n in range(9)], dtype=np.uint64)


# --- the near-duplicate fold in bulk ------------------------------------------------------

_SEPARATOR_BYTE = 0x1F  # SEPARATOR of nlue.data.fingerprints: normalisation leaves none inside a text
_DELETED_MARK = 0x00  # what a Devanagari character the fold removes is overwritten with; never in a bulk-folded text


@functools.cache
def _fold_tables() -> tuple[bytes, bytes, np.ndarray, np.ndarray]:
    """The fold for ASCII bytes and the Devanagari block, checked to work byte by byte.

    Returns: a 256-byte translation table (ASCII letters to the fold's letters), the bytes
    to delete (ASCII the fold deletes, and the mark), and for U+0940-U+097F (E0 A5 xx)
    whether the fold deletes the character and its ASCII replacement (-1: none). Made
    from :func:`nlue.text.normalize.fold_rule`, the rule of the row path's tables.
    """
    table = bytearray(range(256))
    delete = bytearray([_DELETED_MARK])
    for code in range(0x80):
        deleted, mapped, expands = fold_rule(code)
        if expands or mapped >= 0x80:
            raise AssertionError(f"U+{code:04X} does not fold to one ASCII byte")
        if deleted:
            delete.append(code)
        table[code] = mapped
    if _SEPARATOR_BYTE in delete or table[_SEPARATOR_BYTE] != _SEPARATOR_BYTE or table[_DELETED_MARK] != 0:
        raise AssertionError("the separator must pass the fold unchanged")
    devanagari_deleted = np.zeros(0x40, dtype=bool)
    devanagari_ascii = np.full(0x40, -1, dtype=np.int16)
    for code in range(0x0900, 0x0980):
        deleted, mapped, expands = fold_rule(code)
        changed = deleted or mapped != code
        # _fold_bytes looks for changes in U+0964-U+0970 only (third bytes A4-B0).
        if expands or (mapped != code and mapped >= 0x80) or (changed and not 0x0964 <= code <= 0x0970):
            raise AssertionError(f"U+{code:04X} is folded in a way the byte-wise fold does not know")
        if code >= 0x0940:
            devanagari_deleted[code - 0x0940] = deleted
            if mapped != code and not deleted:
                devanagari_ascii[code - 0x0940] = mapped
    return bytes(table), bytes(delete), devanagari_deleted, devanagari_ascii


def loose_keys(columns: Sequence[pa.Array | pa.ChunkedArray], suspects: np.ndarray | None = None) -> np.ndarray:
    """The key of each row's fields (normalised, no nulls) folded and joined, as the row path joins them.

    Equal keys exactly when ``SEPARATOR.join(loose_texts(field) for field in fields)`` is
    equal. ``suspects`` are the positions of the only rows that may hold characters other
    than ASCII and Devanagari (None: any row may); those that do are folded by
    ``loose_texts`` itself.
    """
    arrays = [_as_string_array(column) for column in columns]
    count = len(arrays[0])
    if not count:
        return np.zeros(0, dtype=np.uint64)
    # Each row's fields and one separator after each: the fold leaves separators alone, so
    # every len(arrays)-th separator ends a row.
    if len(arrays) == 1:
        data = _with_separators(*string_buffers(arrays[0]))
    else:
        data = string_buffers(pc.binary_join_element_wise(*arrays, "", SEPARATOR))[1].copy()
    folded = np.frombuffer(_fold_bytes(data), dtype=np.uint8)
    separators = np.flatnonzero(folded == _SEPARATOR_BYTE)[len(arrays) - 1 :: len(arrays)]
    starts = np.zeros(len(separators), dtype=np.int64)
    starts[1:] = separators[:-1] + 1
    keys = _hash_spans(starts, separators - starts, folded)
    if suspects is None:
        suspects = np.arange(count)
    if not len(suspects):
        return keys
    suspected = [array.take(pa.array(suspects, type=pa.int64())) for array in arrays]
    others = np.zeros(len(suspects), dtype=bool)
    for array in suspected:
        others |= pc.match_substring_regex(array, _NOT_BULK_FOLDABLE).to_numpy(zero_copy_only=False)
    python_rows = suspects[others]
    if len(python_rows):
        picked = [array.take(pa.array(python_rows, type=pa.int64())).to_pylist() for array in arrays]
        texts = [SEPARATOR.join(parts) for parts in zip(*(loose_texts(p) for p in picked), strict=True)]
        keys[python_rows] = hash_array(pa.array(texts, type=pa.string()))
    return keys


def _with_separators(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """The strings' bytes with a separator after each, in a new array."""
    rows = len(offsets) - 1
    out = np.empty(len(data) + rows, dtype=np.uint8)
    separators = offsets[1:] + np.arange(rows)
    is_text = np.ones(len(out), dtype=bool)
    is_text[separators] = False
    out[is_text] = data
    out[separators] = _SEPARATOR_BYTE
    return out


def _fold_bytes(data: np.ndarray) -> bytes:
    """The byte-wise fold of UTF-8 text (overwriting ``data``): exact for ASCII and Devanagari.

    Other texts are folded again by the caller in Python; any valid UTF-8 stays valid.
    """
    table, delete, devanagari_deleted, devanagari_ascii = _fold_tables()
    # The Devanagari characters the fold changes are U+0964-U+0970, E0 A5 A4 to E0 A5 B0:
    # find the A5 followed by A4-B0 (a few per text), then check the E0 before it.
    seconds = np.flatnonzero((data[1:-1] == 0xA5) & ((data[2:] - np.uint8(0xA4)) <= np.uint8(0x0C))) + 1
    seconds = seconds[data[seconds - 1] == _DEVANAGARI_LEAD]
    if len(seconds):
        offset = (data[seconds + 1] & 0x3F).astype(np.intp)
        gone = devanagari_deleted[offset]
        replacement = devanagari_ascii[offset]
        digits = replacement >= 0
        leads = seconds - 1
        data[leads[gone]] = _DELETED_MARK
        data[leads[digits]] = replacement[digits].astype(np.uint8)
        changed = leads[gone | digits]
        data[changed + 1] = _DELETED_MARK
        data[changed + 2] = _DELETED_MARK
    return data.tobytes().translate(table, delete)
