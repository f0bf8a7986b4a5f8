"""The ``runs:`` of a roster: which sub-command, for which models, over which settings.

Each entry names a sub-command (``run: train | llm nlue | llm mcq | gmet | idioms``) and the
settings it sweeps; a list (``modes: [loglik, generate]``) is an axis of the grid, one cell per
value. Without ``models:`` a run takes every model of a kind it applies to, and skips the
combinations such a model cannot run (a masked LM does not generate); a model named in
``models:`` that cannot run one of them is a problem of the roster, reported before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nlue.cli_lists import split_names
from nlue.evals.sweep.problems import Problems

PROMPT_LANGUAGES = ("en", "native")
SHOTS = (0, 1, 3, 5)
PRESETS = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII")
LORA = "lora"
IDIOM_SETTINGS = ("zero-shot", "5-shot", "10-shot")
IDIOM_CONTEXTS = ("S2", "S1+S2", "S2+S3", "S1+S2+S3")
ZERO_SHOT = IDIOM_SETTINGS[0]
GMET_TASK = "gmet"  # the task `nlue gmet` scores
IDIOM_TASK = "nediom"  # the task `nlue idioms eval` scores


@dataclass(frozen=True)
class CommandSpec:
    """One sub-command a roster can run: the benchmark it reads, the model kinds it takes, its settings."""

    benchmark: str  # the datasets: key it reads
    kinds: tuple[str, ...]  # the kinds it can run
    default_kinds: tuple[str, ...]  # the kinds it takes when the run names no models
    keys: tuple[str, ...]  # its own settings, beside the common ones


COMMON_KEYS = ("run", "models", "label", "limit", "bootstrap_resamples", "seed", "args")
COMMANDS: Mapping[str, CommandSpec] = {
    "train": CommandSpec(
        "nlue", ("encoder", "masked-lm"), ("encoder", "masked-lm"),
        ("tasks", "presets", "paper_hparams", "seeds", "epochs", "learning_rate", "batch_size"),
    ),
    "llm nlue": CommandSpec(
        "nlue", ("causal-lm", "served", "masked-lm"), ("causal-lm", "served"),
        ("tasks", "prompt_languages", "modes", "shots", "max_new_tokens"),
    ),
    "llm mcq": CommandSpec(
        "mcq", ("causal-lm", "served", "masked-lm"), ("causal-lm", "served"),
        ("tasks", "prompt_languages", "modes", "shots", "max_new_tokens", "choices"),
    ),
    "gmet": CommandSpec("nlue", ("masked-lm",), ("masked-lm",), ()),
    "idioms": CommandSpec(
        "nediom", ("encoder", "masked-lm", "causal-lm", "served"), ("encoder", "masked-lm", "causal-lm", "served"),
        ("settings", "contexts", "idiom", "prompt_languages", "modes", "max_new_tokens", "seeds", "epochs"),
    ),
}  # fmt: skip
MODES: Mapping[str, tuple[str, ...]] = {"llm nlue": ("auto", "loglik", "generate"), "llm mcq": ("loglik", "generate"),
                                        "idioms": ("auto", "loglik", "generate")}  # fmt: skip
DEFAULT_MODE = {"llm nlue": "auto", "llm mcq": "generate", "idioms": "auto"}


@dataclass(frozen=True)
class RunSpec:
    """One checked entry of ``runs:``."""

    command: str  # a key of COMMANDS
    where: str  # its place in the YAML, for messages: runs[2]
    models: tuple[str, ...]  # the models it runs, in roster order
    explicit: bool  # the models were named (a combination one cannot run is a problem, not skipped)
    settings: Mapping[str, Any] = field(default_factory=dict)
    args: tuple[str, ...] = ()  # passed to the sub-command as they are


def cannot_run(kind: str, command: str, setting: str | None = None, mode: str | None = None) -> str | None:
    """Why a model of ``kind`` cannot run this combination, or None when it can."""
    if setting is not None and setting != ZERO_SHOT:  # neDIOM few-shot fine-tunes the model
        return "a served model cannot be fine-tuned (few-shot)" if kind == "served" else None
    if kind not in COMMANDS[command].kinds or (command == "idioms" and kind == "encoder"):
        return f"a model of kind {kind} does not run {command}" + (f" {setting}" if setting else "")
    if kind == "masked-lm" and mode == "generate":
        return "a masked LM does not generate: use mode loglik"
    return None


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, str):  # "sa, rte" as the command line takes it (nlue.cli_lists)
        return split_names(value)
    return list(value) if isinstance(value, list | tuple) else [value]


def _choices(value: Any, allowed: Sequence[Any], where: str, problems: Problems) -> list[Any]:
    values = _as_list(value)
    bad = [v for v in values if v not in allowed]
    for v in bad:
        problems.add(where, f"expected one of {', '.join(map(str, allowed))} (got {v!r})")
    if not values:
        problems.add(where, "expected at least one value")
    return [v for v in values if v in allowed]


def _number(kind: type, low: float, strict: bool = False) -> Callable[[Any, str, Problems], Any]:
    def check(value: Any, where: str, problems: Problems) -> Any:
        ok = (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and (kind is float or float(value).is_integer())
        )
        if not ok or (value <= low if strict else value < low):
            sign = ">" if strict else ">="
            problems.add(
                where, f"expected {'an integer' if kind is int else 'a number'} {sign} {low:g} (got {value!r})"
            )
            return None
        return kind(value)

    return check


def _tasks_of(benchmark: str, usable: Callable[[Any], bool], users: bool) -> tuple[str, ...]:
    """``benchmark``'s tasks that ``usable`` accepts, then (``users``) those of the user's benchmarks (task files)."""
    from nlue.registry.task_file.load import is_user_task
    from nlue.registry.tasks import BENCHMARKS

    own = [t.name for t in BENCHMARKS[benchmark].tasks if usable(t)]
    theirs = [t.name for b in BENCHMARKS.values() for t in b.tasks if users and is_user_task(t) and usable(t)]
    return (*own, *theirs)


def command_tasks(command: str, users: bool = True) -> tuple[str, ...]:
    """The tasks ``command`` can run: trainable NLUE tasks, those with LLM prompts, or the exams; and (``users``)
    the user's tasks (from task files) of the same sorts."""
    from nlue.evals.llm.nlue_llm import asked_by_llm_nlue
    from nlue.registry.kinds.multiple_choice import MultipleChoiceKind

    if command == "train":
        return _tasks_of("nlue", lambda t: t.kind.trainable, users)
    if command == "llm nlue":
        return _tasks_of("nlue", asked_by_llm_nlue, users)
    return _tasks_of("mcq", lambda t: isinstance(t.kind, MultipleChoiceKind), users)


