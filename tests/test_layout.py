"""The package's shape: its rooms in order, no import circle, and no module past a few hundred lines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
MAX_LINES = 420  # "about 400": a module past it holds more than one job

# The rooms of ``src/nlue``, lowest first (docs/architecture.md says what each holds). A module is in the room of
# the longest prefix that names it. A module may import its own room and any room below it, never one above:
# so the registry loads without the builder, a results file is read without the model layer's backends, and
# the boards serve the report and the Space alike without either importing the other.
ROOMS: tuple[tuple[str, ...], ...] = (
    ("nlue.errors", "nlue.version", "nlue.cache_root", "nlue.strict_json", "nlue.atomic_files", "nlue.text_table",
     "nlue.text", "nlue.process_map", "nlue.corpus_blocks"),  # leaf
    ("nlue.scoring",),  # metric maths; no task
    ("nlue.registry",),  # benchmarks -> tasks -> kinds; the task files
    ("nlue.data", "nlue.scores"),  # the builder; scores of registered tasks
    ("nlue.lm",),  # the model layer
    ("nlue.results", "nlue.results_files", "nlue.results_folders", "nlue.results_tasks", "nlue.predictions",
     "nlue.run_identity", "nlue.cli_support", "nlue.cli_lists"),  # results and predictions; the commands' backbone
    ("nlue.training",),
    ("nlue.evals", "nlue.gmet", "nlue.idioms", "nlue.pipelines", "nlue.translate"),  # protocols, making data
    ("nlue.boards",),  # tables and figures from results, for the report and the Space
    ("nlue.evals.report", "nlue.space"),  # what shows results
    ("nlue", "nlue.cli", "nlue.build_cli", "nlue.publish_cli", "nlue.quickstart", "nlue.tasks", "nlue.tasks_cli",
     "nlue.evals.sweep"),  # the command line, and the sweep that runs its commands
)  # fmt: skip
LEVEL = {prefix: level for level, prefixes in enumerate(ROOMS) for prefix in prefixes}


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def _imports(tree: ast.AST, modules: dict[str, Path]) -> set[str]:
    """Every nlue module a file imports: module level, inside a function or under ``TYPE_CHECKING`` alike (a
    type-only import is still a dependency, and a circle through one only waits for a runtime import).

    ``from package import submodule`` counts as importing the submodule.
    """
    targets = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & modules.keys()
            targets.update(submodules or {node.module})
    return {t for t in targets if t in modules}


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {
        name: _imports(ast.parse(path.read_text(encoding="utf-8")), modules) - {name} for name, path in modules.items()
    }


def room_of(module: str) -> str:
    """The longest prefix of :data:`ROOMS` that names ``module`` (the package itself is ``nlue``)."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in LEVEL:
            return prefix
    raise AssertionError(f"{module} is in no room of ROOMS: add its room")


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """``a -> b`` for each import of a module in a higher room than the importer's."""
    return sorted(
        f"{name} ({room_of(name)}) -> {target} ({room_of(target)})"
        for name, targets in graph.items()
        for target in targets
        if LEVEL[room_of(target)] > LEVEL[room_of(name)]
    )


def import_cycles(graph: dict[str, set[str]] | None = None) -> list[list[str]]:
    graph = import_graph() if graph is None else graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return cycles


def test_no_import_circles() -> None:
    assert import_cycles() == []


def test_no_import_from_a_lower_room_into_a_higher_one() -> None:
    assert upward_imports(import_graph()) == []


def test_the_layout_rules_catch_what_they_should() -> None:
    """A type-only import closes a circle; an import inside a function or under TYPE_CHECKING counts as upward."""
    modules = {name: Path() for name in ("nlue.registry.spec", "nlue.data.report", "nlue.space.ui")}
    typed = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from nlue.data.report import X\n")
    lazy = ast.parse("def f():\n    from nlue.space import ui\n")
    graph = {"nlue.registry.spec": _imports(typed, modules), "nlue.data.report": {"nlue.registry.spec"},
             "nlue.space.ui": set()}  # fmt: skip
    assert import_cycles(graph) == [["nlue.data.report", "nlue.registry.spec"]]
    assert upward_imports(graph) == ["nlue.registry.spec (nlue.registry) -> nlue.data.report (nlue.data)"]
    graph = {"nlue.data.report": _imports(lazy, modules), "nlue.space.ui": set()}
    assert upward_imports(graph) == ["nlue.data.report (nlue.data) -> nlue.space.ui (nlue.space)"]
    assert room_of("nlue.evals.report.build") == "nlue.evals.report" and room_of("nlue.evals.verify") == "nlue.evals"
    assert room_of("nlue") == "nlue" and room_of("nlue.text.safe") == "nlue.text"


