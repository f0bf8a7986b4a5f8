"""MkDocs hooks: the reference pages are written from the code at build time, never by hand.

A page holds a marker such as ``<!-- generated: cli -->`` where the generated part goes:

* ``tasks``: the task registry (``nlue.registry``), one section per task;
* ``cli``: every ``nlue`` sub-command's options, read from the argparse parser the command itself
  parses with (``HfArgumentParser`` for ``train`` and ``search``);
* ``results-schema``: the fields of the results file (``nlue.results.RunResult``), with their types,
  defaults and the comments beside them in the source;
* ``space-tabs``: the Space's tabs in the order the page shows them (``nlue.space.ui``);
* ``task-file-schema``: every key of a task file, from the published JSON Schema
  (``nlue/registry/task_file/task_file.schema.json``), and the schema itself.
* ``language-profiles``: each shipped language profile's rules, as the dataset card prints them
  (``nlue.text.profiles``); ``language-profile-fields``: the fields of a profile declaration.

``CONTRIBUTING.md`` at the repository root is published as the page ``contributing.md``, its links
into ``docs/`` rewritten to the site's. This file is loaded by MkDocs by path (``hooks:`` in
``mkdocs.yml``); ``docs/`` is no Python package.
"""

from __future__ import annotations

import argparse
import ast
import html
import importlib
import inspect
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"<!-- generated: ([a-z-]+) -->")


def _use_this_checkout() -> None:
    """Import nlue from this checkout's src/, whatever is installed (the docs describe this code)."""
    src = str(ROOT / "src")
    if sys.path[:1] != [src]:
        sys.path.insert(0, src)


def _cell(text: Any) -> str:
    """Text safe inside a Markdown table cell: no HTML, no pipes, no stray emphasis, one line."""
    return (
        html.escape(" ".join(str(text).split()), quote=False)
        .replace("|", "\\|")
        .replace("*", "\\*")
        .replace("_", "\\_")
    )


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


# --- the command line ---------------------------------------------------------------------------