def task_benchmark(command: str, task: str) -> str:
    """The ``datasets:`` key whose dataset holds ``task``: the command's benchmark, or a user task's own."""
    from nlue.registry.task_file.load import is_user_task
    from nlue.registry.tasks import get_task

    spec = get_task(task)
    return spec.benchmark if is_user_task(spec) else COMMANDS[command].benchmark


def _paper_names() -> tuple[str, ...]:
    from nlue.registry.paper import PAPER_MODELS

    return tuple(m.name for m in PAPER_MODELS)


def _settings(command: str, data: Mapping[str, Any], where: str, problems: Problems) -> dict[str, Any]:
    """The run's own settings, checked, with the defaults the grid needs filled in."""
    out: dict[str, Any] = {}
    if "tasks" in COMMANDS[command].keys:
        allowed = command_tasks(command)
        tasks = data.get("tasks")
        if tasks == "all":
            tasks = list(allowed)
        if tasks is None and command != "llm nlue":
            problems.add(f"{where}.tasks", f"is required: a list of {', '.join(allowed)} (or all)")
        out["tasks"] = None if tasks is None else _choices(tasks, allowed, f"{where}.tasks", problems)
    if command in MODES:
        out["modes"] = _choices(data.get("modes", DEFAULT_MODE[command]), MODES[command], f"{where}.modes", problems)
        languages = data.get("prompt_languages", "en")
        languages = list(PROMPT_LANGUAGES) if languages == "both" else languages
        out["prompt_languages"] = _choices(languages, PROMPT_LANGUAGES, f"{where}.prompt_languages", problems)
    if command in ("llm nlue", "llm mcq"):
        out["shots"] = _choices(data.get("shots", 0), SHOTS, f"{where}.shots", problems)
    if command == "llm mcq" and "choices" in data:
        out["choices"] = (_choices(data["choices"], ("letters", "texts"), f"{where}.choices", problems) or [None])[0]
    if command == "train":
        presets = data.get("presets")
        paper = data.get("paper_hparams")
        if paper is not None and not isinstance(paper, bool | str):
            problems.add(f"{where}.paper_hparams", f"expected true (the model's paper name) or a name (got {paper!r})")
        if isinstance(paper, str) and paper not in _paper_names():
            problems.add(f"{where}.paper_hparams", f"expected a model of the NLUE paper: {', '.join(_paper_names())}")
        if paper and presets is not None:
            problems.add(f"{where}.presets", "paper_hparams takes the preset from the paper: leave presets out")
        out["paper_hparams"] = paper or None
        out["presets"] = [None] if paper else _choices(presets or "I", (*PRESETS, LORA), f"{where}.presets", problems)
    if command == "idioms":
        settings = data.get("settings")
        if settings is None:
            problems.add(f"{where}.settings", f"is required: a list of {', '.join(IDIOM_SETTINGS)}")
        out["settings"] = _choices(settings or [], IDIOM_SETTINGS, f"{where}.settings", problems) if settings else []
        contexts = data.get("contexts")
        out["contexts"] = None if contexts in (None, "all") else _choices(contexts, IDIOM_CONTEXTS,
                                                                          f"{where}.contexts", problems)  # fmt: skip
        idiom = data.get("idiom")
        out["idiom"] = None if idiom is None else (_choices(idiom, ("with", "without", "both"), f"{where}.idiom",
                                                            problems) or [None])[0]  # fmt: skip
        if ZERO_SHOT not in out["settings"] and ("modes" in data or "prompt_languages" in data):
            problems.add(
                f"{where}.modes", "modes and prompt_languages apply to the zero-shot setting, which is not run"
            )
    numbers = {"seeds": _number(int, 1), "epochs": _number(float, 0, strict=True), "batch_size": _number(int, 1),
               "learning_rate": _number(float, 0, strict=True), "max_new_tokens": _number(int, 1)}  # fmt: skip
    for key, check in numbers.items():
        if key in COMMANDS[command].keys and data.get(key) is not None:
            out[key] = check(data[key], f"{where}.{key}", problems)
    return out


