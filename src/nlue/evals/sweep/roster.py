"""A roster: which models run which benchmarks in which settings, read from YAML and checked whole.

A roster is the input of `nlue sweep` (:mod:`nlue.evals.sweep.grid` turns it into cells)::

    name: tiny                            # shown in the summary
    out: build/sweep/tiny                 # results/, runs/ and sweep/ go under it
    datasets: {nlue: build/nlue, mcq: build/mcq, nediom: build/nediom}   # left out: the embedded sample
    defaults: {limit: 8, bootstrap_resamples: 0}                        # settings every run takes
    models:
      - {name: tiny-causal, id: build/tiny-models/causal-lm, kind: causal-lm}
    runs:
      - {run: llm nlue, tasks: [sa], prompt_languages: [en, native], modes: [loglik, generate]}

Tasks of a user's own (issue 30) join with ``task_files:`` (task files, folders of them or benchmark
files) and a dataset per user benchmark under ``datasets:`` (the folder ``nlue build --task-file``
wrote, whose carried task files alone also make its tasks known)::

    task_files: [tasks/ne_topic.yaml]
    datasets: {nlue: build/nlue, ne_topic: build/ne_topic}
    runs:
      - {run: train, tasks: [sa, ne_topic]}

Every problem of the file is collected before anything runs and reported at once, each with
the file, its place in the YAML (``runs[2].modes[1]``) and what was expected
(:class:`~nlue.errors.NlueError`: exit 2). Relative paths are read from the current folder,
as every other nlue option is, so a shipped roster's ``build/nlue`` is what ``nlue build`` wrote.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.evals.sweep.problems import Problems
from nlue.evals.sweep.roster_runs import COMMANDS, COMMON_KEYS, RunSpec, check_run

MODEL_KINDS: Mapping[str, str] = {
    "encoder": "an encoder checkpoint to fine-tune (nlue train, neDIOM few-shot)",
    "masked-lm": "an encoder with its masked-LM head: fine-tuned, GMET, neDIOM zero-shot, LLM tasks by loglik",
    "causal-lm": "a local causal LM (folder or Hub id): nlue llm, neDIOM zero-shot and few-shot",
    "served": "a model behind an OpenAI-compatible endpoint (vLLM, TGI, a hosted API): nlue llm, neDIOM zero-shot",
}
ROSTER_KEYS = ("name", "description", "out", "task_files", "datasets", "defaults", "models", "runs")
MODEL_KEYS = ("name", "id", "kind", "endpoint", "api_key_env", "options", "params", "languages", "hub_id_guess",
              "note", "paper_name")  # fmt: skip
DATASET_KEYS = ("nlue", "mcq", "nediom")  # the benchmarks, each its own dataset repo (and the user's, registered)
DEFAULT_OUT = Path("build") / "sweep"
# A model's name starts its results folders, and ``__`` separates a folder's name from its setting.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class RosterModel:
    """One model of a roster: what to load (``id``) and how (``kind``, ``endpoint``), and what we know of it."""

    name: str  # display name: results folders and the summary's rows
    id: str  # Hub id, local folder, or the served name (with ``endpoint``)
    kind: str  # one of MODEL_KINDS
    endpoint: str | None = None
    api_key_env: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)  # model-layer options: dtype, concurrency, ...
    params: str | None = None
    languages: tuple[str, ...] = ()
    hub_id_guess: bool = False  # True where the Hub id is ours, not the paper's
    note: str = ""
    paper_name: str | None = None  # the name the paper prints, where it differs from ``name``


@dataclass(frozen=True)
class Roster:
    path: Path
    name: str
    description: str
    out: Path
    datasets: Mapping[str, str | None]
    models: tuple[RosterModel, ...]
    runs: tuple[RunSpec, ...]
    task_files: tuple[str, ...] = ()  # the user's task files, handed to each cell that runs one of their tasks

    def model(self, name: str) -> RosterModel:
        return next(m for m in self.models if m.name == name)


def looks_like_path(value: str) -> bool:
    """A local folder rather than a Hub id: written as a path, or not of the Hub's ``owner/name`` shape."""
    return value.startswith((".", "/", "~")) or value.count("/") != 1 or Path(value).exists()


def _text(value: Any, where: str, problems: Problems, required: bool = False) -> str | None:
    if value is None:
        if required:
            problems.add(where, "is required")
        return None
    if not isinstance(value, str | int | float) or isinstance(value, bool) or not str(value).strip():
        problems.add(where, f"expected a non-empty text (got {value!r})")
        return None
    return str(value).strip()