def test_no_module_is_overgrown() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in _modules().items()}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_no_module_outside_the_kinds_tests_a_task_by_name_or_kind() -> None:
    """Behaviour per task is the kind's (nlue.registry.kinds), reading what the registry declares."""
    import re

    from nlue.registry.tasks import KINDS, TASKS

    names = "|".join(map(re.escape, [*TASKS, *KINDS]))
    tests = re.compile(
        rf"""(\bproblem_type\s*[!=]=|\.name\s*(?:[!=]=|in)\s*[("']+\s*(?:{names})\b|[!=]=\s*["'](?:{names})["'])"""
    )
    offenders = []
    for path in (SRC / "nlue").rglob("*.py"):
        if "registry" in path.relative_to(SRC / "nlue").parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if tests.search(line) and "argv" not in line:  # a sub-command's name is not a task
                offenders.append(f"{path.relative_to(SRC)}:{number}: {line.strip()}")
    assert offenders == []


MODEL_LOADERS = re.compile(
    r"^(Auto(Peft)?Model\w*|\w+For(CausalLM|MaskedLM|SequenceClassification|Seq2SeqLM)|PeftModel)$"
)


def _backend_classes() -> set[str]:
    """The classes the registered backends build: the names in each ``from_spec``'s return annotation."""
    import importlib.util

    from nlue.lm.backends import BACKENDS

    names: set[str] = set()
    for backend in BACKENDS.values():
        module, _, function = backend.target.partition(":")
        tree = ast.parse(Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == function and node.returns is not None:
                names |= {n.id for n in ast.walk(node.returns) if isinstance(n, ast.Name) and n.id[:1].isupper()}
    return names - {"Any"}


def backend_constructions(source: str, backend_classes: set[str]) -> list[tuple[int, str]]:
    """Lines of ``source`` that build a model themselves: a backend class, a from_spec, a transformers loader."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        owner = func.value if isinstance(func, ast.Attribute) else None
        owner_name = owner.id if isinstance(owner, ast.Name) else owner.attr if isinstance(owner, ast.Attribute) else ""
        if (
            name in backend_classes
            or name == "from_spec"
            or (name in ("from_pretrained", "from_config") and MODEL_LOADERS.match(owner_name or ""))
            or (name == "pipeline" and isinstance(func, ast.Name))
        ):
            found.append((node.lineno, ast.unparse(func)))
    return found


def test_only_the_model_layer_builds_a_model() -> None:
    """Every command and the Space get models from nlue.lm.factory; nothing outside nlue.lm builds one."""
    classes = _backend_classes()
    assert {"LocalCausalLM", "OpenAICompatibleLM", "MaskedLMScorer", "MaskedLMPredictor", "Seq2SeqLM"} <= classes
    offenders = []
    for path in (SRC / "nlue").rglob("*.py"):
        if "lm" in path.relative_to(SRC / "nlue").parts[:1]:
            continue
        for line, call in backend_constructions(path.read_text(encoding="utf-8"), classes):
            offenders.append(f"{path.relative_to(SRC)}:{line}: {call}(...)")
    assert offenders == []


def test_the_model_layer_rule_catches_what_it_should() -> None:
    classes = {"LocalCausalLM", "OpenAICompatibleLM"}
    bad = (
        "from nlue.lm.local import LocalCausalLM\nm = LocalCausalLM('x')\n"
        "import transformers\nm2 = transformers.AutoModelForCausalLM.from_pretrained('x')\n"
        "from transformers import pipeline\np = pipeline('fill-mask')\nn = http.from_spec(spec)\n"
    )
    assert [line for line, _ in backend_constructions(bad, classes)] == [2, 4, 6, 7]
    fine = "from transformers import AutoTokenizer, AutoConfig\nt = AutoTokenizer.from_pretrained('x')\n"
    assert backend_constructions(fine + "c = AutoConfig.from_pretrained('x')\n", classes) == []