def _combinations(command: str, settings: Mapping[str, Any]) -> list[tuple[str | None, str | None]]:
    """(setting, mode) pairs a model of the run must be able to run."""
    if command == "idioms":
        pairs: list[tuple[str | None, str | None]] = []
        for setting in settings["settings"]:
            modes = settings["modes"] if setting == ZERO_SHOT else [None]
            pairs.extend((setting, mode) for mode in modes)
        return pairs
    return [(None, mode) for mode in settings.get("modes", [None])]


def check_run(data: Any, defaults: Mapping[str, Any], where: str, models: Mapping[str, Any],
              datasets: Mapping[str, str | None], problems: Problems) -> RunSpec | None:  # fmt: skip
    """The checked run of ``data`` (one entry of ``runs:``, over the roster's ``defaults``), or None."""
    if not isinstance(data, Mapping):
        problems.add(where, f"expected a mapping with run: one of {', '.join(COMMANDS)} (got {data!r})")
        return None
    command = data.get("run")
    if command not in COMMANDS:
        problems.add(f"{where}.run", f"expected one of {', '.join(COMMANDS)} (got {command!r})")
        return None
    spec = COMMANDS[command]
    allowed = (*COMMON_KEYS, *spec.keys)
    for key in data:
        if key not in allowed:
            problems.add(f"{where}.{key}", f"not a setting of {command}; expected one of {', '.join(allowed)}")
    # The roster's defaults fill what the run leaves out, where the command has such a setting.
    merged = {**{k: v for k, v in defaults.items() if k in allowed and k != "run"}, **data}
    settings = _settings(command, merged, where, problems)
    common = {"limit": _number(int, 1), "bootstrap_resamples": _number(int, 0), "seed": _number(int, 0)}
    for key, check in common.items():
        if merged.get(key) is not None:
            settings[key] = check(merged[key], f"{where}.{key}", problems)
    label = merged.get("label")
    if label is not None and (not isinstance(label, str) or not label or "/" in label or "__" in label):
        problems.add(f"{where}.label", f"expected a short name for results folders, no '/' or '__' (got {label!r})")
    settings["label"] = label if isinstance(label, str) else None
    args = merged.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
        problems.add(f"{where}.args", f"expected a list of command-line arguments, e.g. [--max-new-tokens, '64'] "
                                      f"(got {args!r})")  # fmt: skip
        args = []
    needed = {task_benchmark(command, task) for task in settings.get("tasks") or ()} or {spec.benchmark}
    if "mcq" in needed and spec.benchmark == "mcq" and not datasets.get("mcq"):
        problems.add(where, "llm mcq needs datasets.mcq: a built exam folder (nlue build --configs mcq_ne,mcq_ur) "
                            "or a Hub id")  # fmt: skip
    for benchmark in sorted(needed - set(COMMANDS[c].benchmark for c in COMMANDS)):
        if not datasets.get(benchmark):
            problems.add(f"{where}.tasks", f"tasks of {benchmark} (a task file's) need datasets.{benchmark}: the "
                                           "folder `nlue build --task-file` wrote, or its Hub id")  # fmt: skip
    named = merged.get("models")
    if named is not None and (not isinstance(named, list) or not all(isinstance(n, str) for n in named)):
        problems.add(f"{where}.models", f"expected a list of model names (got {named!r})")
        named = []
    combinations = _combinations(command, settings)
    if named is None:
        chosen = tuple(n for n, m in models.items() if m.kind in spec.default_kinds)
    else:
        chosen = tuple(n for n in models if n in named)
        for position, name in enumerate(named):
            if name not in models:
                problems.add(f"{where}.models[{position}]", f"no model named {name!r} in models")
                continue
            for setting, mode in combinations:
                reason = cannot_run(models[name].kind, command, setting, mode)
                if reason:
                    problems.add(f"{where}.models[{position}]", f"{name}: {reason}")
    if settings.get("paper_hparams") is True:
        for name in chosen:
            paper_name = getattr(models[name], "paper_name", None) or name
            if paper_name not in _paper_names():
                problems.add(f"{where}.paper_hparams", f"{name} is not a model of the NLUE paper (set its paper_name)")
    return RunSpec(command, where, chosen, named is not None, settings, tuple(str(a) for a in args))
