"""One JSON value of a source read strictly: repeated keys, deep nesting and lone surrogates are refused.

Python's ``json`` accepts three things no source row means:

* an object that names a key twice (``{"label": "positive", "label": "negative"}``):
  the last value wins, silently, and the row's label is a guess;
* nesting as deep as the interpreter's stack allows, then a ``RecursionError`` (a text
  field holding ``[[[[...]]]]`` 100,000 deep); a row is an object whose fields hold text,
  numbers, or short lists and objects of them (GMET answers, exam options, sources), so
  more than :data:`MAX_DEPTH` levels is never data;
* a ``\\uD800``-``\\uDFFF`` escape that is not half of a pair: it decodes to a lone
  surrogate, which is not a character, cannot be written as UTF-8, and would fail far
  from its row (in a Parquet writer or the rejects file).

:func:`parse_json` parses a value; :func:`record_problem` tells what is wrong with a
parsed record, naming the field. The readers of :mod:`nlue.data.sources` turn that into a
:class:`~nlue.errors.RowProblem` naming file and row.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 32
_SURROGATE = re.compile("[\ud800-\udfff]")
# Characters that surrogateescape decoding gives for bytes that are not UTF-8.
_UNDECODABLE_BYTE = re.compile("[\udc80-\udcff]")


class _RepeatedKeys(dict):
    """An object whose source named a key twice: the keys repeated, in order of their second use."""

    repeated: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    record = dict(pairs)
    if len(record) == len(pairs):
        return record
    seen: set[str] = set()
    repeated = [key for key, _ in pairs if key in seen or seen.add(key)]
    marked = _RepeatedKeys(record)
    marked.repeated = tuple(dict.fromkeys(repeated))
    return marked


# Built once: json.loads with a hook builds a new decoder per call (twice the cost per line).
_DECODER = json.JSONDecoder(object_pairs_hook=_object)


class TooDeep(ValueError):
    """A JSON value nested deeper than the interpreter can parse; ``field``: the top-level key it is under."""

    def __init__(self, field: str) -> None:
        super().__init__(f"nested too deep to read; more than {MAX_DEPTH} levels is never a row's data")
        self.field = field


def parse_json(text: str) -> Any:
    """The value of ``text``: ``json.JSONDecodeError`` for bad JSON, :class:`TooDeep` for one nested too deep.

    Objects that repeat a key come back marked; :func:`record_problem` finds them.
    """
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise TooDeep(_deep_field(text)) from None


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:]')


def _deep_field(text: str) -> str:
    """The top-level key under which ``text`` nests past :data:`MAX_DEPTH` ("(row)" when none is), found
    by a scan of its brackets and strings that needs no stack (the parser's ran out)."""
    depth, key, last = 0, "(row)", ""
    for token in _TOKEN.finditer(text):
        found = token.group()
        if found in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return key
        elif found in "]}":
            depth -= 1
        elif found == ":" and depth == 1 and last.startswith('"'):
            try:
                key = str(json.loads(last))
            except ValueError:
                key = last
        last = found
    return key


def _string_problem(text: str, undecodable_bytes: bool) -> str | None:
    found = _SURROGATE.search(text)
    if found is None:
        return None
    if undecodable_bytes and _UNDECODABLE_BYTE.match(found.group()):
        byte = ord(found.group()) - 0xDC00
        return f"not valid UTF-8 (byte 0x{byte:02x} at character {found.start()}); save the file as UTF-8"
    return (
        f"holds a lone surrogate U+{ord(found.group()):04X} at character {found.start()} (a \\u escape of half "
        "a UTF-16 pair, which is no character); write the character itself, or both halves of its pair"
    )


def _value_problem(value: Any, strings: bool, undecodable_bytes: bool) -> str | None:
    """What is wrong with one field's value (walked without recursion: it may be deep), or None."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            problem = _string_problem(item, undecodable_bytes) if strings else None
            if problem:
                return problem
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > MAX_DEPTH:
            return f"nested more than {MAX_DEPTH} levels deep; a field holds text, a number, or a short list of them"
        if isinstance(item, _RepeatedKeys):
            return f"an object in this field names the key {item.repeated[0]!r} twice; name each key once"
        if isinstance(item, dict):
            stack.extend((key, depth) for key in item)
            stack.extend((child, depth + 1) for child in item.values())
        else:
            stack.extend((child, depth + 1) for child in item)
    return None


def repeated_key(value: Any) -> str | None:
    """The first key an object parsed by :func:`parse_json` names twice; None for any other value."""
    return value.repeated[0] if isinstance(value, _RepeatedKeys) else None


def record_problem(record: dict[str, Any], strings: bool, undecodable_bytes: bool = False) -> tuple[str, str] | None:
    """``(field, reason)`` for the first thing wrong with a parsed record, or None.

    ``strings``: check every text for lone surrogates (the caller knows whether its file
    can hold any: a ``\\uD8..``-``\\uDF..`` escape, or bytes that are not UTF-8, which
    ``undecodable_bytes`` says were decoded with surrogateescape).
    """
    if isinstance(record, _RepeatedKeys):
        key = record.repeated[0]
        return key, (
            f"the key {key!r} appears twice in this object; a JSON object names each field once "
            "(which value is meant cannot be told)"
        )
    for field, value in record.items():
        if strings and isinstance(field, str):
            problem = _string_problem(field, undecodable_bytes)
            if problem:
                return "(header)", f"a key {problem}"
        if type(value) is str and not strings:
            continue
        problem = _value_problem(value, strings, undecodable_bytes)
        if problem:
            return str(field), problem
    return None
