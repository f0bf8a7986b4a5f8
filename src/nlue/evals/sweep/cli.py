"""`nlue sweep ROSTER`: models x benchmarks x settings, each cell a call of an nlue sub-command.

    nlue sweep --list                              the rosters that come with nlue (the papers' models, tiny)
    nlue sweep --make-tiny-models build/tiny-models   the three tiny local models the `tiny` roster runs
    nlue sweep tiny --dry-run                      the grid, its commands and what it would cost
    nlue sweep tiny                                run it; run it again to finish what a kill interrupted
    nlue sweep my-roster.yaml --dataset nlue=build/nlue --out build/sweep/mine --models xlmr muril
    nlue sweep tiny --shard 2/3                    only shard 2 of 3 (one job of a Slurm array, one Ray task)
    nlue sweep tiny --collect                      once every shard has ended: the whole grid's summary
    nlue sweep tiny --collect --from job1 --from job2   ... of jobs that ran into folders of their own

ROSTER is a YAML file or the name of a shipped roster (`nlue sweep --list`). The whole roster is
checked first, and every problem reported at once (file, place in the YAML, what was expected).
Each cell runs in a child process, its output in <out>/sweep/logs/<cell>.log; a cell done before
(its marker in <out>/sweep/done/) is skipped, a failed one is recorded and the sweep goes on
(--stop-on-failure to stop). The sweep ends with a summary table, also written to
<out>/results/summary.md and summary.csv. Jobs may run into one --out at once (--shard K/N cuts the
grid into N parts by cost; each job claims a results group, the cells writing one results folder
name, before running it, and passes over a group a live job holds; a killed job's groups are free at
once): --collect then writes the whole grid's summary. Exit codes: 0 every cell done, 1 a cell failed (its own
code is in the summary), 2 a bad roster, 130 interrupted.

roster (YAML; src/nlue/rosters/tiny.yaml is an annotated example):
  name, out, datasets: {nlue | mcq | nediom: a built folder or Hub id; left out: the embedded sample},
  task_files: [task files, folders or benchmark files of your own tasks; datasets: names their benchmarks too],
  defaults: {limit, bootstrap_resamples, seed, ...: settings every run takes}
  models: - {name, id: Hub id, folder or served name, kind: encoder | masked-lm | causal-lm | served,
             endpoint, api_key_env, options: {dtype, concurrency, ...}, params, hub_id_guess, note, paper_name}
  runs:   - {run: train, tasks, presets: [I .. VIII, lora], paper_hparams, seeds, epochs, learning_rate, batch_size}
          - {run: llm nlue | llm mcq, tasks, prompt_languages: [en, native], modes, shots, max_new_tokens, choices}
          - {run: gmet}
          - {run: idioms, settings: [zero-shot, 5-shot, 10-shot], contexts, idiom, prompt_languages, modes, seeds}
  every run also takes models (default: every model of a kind it runs), label, limit, bootstrap_resamples,
  seed and args (passed to the command as they are). One cell per model and per value of modes, shots,
  presets, settings and (train, llm mcq) tasks; both prompt languages, llm nlue's tasks and neDIOM's
  contexts go into one call of the command.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.cli_lists import add_name_list, unknown_names_message
from nlue.cli_support import add_logging_options, add_task_file_option, command_parser, run_with_parser
from nlue.errors import NlueError
from nlue.evals.sweep.cells import START_METHODS
from nlue.evals.sweep.grid import Cell, Cost, build_grid, cost_total, sizes_note
from nlue.evals.sweep.roster import DATASET_KEYS, Roster, load_roster, roster_sources
from nlue.evals.sweep.roster_runs import COMMANDS
from nlue.evals.sweep.shards import parse_shard, partition, shard_cells, work
from nlue.text.safe import terminal_safe
from nlue.text_table import text_table

DEFAULT_TINY_MODELS = Path("build") / "tiny-models"


def shipped_rosters() -> dict[str, Path]:
    """The rosters that come with nlue, by name: ``src/nlue/rosters/<name>.yaml``."""
    folder = Path(__file__).resolve().parents[2] / "rosters"  # src/nlue/rosters
    return {path.stem: path for path in sorted(folder.glob("*.yaml"))}


def roster_file(value: str) -> Path:
    path = Path(value)
    if path.is_file():
        return path
    shipped = shipped_rosters()
    if value in shipped:
        return shipped[value]
    raise NlueError(f"no roster file {value!r}, and no shipped roster of that name ({', '.join(shipped)})")


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("nlue sweep", __doc__)
    parser.add_argument("roster", nargs="?", help="a roster YAML file, or a shipped roster's name (--list)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the grid, each cell's command and the cost; load no model, write nothing")  # fmt: skip
    parser.add_argument("--out", type=Path, help="output folder (default: the roster's out, else build/sweep/<name>)")
    parser.add_argument("--dataset", action="append", default=[], metavar="BENCHMARK=PATH",
                        help=f"a benchmark's dataset, replacing the roster's ({', '.join(DATASET_KEYS)}, or a "
                        "benchmark of the roster's task_files; repeatable)")  # fmt: skip
    add_name_list(parser, "--models", what="model", metavar="NAME", help="only these models of the roster")
    add_task_file_option(parser)  # beside the roster's task_files: each cell that runs one of their tasks names them
    parser.add_argument("--limit", type=int, help="every run on the first N items only (a quick look, not a score)")
    parser.add_argument("--stop-on-failure", action="store_true", help="stop at the first failed cell")
    parser.add_argument("--start", choices=START_METHODS, help="how a cell's process starts: fork (Linux default: "
                        "libraries imported once) or spawn (a fresh python -m nlue.cli)")  # fmt: skip
    parser.add_argument("--shard", metavar="K/N", help="run only shard K of N: the roster's cells cut into N parts "
                        "by their cost, the same on every machine (a Slurm array task, a Ray task); jobs may share "
                        "one --out. With --dry-run: list the shards and shard K's cells")  # fmt: skip
    parser.add_argument("--collect", action="store_true", help="run nothing: gather what the jobs (shards) left in "
                        "--out, write the summary of the whole grid and print it; exit 1 while a cell is not done")  # fmt: skip
    parser.add_argument("--from", dest="sources", action="append", type=Path, default=[], metavar="DIR",
                        help="with --collect: first gather the cells done in DIR, the --out of a job that ran into "
                        "a folder of its own (repeatable); a cell done twice must give the same numbers")  # fmt: skip
    parser.add_argument("--list", action="store_true", help="list the shipped rosters and exit")
    parser.add_argument("--make-tiny-models", nargs="?", const=DEFAULT_TINY_MODELS, type=Path, metavar="DIR",
                        help=f"write the three tiny random models the tiny roster runs (default {DEFAULT_TINY_MODELS})")  # fmt: skip
    add_logging_options(parser, quiet_help="no progress bar; warnings and errors only")
    return parser


def _datasets(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise NlueError(f"--dataset expects BENCHMARK=PATH, e.g. nlue=build/nlue (got {pair!r})")
        out[key.strip()] = value.strip()
    return out


def _select(roster: Roster, models: Sequence[str] | None, limit: int | None) -> Roster:
    if limit is not None and limit < 1:
        raise NlueError(f"--limit must be at least 1, got {limit}")
    runs = roster.runs
    if limit is not None:
        runs = tuple(dataclasses.replace(r, settings={**r.settings, "limit": limit}) for r in runs)
    if models:
        names = [m.name for m in roster.models]
        unknown = [m for m in models if m not in names]
        if unknown:  # the roster's models are known only now, after the parser split the list
            raise NlueError("--models: " + unknown_names_message(unknown, names, "model", where="in the roster"))
        kept = tuple(m for m in roster.models if m.name in models)
        return dataclasses.replace(roster, models=kept, runs=runs)
    return dataclasses.replace(roster, runs=runs)


def _cost_text(cost: Cost) -> str:
    parts = []
    if cost.trainings:
        parts.append(f"{cost.trainings:,} training{'s' if cost.trainings > 1 else ''}")
    if cost.requests:
        parts.append(f"{cost.requests:,} requests" + (f" ({cost.served_requests:,} to endpoints)"
                                                       if cost.served_requests else ""))  # fmt: skip
    if cost.gmet_items:
        parts.append(f"{cost.gmet_items:,} GMET items")
    return ", ".join(parts) + ("*" if cost.estimated else "") or "-"


def print_dry_run(roster: Roster, cells: Sequence[Cell]) -> None:
    from nlue.evals.sweep.run import SweepState

    state = SweepState(roster.out)
    rows = [["#", "state", "model", "command", "setting", "cost"]]
    commands = []
    running: dict[str, str] = {}  # results group -> the live job whose claim names it
    for number, cell in enumerate(cells, start=1):
        status = state.status(cell)
        if status != "done" and cell.results_name not in running:
            running[cell.results_name] = state.live_claim(cell.results_name)
        status = "running" if status != "done" and running[cell.results_name] else status
        rows.append([str(number), status, cell.model, cell.command, cell.setting, _cost_text(cell.cost)])
        commands.append(f"{number:>3}  nlue {shlex.join(cell.argv)}")
    print(f"roster {roster.name} ({roster.path}): {len(roster.models)} models, {len(cells)} cells, out {roster.out}")
    models = [["model", "kind", "id", "params", "where the id comes from"]]
    for m in roster.models:
        source = "our guess at the paper's checkpoint" if m.hub_id_guess else ("an API" if m.endpoint else "as given")
        models.append([m.name, m.kind, m.id + (f" at {m.endpoint}" if m.endpoint else ""), m.params or "", source])
    print(text_table(models) + "\n")
    print(text_table(rows))
    print("\ncommands:")
    print("\n".join(commands))
    for name, holder in running.items():
        if holder:
            print(f"running: {terminal_safe(name)} held by {terminal_safe(holder)}")
    total = cost_total(cells)
    todo = [c for c in cells if state.status(c) != "done"]
    print(f"\ncost of the whole grid: {_cost_text(total)}")
    print(f"still to run: {len(todo)} of {len(cells)} cells, {_cost_text(cost_total(todo))}")
    print("trainings count each seed; log-likelihood requests one per label or choice, generation one per item, "
          "each prompt language apart")  # fmt: skip
    used = {COMMANDS[c.command].benchmark for c in cells}
    print(f"items from: {sizes_note({k: v for k, v in roster.datasets.items() if k in used} or dict.fromkeys(used))}")
    if total.estimated:
        print("* some sizes are the paper's test sizes: a Hub dataset is not downloaded for a dry run")
    if total.probed:
        print("mode auto on a served model: one probe request decides; counted here as generation")
    served = sorted(
        {(m.name, m.endpoint) for m in roster.models if m.endpoint and any(c.model == m.name for c in cells)}
    )
    for name, endpoint in served:
        print(f"{name}: requests go to {endpoint}")
    print("dry run: no model was loaded and nothing was written")


def print_shards(cells: Sequence[Cell], shard: int, count: int) -> None:
    """Each shard's size and work, this job's marked: the partition every job computes alike."""
    rows = [["shard", "cells", "results groups", "work"]]
    for number, part in enumerate(partition(cells, count), start=1):
        groups = len({c.results_name for c in part})
        mark = " <- this job" if number == shard else ""
        rows.append([f"{number}/{count}{mark}", str(len(part)), str(groups), f"{sum(work(c) for c in part):,}"])
    print(text_table(rows))
    print("work: model requests, plus 1,000 per fine-tuning and 7 per GMET item; a results group (the cells writing one "
          "results folder name: a model's, or a labelled run's) is never split\n")  # fmt: skip


def make_tiny_models(folder: Path) -> None:
    from nlue.lm.tiny import save_tiny_causal_lm, save_tiny_encoder

    made = {
        "encoder": save_tiny_encoder(folder / "encoder", "bert", seed=0),
        "masked-lm": save_tiny_encoder(folder / "masked-lm", "roberta", seed=1),
        "causal-lm": save_tiny_causal_lm(folder / "causal-lm", "llama", seed=2),
    }
    for kind, path in made.items():
        print(f"{kind:<10} {path}")
    print("tiny random models (no pretraining): they show the tools working; their scores mean nothing")


def run(args: argparse.Namespace) -> int:
    if args.list:
        for name, path in shipped_rosters().items():
            print(f"{name:<16} {path}")
        return 0
    if args.make_tiny_models is not None:
        make_tiny_models(args.make_tiny_models)
        if args.roster is None:
            return 0
    if args.roster is None:
        raise NlueError("name a roster file or a shipped roster (nlue sweep --list), or --make-tiny-models")
    from nlue.evals.sweep.run import SweepOptions
    from nlue.registry.task_file.activate import activated_task_files

    # Decided before the checks below import anything: parsing a fine-tuning cell's arguments imports
    # transformers and torch, which runs nothing, so forking stays safe (sweep_cells.default_start).
    options = SweepOptions(stop_on_failure=args.stop_on_failure, progress=not getattr(args, "quiet", False))
    options.start = args.start or options.start
    path, datasets = roster_file(args.roster), _datasets(args.dataset)
    files, named, names = roster_sources(path, datasets)
    # The roster's task files and those its datasets carry, registered while the roster is checked, its grid
    # built and its scores read; each cell that runs a user's task names the files itself (--task-file).
    with activated_task_files(files, named, names, environ={}):
        return _run_roster(args, path, datasets, options)


def _run_roster(args: argparse.Namespace, path: Path, datasets: dict[str, str], options: Any) -> int:
    from nlue.evals.sweep.run import run_sweep

    roster = load_roster(path, args.out, datasets)
    if args.task_file:
        roster = dataclasses.replace(roster, task_files=(*roster.task_files, *map(str, args.task_file)))
    roster = _select(roster, args.models, args.limit)
    cells = build_grid(roster)
    from nlue.evals.sweep.check import check_cells

    check_cells(cells, str(roster.path), [run.where for run in roster.runs if run.args])
    if args.collect and (args.shard or args.dry_run):
        raise NlueError("--collect runs nothing and reads the whole grid: give it without --shard and --dry-run")
    if args.sources and not args.collect:
        raise NlueError("--from names the folders --collect gathers from: give it with --collect")
    shard = parse_shard(args.shard) if args.shard else None
    if shard is not None:
        print_shards(cells, *shard)
        cells = shard_cells(cells, *shard)
    if args.dry_run:
        print_dry_run(roster, cells)
        return 0
    from nlue.evals.sweep.summary import collect_scores, console_summary, write_summary

    if args.collect:
        from nlue.evals.sweep.gather import gather
        from nlue.evals.sweep.run import collected

        if args.sources:
            count = gather(cells, roster.out, args.sources)
            print(f"gathered {count} done cells into {roster.out} from {', '.join(map(str, args.sources))}")
        outcome = collected(cells, roster.out)
    else:
        outcome = run_sweep(cells, roster.out, options)
    results = roster.out / "results"
    scores = collect_scores(outcome, results)
    name = roster.name + (f" (shard {shard[0]}/{shard[1]})" if shard else "")
    print(console_summary(name, outcome, scores))
    if shard is None:  # a shard's summary would be a part of the grid's: --collect writes the whole one
        written = write_summary(results, roster.name, outcome, scores)
        print(f"summary: {', '.join(map(str, written))}; cell logs: {roster.out / 'sweep' / 'logs'}")
    else:
        print(f"cell logs: {roster.out / 'sweep' / 'logs'}; once every shard has ended, the whole grid's summary: "
              f"nlue sweep {shlex.quote(str(args.roster))} --out {shlex.quote(str(roster.out))} --collect")  # fmt: skip
    if outcome.interrupted:
        print("interrupted: run the same command again to go on")
        return 130
    unfinished = len(outcome.outcomes) - outcome.count("done") - outcome.count("ran") - outcome.count("failed")
    if args.collect and unfinished:
        print(f"{unfinished} cells not done yet: a job is still running them, or run their shard again")
    return 1 if outcome.count("failed") or (args.collect and unfinished) else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue sweep` with ``argv``; return the exit status."""
    return run_with_parser("sweep", build_parser, argv, run)