def _unknown_keys(data: Mapping[str, Any], allowed: tuple[str, ...], where: str, problems: Problems) -> None:
    for key in data:
        if key not in allowed:
            problems.add(f"{where}.{key}" if where else str(key), f"unknown key; expected one of {', '.join(allowed)}")


def _model(data: Any, where: str, problems: Problems) -> RosterModel | None:
    if not isinstance(data, Mapping):
        problems.add(where, f"expected a mapping with name, id and kind (got {type(data).__name__})")
        return None
    _unknown_keys(data, MODEL_KEYS, where, problems)
    name = _text(data.get("name"), f"{where}.name", problems, required=True)
    model_id = _text(data.get("id"), f"{where}.id", problems, required=True)
    kind = _text(data.get("kind"), f"{where}.kind", problems, required=True)
    if kind is not None and kind not in MODEL_KINDS:
        problems.add(f"{where}.kind", f"expected one of {', '.join(MODEL_KINDS)} (got {kind!r})")
    if name is not None and (not NAME_PATTERN.fullmatch(name) or "__" in name):
        problems.add(f"{where}.name", f"names results folders: letters, digits, '.', '-' and '_', no '__' (got {name!r}; "
                                      "put the paper's spelling in paper_name)")  # fmt: skip
    endpoint = _text(data.get("endpoint"), f"{where}.endpoint", problems)
    if kind == "served" and endpoint is None:
        problems.add(f"{where}.endpoint", "a served model needs the base URL of its OpenAI-compatible server")
    if endpoint is not None and kind != "served":
        problems.add(f"{where}.endpoint", f"only a model of kind served has an endpoint (this one is {kind})")
    local = model_id is not None and kind != "served" and looks_like_path(model_id)
    if local and not Path(str(model_id)).expanduser().is_dir():
        problems.add(f"{where}.id", f"no such model folder {model_id!r} (a Hub id is written owner/name)")
    options = data.get("options") or {}
    if not isinstance(options, Mapping):
        problems.add(f"{where}.options", f"expected a mapping of model options, e.g. dtype: bfloat16 (got {options!r})")
        options = {}
    guess = data.get("hub_id_guess", False)
    if not isinstance(guess, bool):
        problems.add(f"{where}.hub_id_guess", f"expected true or false (got {guess!r})")
    languages = data.get("languages") or []
    if not isinstance(languages, list) or not all(isinstance(x, str) for x in languages):
        problems.add(f"{where}.languages", f"expected a list of language codes (got {languages!r})")
        languages = []
    if None in (name, model_id, kind) or kind not in MODEL_KINDS:
        return None
    return RosterModel(
        name=str(name), id=str(model_id), kind=str(kind), endpoint=endpoint,
        api_key_env=_text(data.get("api_key_env"), f"{where}.api_key_env", problems),
        options=dict(options), params=_text(data.get("params"), f"{where}.params", problems),
        languages=tuple(languages), hub_id_guess=bool(guess),
        note=_text(data.get("note"), f"{where}.note", problems) or "",
        paper_name=_text(data.get("paper_name"), f"{where}.paper_name", problems),
    )  # fmt: skip


def dataset_keys() -> tuple[str, ...]:
    """The benchmarks a roster names datasets for: the shipped ones and those of the task files registered."""
    from nlue.registry.tasks import BENCHMARKS

    return (*DATASET_KEYS, *(name for name in BENCHMARKS if name not in DATASET_KEYS))


def _datasets(data: Any, problems: Problems) -> dict[str, str | None]:
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        problems.add("datasets", f"expected a mapping benchmark: folder or Hub id (got {data!r})")
        return {}
    keys = dataset_keys()
    _unknown_keys(data, keys, "datasets", problems)
    out: dict[str, str | None] = {}
    for key in (key for key in keys if key in DATASET_KEYS or key in data):  # the shipped ones always (None: sample)
        value = _text(data.get(key), f"datasets.{key}", problems)
        if value is not None and looks_like_path(value) and not Path(value).expanduser().is_dir():
            problems.add(f"datasets.{key}", f"no such dataset folder {value!r} (build it with nlue build)")
        out[key] = value
    return out


def _task_files(data: Any, problems: Problems) -> tuple[str, ...]:
    if data is None:
        return ()
    values = [data] if isinstance(data, str) else data
    if not isinstance(values, list) or not all(isinstance(v, str) and v.strip() for v in values):
        problems.add("task_files", f"expected a list of task files or folders (got {data!r})")
        return ()
    for position, value in enumerate(values):
        if not Path(value).expanduser().exists():
            problems.add(f"task_files[{position}]", f"no such task file or folder {value!r}")
    return tuple(values)


