"""A snapshot of the shipped task registry, to prove that moving the declarations changes nothing.

:func:`canonical` writes a value so that its type survives JSON (a tuple stays a tuple, a
read-only mapping stays one, in its key order; a dataclass keeps its class), and
:func:`revive` turns it back into the same Python value. The snapshot holds every field of
every shipped task, a few derived properties, each benchmark's header and the order of the
registry's lists; ``tests/data/registry_snapshot.json`` was written from the Python
declarations before the shipped tasks became task files (issue 30, item 4).

Rewrite it only when a declaration is meant to change (a new prompt, a corrected figure):
``PYTHONPATH=src python tests/registry_snapshot.py --write``.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import sys
from pathlib import Path
from types import MappingProxyType
from typing import Any

SNAPSHOT = Path(__file__).resolve().parent / "data" / "registry_snapshot.json"
# Derived properties a consumer reads beside the fields; they must agree too.
PROPERTIES = ("primary_note", "primary_is_paper_defined", "num_labels", "splits", "text_fields", "input_spec")


def canonical(value: Any) -> Any:
    """``value`` as JSON that keeps its Python type (see the module docstring)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        # task_file is where this machine found the declaration (an absolute path), not part of the task
        fields = {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name != "task_file"}
        return {"__class__": f"{cls.__module__}.{cls.__qualname__}", "fields": fields}
    if isinstance(value, MappingProxyType):
        return {"__mappingproxy__": [[canonical(k), canonical(v)] for k, v in value.items()]}
    if isinstance(value, dict):
        return {"__dict__": [[canonical(k), canonical(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"__tuple__": [canonical(v) for v in value]}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    if isinstance(value, float):
        return {"__float__": repr(value)}  # exact, and never confused with an int
    if value is None or isinstance(value, bool | int | str):
        return value
    raise TypeError(f"no canonical form for {type(value).__name__}: {value!r}")


def revive(value: Any) -> Any:
    """The Python value :func:`canonical` wrote."""
    if isinstance(value, list):
        return [revive(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__class__" in value:
        module, _, name = value["__class__"].rpartition(".")
        cls = getattr(importlib.import_module(module), name)
        return cls(**{k: revive(v) for k, v in value["fields"].items()})
    if "__mappingproxy__" in value:
        return MappingProxyType({revive(k): revive(v) for k, v in value["__mappingproxy__"]})
    if "__dict__" in value:
        return {revive(k): revive(v) for k, v in value["__dict__"]}
    if "__tuple__" in value:
        return tuple(revive(v) for v in value["__tuple__"])
    if "__float__" in value:
        return float(value["__float__"])
    raise ValueError(f"unknown canonical form: {sorted(value)}")


def task_snapshot(task: Any, fields: Any = None) -> dict[str, Any]:
    """One task: its class, its fields (all of them, or those named) and the derived properties."""
    names = [f.name for f in dataclasses.fields(task)] if fields is None else fields
    return {
        "class": type(task).__qualname__,
        "fields": {name: canonical(getattr(task, name)) for name in names},
        "properties": {name: canonical(getattr(task, name)) for name in PROPERTIES},
    }


def registry_snapshot(fields_of: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The shipped registry as :func:`canonical` JSON; ``fields_of`` limits each task to the fields named."""
    from nlue.registry.tasks import BENCHMARKS, TASK_NAMES, TASKS, TRAINABLE_TASKS

    return {
        "benchmarks": {
            name: {"title": b.title, "citation": b.citation, "tasks": list(b.task_names)}
            for name, b in BENCHMARKS.items()
        },
        "task_names": list(TASK_NAMES),
        "trainable_tasks": list(TRAINABLE_TASKS),
        "tasks": {
            name: task_snapshot(task, None if fields_of is None else fields_of[name]) for name, task in TASKS.items()
        },
    }


def write_snapshot() -> None:
    SNAPSHOT.write_text(json.dumps(registry_snapshot(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: PYTHONPATH=src python tests/registry_snapshot.py --write")
    write_snapshot()
    print(f"wrote {SNAPSHOT}")
