"""A roster's grid: one cell per call of an existing sub-command, with its argv, its id and its cost.

The grid is models x runs x the settings each run lists, models outermost (a model's row of the
summary fills first). A cell is exactly the command a user could type, so what a sweep runs can be
read, copied and run by hand (``--dry-run`` prints them). Its id is a hash of that argv: a cell
whose settings change is a new cell, and the old result is not mistaken for it.

Where a command does several things in one call, the cell keeps them together: both prompt
languages go in one ``--prompt-language both`` call (the command then also reports their gap), and
one neDIOM call scores all the variants a run names. Modes, shots, presets and neDIOM settings
are cells of their own.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlue.evals.sweep.problems import Problems
from nlue.evals.sweep.roster import Roster, RosterModel
from nlue.evals.sweep.roster_runs import (
    COMMANDS,
    GMET_TASK,
    IDIOM_CONTEXTS,
    IDIOM_TASK,
    LORA,
    PROMPT_LANGUAGES,
    ZERO_SHOT,
    RunSpec,
    cannot_run,
    command_tasks,
    task_benchmark,
)
from nlue.evals.sweep.sizes import Sizes

RESULTS, RUNS, STATE = "results", "runs", "sweep"  # the folders of a sweep's output


@dataclass
class Cost:
    """What a cell costs: fine-tunings (each seed one), model requests, GMET items."""

    trainings: int = 0
    requests: int = 0  # log-likelihood requests count one per label or choice; generation one per item
    served_requests: int = 0  # of which to an endpoint
    gmet_items: int = 0
    estimated: bool = False  # some split sizes are the paper's, not the dataset's (a Hub id, offline)
    probed: bool = False  # mode auto on a served model: the probe decides; counted as generation

    def add(self, other: Cost) -> None:
        for name in ("trainings", "requests", "served_requests", "gmet_items"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.estimated |= other.estimated
        self.probed |= other.probed


@dataclass(frozen=True)
class Cell:
    """One call of a sub-command: a model on a benchmark in one setting."""

    model: str
    command: str
    setting: str  # what the cell varies, for people: "sa, preset I, 2 seeds"
    argv: tuple[str, ...]
    results_name: str  # the results folders it writes start with this name
    where: str  # the run of the roster it comes from: runs[2]
    row: str  # the setting without the task: a row of the summary ("preset I, 2 seeds")
    cost: Cost = field(default_factory=Cost, compare=False)
    writes: frozenset[tuple[Any, ...]] = frozenset()  # what it writes, to find two cells writing one place
    out: str = field(default="", compare=False)  # the sweep's output folder, which the argv names

    @property
    def id(self) -> str:
        """The cell's name in the sweep's records: its command, with the output folder left out (the same cell
        run by a job into another folder has the same id, so that ``--collect --from`` finds it)."""
        argv = [_placeholder(a, self.out) for a in self.argv] if self.out else list(self.argv)
        return hashlib.sha256(json.dumps(argv, ensure_ascii=False).encode("utf-8")).hexdigest()[:12]

    @property
    def label(self) -> str:
        return f"{self.model} · {self.command} · {self.setting}"


def _placeholder(argument: str, out: str) -> str:
    if argument == out or argument.startswith((f"{out}/", f"{out}{os.sep}")):
        return "<out>" + argument[len(out) :]
    return argument


def _option_flag(key: str) -> str:
    return "--" + str(key).replace("_", "-")


def model_options(model: RosterModel) -> list[str]:
    """The model-layer options (nlue.lm.options) of ``model``: endpoint, key variable, dtype, ..."""
    argv = ["--model", model.id]
    if model.endpoint:
        argv += ["--endpoint", model.endpoint]
    if model.api_key_env:
        argv += ["--api-key-env", model.api_key_env]
    for key, value in model.options.items():
        if value is True:
            argv.append(_option_flag(key))
        elif value not in (False, None):
            argv += [_option_flag(key), str(value)]
    return argv


class GridBuilder:
    """Expands a roster's runs into cells (:func:`build_grid`)."""

    def __init__(self, roster: Roster, sizes: Sizes) -> None:
        self.roster, self.sizes = roster, sizes
        self.results = roster.out / RESULTS
        self.runs = roster.out / RUNS
        self._declared: dict[str, set[str]] | None = None  # each roster task file -> the tasks it declares

    def dataset_value(self, run: RunSpec, task: str | None = None) -> str | None:
        """The dataset of ``task`` (a user task: its own benchmark's), or of the run's benchmark."""
        key = task_benchmark(run.command, task) if task else COMMANDS[run.command].benchmark
        return self.roster.datasets.get(key)

    def dataset(self, run: RunSpec, task: str | None = None) -> list[str]:
        value = self.dataset_value(run, task)
        return ["--dataset", value] if value else []

    def task_files(self, tasks: Sequence[str], snake: bool = False) -> list[str]:
        """``--task-file`` for each of the roster's task files that declares a task of the cell (a task known
        from its dataset's carried file needs none: the cell's ``--dataset`` brings it)."""
        from nlue.registry.task_file.register import load_files

        if self._declared is None:
            self._declared = {
                path: {t.name for f in load_files([path]) for t in f.tasks} for path in self.roster.task_files
            }
        flag = "--task_file" if snake else "--task-file"
        return [arg for path, names in self._declared.items() if names & set(tasks) for arg in (flag, path)]

    def name(self, model: RosterModel, run: RunSpec, *extra: str | None) -> str:
        return "__".join(filter(None, [model.name, run.settings.get("label"), *extra]))

    def common(self, run: RunSpec, snake: bool = False) -> list[str]:
        """--bootstrap-resamples and --seed where the run sets them, in the command's spelling."""
        argv = []
        for key in ("bootstrap_resamples", "seed"):
            if run.settings.get(key) is not None:
                argv += [f"--{key}" if snake else _option_flag(key), str(run.settings[key])]
        return argv

    def max_new_tokens(self, run: RunSpec, mode: str) -> list[str]:
        """The answer's token cap, for the modes that generate (log-likelihood writes no tokens)."""
        cap = run.settings.get("max_new_tokens")
        return ["--max-new-tokens", str(cap)] if cap and mode != "loglik" else []

    def limit(self, run: RunSpec) -> list[str]:
        return ["--limit", str(run.settings["limit"])] if run.settings.get("limit") else []

    def items(self, run: RunSpec, task: str, split: str = "test") -> tuple[int, bool]:
        value = self.dataset_value(run, task)
        count, exact = self.sizes.size(value, task, split)
        limit = run.settings.get("limit")
        return (min(count, limit) if limit else count), not exact

    # ------------------------------------------------------------------ one builder per command
    def train(self, model: RosterModel, run: RunSpec) -> Iterator[Cell]:
        s = run.settings
        for task in s["tasks"]:
            for preset in s["presets"]:
                name = self.name(model, run, preset if len(s["presets"]) > 1 else None)
                argv = ["train", "--model", model.id, "--task", task, *self.dataset(run, task),
                        *self.task_files([task], snake=True),
                        "--output_dir", str(self.runs / f"{name}-{task}"),
                        "--results_dir", str(self.results), "--results_name", name]  # fmt: skip
                if preset == LORA:
                    argv.append("--lora")
                elif preset:
                    argv += ["--preset", preset]
                if s.get("paper_hparams"):
                    paper = s["paper_hparams"]
                    argv += ["--paper_hparams", model.paper_name or model.name if paper is True else paper]
                seeds = s.get("seeds") or 1
                for key, flag in (("seeds", "--seeds"), ("epochs", "--num_train_epochs"),
                                  ("learning_rate", "--learning_rate"), ("batch_size", "--per_device_train_batch_size")):  # fmt: skip
                    if s.get(key) is not None:
                        argv += [flag, f"{s[key]:g}"]
                if s.get("limit"):
                    argv += ["--max_train_samples", str(s["limit"]), "--max_eval_samples", str(s["limit"])]
                argv += [*self.common(run, snake=True), *run.args]
                what = (
                    "paper's setting" if s.get("paper_hparams") else ("LoRA" if preset == LORA else f"preset {preset}")
                )
                row = what + (f", {seeds} seeds" if seeds > 1 else "")
                writes = frozenset({("train", name, task)})
                yield Cell(model.name, "train", f"{task}, {row}", tuple(argv), name, run.where, row,
                           Cost(trainings=seeds), writes)  # fmt: skip

    def _languages(self, run: RunSpec) -> tuple[str, list[str]]:
        languages = run.settings["prompt_languages"]
        return ("both" if set(languages) == set(PROMPT_LANGUAGES) else languages[0]), languages

    def _request_cost(self, model: RosterModel, mode: str, loglik_requests: int, items: int, estimated: bool) -> Cost:
        served = model.kind == "served"
        generated = mode == "generate" or (mode == "auto" and served)
        requests = items if generated else loglik_requests
        return Cost(requests=requests, served_requests=requests if served else 0, estimated=estimated,
                    probed=mode == "auto" and served)  # fmt: skip

    def llm_nlue(self, model: RosterModel, run: RunSpec) -> Iterator[Cell]:
        from nlue.registry.tasks import get_task

        s = run.settings
        language_arg, languages = self._languages(run)
        # One call per dataset: the NLUE tasks in one, each user benchmark's in its own (its own --dataset).
        groups: dict[str | None, list[str]] = {}
        for task in s["tasks"] or []:
            groups.setdefault(self.dataset_value(run, task), []).append(task)
        cells = [(mode, shots, named) for mode in s["modes"] for shots in s["shots"]
                 for named in (list(groups.values()) or [None])]  # fmt: skip
        for mode, shots, named in cells:
            if cannot_run(model.kind, run.command, None, mode):
                continue
            tasks = named or list(command_tasks(run.command, users=False))  # no --tasks: the command's default
            name = self.name(model, run)
            argv = ["llm", "nlue", *model_options(model), *self.dataset(run, tasks[0] if named else None)]
            argv += ["--tasks", *named, *self.task_files(named)] if named else []
            argv += ["--prompt-language", language_arg, "--mode", mode, "--shots", str(shots),
                     "--results-dir", str(self.results), "--name", name]  # fmt: skip
            argv += self.max_new_tokens(run, mode)
            argv += [*self.limit(run), *self.common(run), *run.args]
            cost = Cost()
            for task in tasks:
                items, estimated = self.items(run, task)
                labels = len(get_task(task).label_names)
                cost.add(self._request_cost(model, mode, items * labels * len(languages),
                                            items * len(languages), estimated))  # fmt: skip
            setting = f"{'+'.join(languages)} {shots}-shot {mode}"
            writes = frozenset(("llm nlue", name, lang, shots, mode, t) for lang in languages for t in tasks)
            yield Cell(model.name, run.command, setting, tuple(argv), name, run.where, setting, cost, writes)

    def llm_mcq(self, model: RosterModel, run: RunSpec) -> Iterator[Cell]:
        s = run.settings
        language_arg, languages = self._languages(run)
        for task in s["tasks"]:
            for mode in s["modes"]:
                if cannot_run(model.kind, run.command, None, mode):
                    continue
                for shots in s["shots"]:
                    name = self.name(model, run)
                    argv = ["llm", "mcq", *model_options(model), *self.dataset(run, task), "--task", task,
                            *self.task_files([task]),
                            "--prompt-language", language_arg, "--mode", mode, "--shots", str(shots),
                            "--results-dir", str(self.results), "--name", name]  # fmt: skip
                    if s.get("choices"):
                        argv += ["--choices", s["choices"]]
                    argv += [*self.max_new_tokens(run, mode), *self.limit(run), *self.common(run), *run.args]
                    items, estimated = self.items(run, task)
                    cost = self._request_cost(model, mode, items * 4 * len(languages), items * len(languages),
                                              estimated)  # fmt: skip
                    setting = f"{task}, {'+'.join(languages)} {shots}-shot {mode}"
                    writes = frozenset(("llm mcq", name, lang, shots, mode, task) for lang in languages)
                    yield Cell(model.name, run.command, setting, tuple(argv), name, run.where, setting, cost, writes)

    def gmet(self, model: RosterModel, run: RunSpec) -> Iterator[Cell]:
        name = self.name(model, run)
        argv = ["gmet", "--model", model.id, *self.dataset(run), "--out", str(self.runs / f"{name}-gmet"),
                "--results-dir", str(self.results), "--name", name, *self.limit(run), *self.common(run), *run.args]  # fmt: skip
        items, estimated = self.items(run, GMET_TASK)
        cost = Cost(gmet_items=items, estimated=estimated)
        setting = "zero-shot, automatic verdicts"
        yield Cell(
            model.name, "gmet", setting, tuple(argv), name, run.where, setting, cost, frozenset({("gmet", name)})
        )

    def idioms(self, model: RosterModel, run: RunSpec) -> Iterator[Cell]:
        s = run.settings
        contexts = s["contexts"] or list(IDIOM_CONTEXTS)
        variants = len(contexts) * (1 if s["idiom"] in ("with", "without") else 2)
        language_arg, languages = self._languages(run)
        for setting in s["settings"]:
            zero = setting == ZERO_SHOT
            for mode in s["modes"] if zero else [None]:
                if cannot_run(model.kind, run.command, setting, mode):
                    continue
                name = self.name(model, run)
                argv = ["idioms", "eval", *(model_options(model) if zero else ["--model", model.id]),
                        *self.dataset(run), "--setting", setting]  # fmt: skip
                argv += ["--context", *s["contexts"]] if s["contexts"] else []
                argv += ["--idiom", s["idiom"]] if s["idiom"] else []
                items, estimated = self.items(run, IDIOM_TASK)
                if zero:
                    argv += ["--prompt-language", language_arg, "--mode", str(mode)]
                    argv += self.max_new_tokens(run, str(mode))
                    n = items * variants * len(languages)
                    cost = self._request_cost(model, str(mode), n * 2, n, estimated)
                    row = f"{setting} {'+'.join(languages)} {mode}"
                else:
                    seeds = s.get("seeds") or 5  # the command's default
                    argv += ["--seeds", str(seeds)] + (["--epochs", f"{s['epochs']:g}"] if s.get("epochs") else [])
                    cost = Cost(trainings=variants * seeds, estimated=estimated)
                    row = f"{setting}, {seeds} seeds"
                argv += ["--results-dir", str(self.results), "--name", name, *self.limit(run), *self.common(run),
                         *run.args]  # fmt: skip
                writes = frozenset(("idioms", name, setting, mode, lang) for lang in (languages if zero else [""]))
                row = f"{row}, {variants} variants"
                yield Cell(model.name, "idioms", row, tuple(argv), name, run.where, row, cost, writes)