def roster_sources(path: Path, datasets: Mapping[str, str] | None = None) -> tuple[list[str], list[str], list[str]]:
    """(the task files, the dataset values, the task names of its runs) a roster file names, read before the
    roster is checked: their tasks must be registered first
    (:func:`nlue.registry.task_file.activate.activated_task_files`; a Hub dataset's carried files are
    fetched for the names).

    A file that is not a readable roster gives none: checking it says what is wrong.
    """
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return [], [], []
    if not isinstance(data, Mapping):
        return [], [], []
    files = data.get("task_files") or []
    files = [files] if isinstance(files, str) else files
    named = data.get("datasets") if isinstance(data.get("datasets"), Mapping) else {}
    values = [*named.values(), *(datasets or {}).values()]
    existing = [f for f in files if isinstance(f, str) and Path(f).expanduser().exists()]
    runs = data.get("runs") if isinstance(data.get("runs"), list) else []
    names = [str(name) for run in runs if isinstance(run, Mapping) for name in _names(run.get("tasks"))]
    return existing, [str(v) for v in values if isinstance(v, str)], names


def _names(value: Any) -> list[str]:
    from nlue.cli_lists import split_names

    return split_names(value) if isinstance(value, str | list) else []


def parse_roster(data: Any, source: str, path: Path | None = None, out: Path | None = None,
                 datasets: Mapping[str, str] | None = None) -> Roster:  # fmt: skip
    """The roster ``data`` (parsed YAML) describes, or NlueError listing every problem in it.

    ``out`` and ``datasets`` (from the command line) replace the roster's own.
    """
    problems = Problems(source)
    if not isinstance(data, Mapping):
        problems.add("", f"expected a mapping with models and runs (got {type(data).__name__})")
        problems.raise_if_any()
    _unknown_keys(data, ROSTER_KEYS, "", problems)
    name = _text(data.get("name"), "name", problems) or (path.stem if path else "roster")
    out_folder = _text(data.get("out"), "out", problems)
    description = _text(data.get("description"), "description", problems) or ""
    task_files = _task_files(data.get("task_files"), problems)
    chosen_datasets = _datasets(data.get("datasets"), problems)
    for key, value in (datasets or {}).items():
        if key not in dataset_keys():
            problems.add(f"--dataset {key}=", f"unknown benchmark; expected one of {', '.join(dataset_keys())}")
        elif looks_like_path(value) and not Path(value).expanduser().is_dir():
            problems.add(f"--dataset {key}=", f"no such dataset folder {value!r} (build it with nlue build)")
        chosen_datasets[key] = value
    models_data = data.get("models")
    models: list[RosterModel] = []
    if not isinstance(models_data, list) or not models_data:
        problems.add("models", "expected a non-empty list of models")
        models_data = []
    for position, entry in enumerate(models_data):
        model = _model(entry, f"models[{position}]", problems)
        if model is None:
            continue
        if any(m.name == model.name for m in models):
            problems.add(f"models[{position}].name", f"{model.name!r} names two models; names must be unique")
        models.append(model)
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, Mapping):
        problems.add("defaults", f"expected a mapping of run settings (got {defaults!r})")
        defaults = {}
    settings = tuple(dict.fromkeys(k for key in (COMMON_KEYS, *(c.keys for c in COMMANDS.values())) for k in key))
    _unknown_keys(defaults, tuple(k for k in settings if k not in ("run", "models")), "defaults", problems)
    runs_data = data.get("runs")
    if not isinstance(runs_data, list) or not runs_data:
        problems.add("runs", f"expected a non-empty list of runs, each with run: one of {', '.join(COMMANDS)}")
        runs_data = []
    runs = []
    by_name = {m.name: m for m in models}
    for position, entry in enumerate(runs_data):
        spec = check_run(entry, defaults, f"runs[{position}]", by_name, chosen_datasets, problems)
        if spec is not None:
            runs.append(spec)
    problems.raise_if_any()
    return Roster(
        path=path or Path(source),
        name=name,
        description=description,
        out=Path(out or out_folder or DEFAULT_OUT / name),
        datasets=chosen_datasets,
        models=tuple(models),
        runs=tuple(runs),
        task_files=task_files,
    )


def load_roster(path: Path, out: Path | None = None, datasets: Mapping[str, str] | None = None) -> Roster:
    """Read and check the roster at ``path`` (a YAML file)."""
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise NlueError(f"cannot read the roster {path}: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise NlueError(f"{path}{where}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    return parse_roster(data, str(path), Path(path), out, datasets)
