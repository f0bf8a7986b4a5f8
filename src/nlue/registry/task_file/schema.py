"""The published JSON Schema of task files, and every schema problem of a file in words.

``task_file.schema.json`` ships with the package (and is the reference page's source);
:func:`schema_problems` checks a file's content against it with the ``jsonschema``
library and says, for each problem, the key path and what was expected there.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nlue.registry.task_file.problems import Path_

SCHEMA_PATH = Path(__file__).with_name("task_file.schema.json")
_JSON_TYPES = {dict: "a mapping", list: "a list", str: "text", bool: "true or false", int: "a whole number",
               float: "a number", type(None): "nothing (null)"}  # fmt: skip
_EXPECTED_TYPES = {"object": "a mapping (key: value lines)", "array": "a list", "string": "text", "integer":
                   "a whole number", "number": "a number", "boolean": "true or false", "null": "null"}  # fmt: skip


@functools.cache
def task_file_schema() -> dict[str, Any]:
    """The schema, as shipped."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@functools.cache
def _validator() -> Any:
    import jsonschema

    schema = task_file_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def json_form(value: Any) -> Any:
    """A YAML value as JSON would hold it: mapping keys as text (``9:`` is the key ``"9"``)."""
    if isinstance(value, dict):
        return {str(k): json_form(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_form(v) for v in value]
    return value


def _type_name(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _described(schema: dict[str, Any]) -> str:
    return f" ({schema['description']})" if isinstance(schema, dict) and schema.get("description") else ""


def _leaves(error: Any) -> Iterator[Any]:
    """The errors that say what is wrong, not that a branch failed (if/then/else keeps its branch's errors)."""
    if error.context:
        for child in error.context:
            yield from _leaves(child)
    else:
        yield error


def _message(error: Any) -> tuple[Path_, str]:
    """An error's key path and what was expected there, in words."""
    path: Path_ = tuple(error.absolute_path)
    keyword, value, schema = error.validator, error.instance, error.schema
    if "propertyNames" in error.absolute_schema_path:  # a key that is not allowed here: the path names it
        allowed = schema.get("enum") or []
        expected = f"one of: {', '.join(allowed)}" if allowed else schema.get("description", "a valid key")
        return (*path, str(value)), f"not a key this mapping takes; expected {expected}"
    if keyword == "required":
        missing = next((name for name in error.validator_value if name not in value), "?")
        sub = schema.get("properties", {}).get(missing, {})
        return (*path, missing), f"missing; expected {missing}{_described(sub)}"
    if keyword == "additionalProperties":
        known = sorted(schema.get("properties", {}))
        extra = sorted(k for k in value if k not in known)
        name = extra[0] if extra else "?"
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return (*path, name), f"unknown key; {hint}expected one of: {', '.join(known)}" if known else "unknown key"
    if keyword == "propertyNames":
        return path, f"{_shown(value)}: a key here must be {_expected_of(error.validator_value)}"
    if keyword == "type":
        types = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        wanted = " or ".join(_EXPECTED_TYPES.get(t, t) for t in types)
        hint = "; put quotes around it" if "string" in types and isinstance(value, int | float | bool) else ""
        return path, f"expected {wanted}{_described(schema)}, got {_type_name(value)} {_shown(value)}{hint}"
    if keyword in ("enum", "const"):
        allowed = error.validator_value if keyword == "enum" else [error.validator_value]
        return path, f"got {_shown(value)}; expected one of: {', '.join(map(str, allowed))}"
    if keyword == "pattern":
        return (
            path,
            f"got {_shown(value)}; expected {schema.get('description', 'text matching ' + error.validator_value)}",
        )
    if keyword in ("minItems", "maxItems", "minProperties", "maxProperties", "minLength", "maxLength"):
        bound = "at least" if keyword.startswith("min") else "at most"
        unit = "characters" if keyword.endswith("Length") else "entries"
        return path, f"expected {bound} {error.validator_value} {unit}{_described(schema)}, got {len(value)}"
    if keyword in ("minimum", "maximum"):
        bound = "at least" if keyword == "minimum" else "at most"
        return path, f"got {_shown(value)}; expected a number {bound} {error.validator_value}"
    if keyword == "uniqueItems":
        return path, f"{_shown(value)} repeats an entry; expected each once"
    return path, f"{error.message}{_described(schema)}"


def _expected_of(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of: " + ", ".join(schema["enum"])
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return task_file_schema()["$defs"][name].get("description", name)
    return schema.get("description", "valid")


def schema_problems(data: Any) -> list[tuple[Path_, str]]:
    """Every place ``data`` departs from the schema: (key path, what was expected), each once."""
    found: dict[tuple[Path_, str], None] = {}
    for error in _validator().iter_errors(json_form(data)):
        for leaf in _leaves(error):
            found.setdefault(_message(leaf), None)
    return list(found)
