"""A task file read safely: bounded in size and depth, YAML's safe types only, the line of every key.

``yaml.safe_load`` alone would take a repeated key silently (the last one wins), expand
anchors and aliases (a few lines can stand for millions of nodes) and turn ``2024-01-01``
into a date. Here the file is composed into nodes first and walked once: a repeated key,
an anchor or alias, a tag, nesting past :data:`MAX_DEPTH` or more than :data:`MAX_NODES`
nodes is a problem with its line; scalars get the safe loader's types except dates, which
stay text. A syntax error names its line and column.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nlue.registry.task_file.problems import Path_, Problem

MAX_BYTES = 1024 * 1024  # a task file declares, it does not hold data
MAX_DEPTH = 16
MAX_NODES = 100_000


class _Loader(yaml.SafeLoader):
    """The safe loader without the timestamp rule: a date in a task file is text, never a datetime."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_SAFE_TAGS = {f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "map", "seq")}


@dataclass
class ReadFile:
    """A task file's content (None when unreadable), the line of each key path, and what was wrong."""

    path: Path
    data: Any = None
    lines: dict[Path_, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def problem(self, path: Path_, message: str) -> Problem:
        """A problem at ``path``, on the line of the nearest key that has one."""
        for cut in range(len(path), -1, -1):
            if path[:cut] in self.lines:
                return Problem(str(self.path), path, message, self.lines[path[:cut]])
        return Problem(str(self.path), path, message)


def read_task_file(path: Path) -> ReadFile:
    """The file at ``path`` parsed, or its problems (never an exception for the file's content)."""
    read = ReadFile(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            read.problems.append(Problem(str(path), (), "expected a task file (.yaml); this is not a file"))
            return read
        if size > MAX_BYTES:
            read.problems.append(Problem(str(path), (), f"file of {size} bytes; a task file holds at most {MAX_BYTES}"))
            return read
        raw = path.read_bytes()
    except OSError as exc:
        read.problems.append(Problem(str(path), (), f"cannot be read: {exc.strerror or exc}"))
        return read
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        read.problems.append(Problem(str(path), (), f"expected UTF-8 text; byte {exc.start} is not"))
        return read
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        where = f" (column {mark.column + 1})" if mark else ""
        read.problems.append(Problem(str(path), (), f"YAML syntax: {exc.problem or exc.context}{where}", line))
        return read
    except yaml.YAMLError as exc:
        read.problems.append(Problem(str(path), (), f"YAML syntax: {exc}"))
        return read
    if node is None:
        read.problems.append(Problem(str(path), (), "the file is empty; expected a mapping of keys (name, kind, ...)"))
        return read
    walker = _Walker(read, _Loader(""))
    read.data = walker.value(node, (), 0)
    return read


class _Walker:
    """Builds the value of a node tree, noting lines and problems on the way."""

    def __init__(self, read: ReadFile, loader: _Loader) -> None:
        self.read = read
        self.loader = loader
        self.nodes = 0
        self.seen: set[int] = set()  # an alias is the node of its anchor met again

    def _fail(self, node: yaml.Node, path: Path_, message: str) -> None:
        line = self.read.lines.get(path, node.start_mark.line + 1)  # the key's line (an alias's node is elsewhere)
        self.read.problems.append(Problem(str(self.read.path), path, message, line))

    def value(self, node: yaml.Node, path: Path_, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            if self.nodes == MAX_NODES + 1:
                self._fail(node, path, f"more than {MAX_NODES} values; a task file declares, it does not hold data")
            return None
        if depth > MAX_DEPTH:
            self._fail(node, path, f"nested more than {MAX_DEPTH} levels deep")
            return None
        self.read.lines.setdefault(path, node.start_mark.line + 1)
        if id(node) in self.seen:
            self._fail(node, path, "aliases (*name) are not allowed; write the value out")
            return None
        self.seen.add(id(node))
        if node.tag not in _SAFE_TAGS:
            self._fail(node, path, f"the tag {node.tag!r} is not allowed; plain YAML values only")
            return None
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path, depth)
        if isinstance(node, yaml.SequenceNode):
            return [self.value(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
        return self.loader.construct_object(node)

    def _mapping(self, node: yaml.MappingNode, path: Path_, depth: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for key_node, value_node in _pairs(node):
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag not in _SAFE_TAGS:
                self._fail(key_node, path, "a key must be plain text or a number")
                continue
            key = self.loader.construct_object(key_node)
            child = (*path, key if isinstance(key, str) else str(key))
            if key in out:
                first, line = self.read.lines.get(child), key_node.start_mark.line + 1
                message = f"the key is given twice (first on line {first}); give it once"
                self.read.problems.append(Problem(str(self.read.path), child, message, line))
                continue
            self.read.lines[child] = key_node.start_mark.line + 1
            out[key] = self.value(value_node, child, depth + 1)
        return out


def _pairs(node: yaml.MappingNode) -> Iterator[tuple[yaml.Node, yaml.Node]]:
    yield from node.value
