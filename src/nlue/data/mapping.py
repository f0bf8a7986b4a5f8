"""How a source in another schema maps onto the registry's: columns, labels and categories.

What ``--column-map``, ``--label-map`` and ``--category-map`` say, parsed once and
handed to the row converter.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from nlue.errors import NlueError
from nlue.text.json_records import parse_json, repeated_key

DROP = "drop"
# Commas inside parentheses belong to a name ("Space (sun, moon)"), not between pairs.
_PAIR_SEPARATOR = re.compile(r",(?![^()]*\))")


@dataclass(frozen=True)
class FieldMapping:
    """How a source in another schema maps onto the registry's schema.

    ``columns`` maps a registry field to the source column that holds it; ``labels``
    maps a raw source label (as text) to a registry label name or id, or to ``drop``;
    ``categories`` (GMET) maps a raw category (as text) to one of the paper's 75
    categories, by English name or by number.
    """

    columns: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    categories: Mapping[str, str] = field(default_factory=dict)

    def source_column(self, name: str) -> str:
        return self.columns.get(name, name)


def parse_pairs(text: str, option: str) -> dict[str, str]:
    """Parse ``a=b,c=d`` as given to ``--column-map`` / ``--label-map``.

    A key given twice with two values is refused: keeping either one (the last, as a dict
    would) silently stores every such row under the other's meaning.
    """
    pairs: dict[str, str] = {}
    for chunk in filter(None, (c.strip() for c in text.split(","))):
        key, sep, value = chunk.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise NlueError(f"{option}: expected KEY=VALUE pairs separated by commas, got {chunk!r}")
        _add_pair(pairs, key.strip(), value.strip(), option)
    return pairs


def _add_pair(pairs: dict[str, str], key: str, value: str, option: str, where: str = "") -> None:
    """Add ``key=value`` to ``pairs``; a key already mapped to another value is an error."""
    if key in pairs and pairs[key] != value:
        raise NlueError(
            f"{option}: {where}{key!r} is mapped twice, to {pairs[key]!r} and to {value!r}; map each source value once"
        )
    pairs[key] = value


def parse_category_map(text: str) -> dict[str, str]:
    """Parse ``--category-map``: ``SOURCE=Category`` pairs, or a CSV/JSON file of pairs.

    Pairs are separated by commas outside parentheses, so a category such as
    ``Space (sun, moon)`` can be written as it is. A ``.json`` file holds one object
    ``{"source": "Category", ...}``; a ``.csv`` file two columns, source then category,
    under a header row.
    """
    option = "--category-map"
    path = Path(text.strip())
    if path.suffix.lower() in (".csv", ".json"):
        if not path.is_file():
            raise NlueError(f"{option}: file {path} not found")
        return _category_pairs_from_file(path, option)
    pairs: dict[str, str] = {}
    for chunk in filter(None, (c.strip() for c in _PAIR_SEPARATOR.split(text))):
        key, sep, value = chunk.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise NlueError(f"{option}: expected SOURCE=CATEGORY pairs separated by commas, got {chunk!r}")
        _add_pair(pairs, key.strip(), value.strip(), option)
    return pairs


def _category_pairs_from_file(path: Path, option: str) -> dict[str, str]:
    try:
        if path.suffix.lower() == ".json":
            loaded = parse_json(path.read_text(encoding="utf-8"))
            if not isinstance(loaded, dict):
                raise NlueError(f"{option}: {path} must hold one JSON object of source: category pairs")
            if repeated_key(loaded) is not None:
                raise NlueError(f"{option}: {path} maps {repeated_key(loaded)!r} twice; map each source value once")
            return {str(k).strip(): str(v).strip() for k, v in loaded.items()}
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle))
    except (OSError, ValueError) as exc:  # ValueError: bad UTF-8, bad JSON, nested too deep
        raise NlueError(f"{option}: cannot read {path}: {exc}") from None
    pairs: dict[str, str] = {}
    for number, row in enumerate(rows[1:], start=1):  # the first row is the header
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != 2 or not row[0].strip() or not row[1].strip():
            raise NlueError(f"{option}: {path}, row {number}: expected two columns, source and category, got {row!r}")
        _add_pair(pairs, row[0].strip(), row[1].strip(), option, f"{path}, row {number}: ")
    return pairs