_BUILDERS = {"train": "train", "llm nlue": "llm_nlue", "llm mcq": "llm_mcq", "gmet": "gmet", "idioms": "idioms"}


def build_grid(roster: Roster, sizes: Sizes | None = None) -> list[Cell]:
    """Every cell of ``roster``, models outermost; NlueError when two cells would write the same results."""
    builder = GridBuilder(roster, sizes or Sizes())
    cells: list[Cell] = []
    for model in roster.models:
        for run in roster.runs:
            if model.name in run.models:
                cells.extend(getattr(builder, _BUILDERS[run.command])(model, run))
    problems = Problems(str(roster.path))
    seen: dict[Any, Cell] = {}
    for cell in cells:
        for key in cell.writes:
            other = seen.setdefault(key, cell)
            if other is not cell:
                problems.add(cell.where, f"{cell.label} writes the results {other.label} writes "
                                         f"({other.where}); give one of the runs a label")  # fmt: skip
                break
    if not cells:
        problems.add("runs", "no model runs anything: check each run's models and the models' kinds")
    problems.raise_if_any()
    return [dataclasses.replace(cell, out=str(roster.out)) for cell in cells]


def cost_total(cells: list[Cell]) -> Cost:
    total = Cost()
    for cell in cells:
        total.add(cell.cost)
    return total


def sizes_note(datasets: Mapping[str, str | None]) -> str:
    """Where the item counts come from, for the dry run."""
    parts = [f"{key}: {value or 'the embedded sample'}" for key, value in sorted(datasets.items())]
    return "; ".join(parts) if parts else "every benchmark: the embedded sample"


def relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
