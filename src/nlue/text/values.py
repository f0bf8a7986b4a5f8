"""The text form of a value that a typed source (JSON, JSONL, Parquet) put in a text field.

Below the registry, so that a kind (:mod:`nlue.registry.kinds`) and the builder's readers
(:mod:`nlue.data.sources`) read a value as text by one rule.
"""

from __future__ import annotations

import json
import math
from typing import Any


class NotText(ValueError):
    """A value in a text field that has no text form: what was found, and the value as shown."""

    def __init__(self, reason: str, shown: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.shown = shown


def source_text(value: Any) -> str:
    """The text of a non-string value that a typed source (JSON, JSONL, Parquet) put in a text field.

    * An integer or a finite float is taken as its text (``2080`` -> ``"2080"``, ``2.5`` ->
      ``"2.5"``, Python's shortest round-trip form). A sentence is never a number, but a
      search query, a model number or a year given as an answer option can be, and a JSON or
      Parquet writer then types the whole column as numbers; the digits are the text.
    * A boolean, NaN or an infinity raises :class:`NotText`: none is anyone's text. ``true``
      in a text field means the wrong column was mapped, and NaN is how pandas writes an
      empty cell of a number column, whose text ("nan") would enter the data as a sentence.
    * A list, an object (dict), bytes or any other type raises :class:`NotText`, naming what
      was found: storing its Python repr (``"['a']"``) would put brackets and quotes into
      the data. The value is shown as JSON, as the source wrote it.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    if isinstance(value, bool):
        found = "a boolean"
    elif isinstance(value, float):
        found = "NaN" if math.isnan(value) else "an infinite number"
    elif isinstance(value, (list, tuple)):
        found = "a list"
    elif isinstance(value, dict):
        found = "an object"
    elif isinstance(value, (bytes, bytearray)):
        found = "bytes"
    else:
        found = f"a value of type {type(value).__name__}"
    try:
        shown = json.dumps(value, ensure_ascii=False)  # true, ["a"], {"k": 1}
    except (TypeError, ValueError):
        shown = repr(value)
    raise NotText(f"expected text (a string, or a number used as text), found {found}", shown)