class _Captured(BaseException):  # a signal, not an error: BaseException, so that no handler swallows it
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def _parser_of(call: Any) -> argparse.ArgumentParser:
    """The parser ``call()`` parses its arguments with: stopped at its first parse, nothing run."""
    original = argparse.ArgumentParser.parse_known_args

    def capture(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Captured(self)

    argparse.ArgumentParser.parse_known_args = capture  # type: ignore[method-assign]
    try:
        call()
    except _Captured as captured:
        return captured.parser
    finally:
        argparse.ArgumentParser.parse_known_args = original  # type: ignore[method-assign]
    raise RuntimeError(f"{call!r} parsed no arguments")


def _default(action: argparse.Action) -> str:
    if action.default in (None, argparse.SUPPRESS, False) or action.nargs == 0:
        return ""
    if isinstance(action.default, list | tuple):
        return " ".join(map(str, action.default))
    return str(action.default)


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    if not action.help:
        return ""
    return argparse.HelpFormatter(parser.prog)._expand_help(action)


def _own_options(parser: argparse.ArgumentParser) -> set[str] | None:
    """For an HfArgumentParser: the destinations nlue declares (transformers' own TrainingArguments are left out)."""
    types = getattr(parser, "dataclass_types", None)
    if not types:
        return None
    from transformers import TrainingArguments

    inherited = {f for f in TrainingArguments.__dataclass_fields__}
    own: set[str] = set()
    for kind in types:
        declared = set(inspect.get_annotations(kind))
        own |= declared if issubclass(kind, TrainingArguments) else set(kind.__dataclass_fields__) - inherited
    return own


def _render_parser(parser: argparse.ArgumentParser, title: str, level: int) -> list[str]:
    out = [f"{'#' * level} {title}", ""]
    if parser.description:
        out += [html.escape(" ".join(parser.description.split())), ""]
    own = _own_options(parser)
    if own is None:  # an HfArgumentParser's usage lists every TrainingArguments option: the table says enough
        out += ["```text", parser.format_usage().strip(), "```", ""]
    else:
        out += [f"Options on the command line, or one JSON/YAML file of them: `{parser.prog} ARGS.yaml`.", ""]
    children: list[tuple[str, argparse.ArgumentParser]] = []
    hidden = 0
    for group in parser._action_groups:
        rows = []
        for action in group._group_actions:
            if isinstance(action, argparse._SubParsersAction):
                children += [(name, sub) for name, sub in action.choices.items() if sub not in dict(children).values()]
                continue
            if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
                continue
            if own is not None and action.dest not in own and action.dest not in ("verbose", "quiet"):
                hidden += 1
                continue
            name = ", ".join(action.option_strings) or action.metavar or action.dest
            rows.append(f"| {_code(str(name))} | {_cell(_default(action))} | {_cell(_help(parser, action))} |")
        if rows:
            out += [f"*{group.title}*", "", "| option | default | what it does |", "|---|---|---|", *rows, ""]
    if hidden:
        out += [
            f"And {hidden} more options of `transformers.TrainingArguments` with transformers' own defaults "
            "(`--help` lists them all).",
            "",
        ]
    if parser.epilog:
        out += ["```text", parser.epilog.strip("\n"), "```", ""]
    for name, child in children:
        out += _render_parser(child, f"{title} {name}", min(level + 1, 4))
    return out


def cli_reference() -> str:
    """Every sub-command of ``nlue``, from the parser it runs with."""
    _use_this_checkout()
    from nlue import cli
    from nlue.training.cli import train_main
    from nlue.training.search import search_main
    from nlue.translate import review_cli

    top = cli.build_parser()
    out = _render_parser(top, "nlue", 2)[:8]  # heading, description and usage; sub-commands follow one by one
    out += ["Every option answers to its kebab and its snake spelling (`--results-dir`, `--results_dir`).", ""]
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in sub.choices.items():
        if name in cli.HF_ARGUMENT_COMMANDS:
            main = {"train": train_main, "search": search_main}[name]
            parser = _parser_of(lambda main=main: main([]))
        elif name in cli.OWN_PARSER_COMMANDS:
            parser = importlib.import_module(cli.OWN_PARSER_COMMANDS[name]).build_parser()
        out += _render_parser(parser, f"nlue {name}", 2)
        if name == "translate":  # the quality loop parses with a parser of its own
            review = review_cli.build_parser()
            for action in review._actions:
                if isinstance(action, argparse._SubParsersAction):
                    for step, child in action.choices.items():
                        out += _render_parser(child, f"nlue translate {step}", 3)
    return "\n".join(out)


# --- the task registry ----------------------------------------------------------------------------


def tasks_reference() -> str:
    _use_this_checkout()
    from nlue.registry.benchmarks import BENCHMARKS
    from nlue.registry.views import readme_tasks_table

    table = readme_tasks_table().split("\n")[1:-1]  # without the README's markers
    out = ["## All tasks", "", *table, ""]
    for benchmark in BENCHMARKS.values():
        out += [f"## {benchmark.title}", ""]
        for task in benchmark.tasks:
            out += [f"### `{task.name}`: {html.escape(task.title)}", ""]
            rows = [
                ("benchmark", benchmark.name),
                ("category", task.category),
                ("kind", task.problem_type),
                ("inputs", ", ".join(task.input_fields)),
                ("labels (id order)", ", ".join(task.label_names) or "-"),
                ("metrics", ", ".join(task.metrics)),
                ("primary metric", task.primary_metric),
                ("why this primary", task.primary_note),
                ("paper sizes (train / test)", f"{task.paper_train_size or '-'} / {task.paper_test_size or '-'}"),
                ("domains", ", ".join(task.domains)),
                ("sources", "; ".join(task.sources)),
                ("label notes", task.label_notes),
            ]
            out += ["| field | value |", "|---|---|", *[f"| {k} | {_cell(v)} |" for k, v in rows if v], ""]
            if task.paper_flags:
                out += ['!!! warning "The paper\'s cells flagged for this task (kept as printed)"', ""]
                out += [f"    - {line}" for line in _flag_lines(task)] + [""]
    return "\n".join(out)


def _flag_lines(task: Any) -> list[str]:
    return [
        f"**{html.escape(model)}** ({', '.join(flag.cells)}): {html.escape(' '.join(flag.explanation.split()))}"
        for model, flags in task.paper_flags.items()
        for flag in flags
    ]


def paper_flags_reference() -> str:
    """Every flagged cell of every paper's tables, task by task (``TaskSpec.paper_flags``)."""
    _use_this_checkout()
    from nlue.registry.benchmarks import TASKS

    out = []
    for task in TASKS.values():
        if task.paper_flags:
            out += [f"- `{task.name}`", *[f"    - {line}" for line in _flag_lines(task)]]
    return "\n".join(out)


# --- the task file -------------------------------------------------------------------------------

_SCHEMA_SECTIONS = (
    ("task", "A task", ()),
    ("task", "`inputs`", ("inputs",)),
    ("prompt", "`prompts.<language>`", ()),
    ("answer_line", "`prompts.<language>.answer_line`", ()),
    ("number_line", "`prompts.<language>.number_line`", ()),
    ("wording", "`prompts.<language>.wordings` (each item)", ()),
    ("exam", "`exam` (multiple choice)", ()),
    ("split_source", "`data.<split>`", ()),
    ("task", "`sizes`", ("sizes",)),
    ("benchmark_file", "A benchmark file", ()),
    ("benchmark_file", "`benchmark` (a benchmark file's header)", ("benchmark",)),
)


def _schema_value(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    """What a key takes, in words: its type, allowed values or pattern."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        target = defs[name]
        words = {"task": "a task (mapping)", "prompt": "a prompt (mapping)", "exam": "a mapping (see `exam`)",
                 "split_source": "a source (see `data.<split>`)", "wording": "a wording (mapping)",
                 "answer_line": "a mapping (see `answer_line`)", "number_line": "a mapping (see `number_line`)"}.get(name)  # fmt: skip
        return words or _schema_value({**target, **{k: v for k, v in schema.items() if k != "$ref"}}, defs)
    if "enum" in schema:
        return "one of " + ", ".join(str(v) for v in schema["enum"])
    if "if" in schema:
        return f"{_schema_value(schema['then'], defs)}, or {_schema_value(schema['else'], defs)}"
    if "const" in schema:
        return str(schema["const"])
    kind = schema.get("type", "")
    kinds = kind if isinstance(kind, list) else [kind]
    if "array" in kinds:
        items = schema.get("items", {})
        return f"a list of {_schema_value(items, defs)}" if items else "a list"
    if "object" in kinds and "additionalProperties" in schema and not schema.get("properties"):
        return f"a mapping to {_schema_value(schema['additionalProperties'], defs)}"
    words = {"string": "text", "integer": "a whole number", "number": "a number", "boolean": "true or false",
             "object": "a mapping", "null": "null"}  # fmt: skip
    return " or ".join(words.get(k, k) for k in kinds if k) or "text"


def task_file_schema_reference() -> str:
    """Every key of a task file, table by table, from the shipped JSON Schema (so the page cannot drift)."""
    _use_this_checkout()
    from nlue.registry.task_file.schema import SCHEMA_PATH, task_file_schema

    schema = task_file_schema()
    defs = schema["$defs"]
    out: list[str] = []
    for name, title, within in _SCHEMA_SECTIONS:
        node = defs[name]
        for key in within:
            node = node["properties"][key]
        required = set(node.get("required", ()))
        out += [f"### {title}", ""]
        if node.get("description"):
            out += [html.escape(node["description"]), ""]
        out += ["| key | required | value | meaning |", "|---|---|---|---|"]
        for key, sub in node.get("properties", {}).items():
            description = sub.get("description") or defs.get(sub.get("$ref", "").rsplit("/", 1)[-1], {}).get(
                "description", ""
            )
            out.append(
                f"| `{key}` | {'yes' if key in required else ''} | {_cell(_schema_value(sub, defs))} "
                f"| {_cell(description)} |"
            )
        out.append("")
    text = SCHEMA_PATH.read_text(encoding="utf-8").rstrip()
    out += ["### The schema", "", f"`{SCHEMA_PATH.name}`, as shipped in the package:", "",
            '??? note "task_file.schema.json"', "", "    ```json",
            *(f"    {line}" for line in text.splitlines()), "    ```", ""]  # fmt: skip
    return "\n".join(out)


# --- the results file -----------------------------------------------------------------------------


def results_reference() -> str:
    _use_this_checkout()
    from nlue import results

    source = Path(results.__file__).read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "RunResult")
    rows = []
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            default = ""
            if node.value is not None:
                default = ast.unparse(node.value)
                factory = re.match(r"field\(default_factory=(.*)\)$", default)
                default = f"made by {factory.group(1)}" if factory else default
            comments = [lines[node.lineno - 1].partition("  # ")[2]]
            above = node.lineno - 2
            while lines[above].strip().startswith("#"):  # a comment on the lines above the field
                comments.insert(0, lines[above].strip().lstrip("# "))
                above -= 1
            default = f"`{default}`" if default and not default.startswith("made by") else default
            rows.append(
                f"| `{node.target.id}` | `{ast.unparse(node.annotation)}` | {default or 'required'} "
                f"| {_cell(' '.join(c for c in comments if c))} |"
            )
    return "\n".join(
        [
            f"Schema version **{results.SCHEMA_VERSION}** (`schema_version`; a reader skips files of another version).",
            "",
            "| field | type | default | meaning |",
            "|---|---|---|---|",
            *rows,
            "",
            "`nlue submit` requires these fields in every file: "
            + ", ".join(f"`{f}`" for f in _submission_required())
            + ".",
        ]
    )


def _submission_required() -> tuple[str, ...]:
    from nlue.evals.submit.submission import REQUIRED

    return REQUIRED


# --- the Space's tabs -----------------------------------------------------------------------------


def space_tabs() -> list[str]:
    """The tab labels of the Space, in the order ``nlue.space.ui`` creates them (read, not imported: no gradio)."""
    source = (ROOT / "src" / "nlue" / "space" / "ui.py").read_text(encoding="utf-8")
    return re.findall(r'gr\.Tab\("([^"]+)"', source)


def space_tabs_reference() -> str:
    return "\n".join(f"{number}. **{label}**" for number, label in enumerate(space_tabs(), start=1))


def room_imports_reference() -> str:
    """Each room, lowest first, and the rooms its modules import, from the import statements (the rooms and the
    graph ``tests/test_layout.py`` checks: every room named is at or below the importer's)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.test_layout import LEVEL, import_graph, room_of

    edges: dict[str, set[str]] = {}
    for name, targets in import_graph().items():
        edges.setdefault(room_of(name), set()).update(room_of(t) for t in targets if room_of(t) != room_of(name))
    order = sorted(edges, key=lambda room: (LEVEL[room], room))
    rows = [f"| {LEVEL[r]} | `{r}` | {', '.join(f'`{t}`' for t in sorted(edges[r], key=lambda t: (LEVEL[t], t)))} |"
            for r in order]  # fmt: skip
    return "\n".join(["| # | room | imports from |", "|---|---|---|", *rows])


def language_profiles_reference() -> str:
    """Each shipped profile: its one-line summary and its rules, from the declarations the builder runs."""
    _use_this_checkout()
    from nlue.text.profiles import NEPALI, PLAIN, URDU

    out = []
    for profile in (NEPALI, URDU, PLAIN):
        out += [f"### `{profile.name}`", "", profile.summary, "", profile.rules, ""]
    return "\n".join(out)


def language_profile_fields_reference() -> str:
    """The fields of a profile declaration, with the help text the dataclass carries."""
    _use_this_checkout()
    import dataclasses

    from nlue.text.rules import LanguageProfile

    rows = []
    for item in dataclasses.fields(LanguageProfile):
        if item.default is not dataclasses.MISSING:
            default = f"`{item.default!r}`"
        elif item.default_factory is not dataclasses.MISSING:
            default = "empty"
        else:
            default = "required"
        rows.append(f"| `{item.name}` | {default} | {_cell(item.metadata.get('help', ''))} |")
    return "\n".join(["| field | default | what it declares |", "|---|---|---|", *rows])


GENERATORS = {
    "cli": cli_reference,
    "tasks": tasks_reference,
    "results-schema": results_reference,
    "space-tabs": space_tabs_reference,
    "task-file-schema": task_file_schema_reference,
    "paper-flags": paper_flags_reference,
    "room-imports": room_imports_reference,
    "language-profiles": language_profiles_reference,
    "language-profile-fields": language_profile_fields_reference,
}


# --- MkDocs events --------------------------------------------------------------------------------


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    text = re.sub(r"\]\(docs/([^)]*)\)", r"](\1)", text)  # links into the site
    text = re.sub(r"\[([^\]]*)\]\((?!https?:|#)([^)]*)\)", _repo_link, text)  # files of the repository
    files.append(File.generated(config, "contributing.md", content=text))
    return files


def _repo_link(match: re.Match[str]) -> str:
    """A link to a page of the site stays; one to a file of the repository becomes its path in code."""
    text, target = match.groups()
    if (ROOT / "docs" / target.partition("#")[0]).is_file():
        return match.group(0)
    return text if text.strip("`") == target else f"{text} (`{target}`)"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return MARKER.sub(lambda m: GENERATORS[m.group(1)](), markdown)
