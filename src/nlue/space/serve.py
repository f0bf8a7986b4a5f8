"""Starting the Space: ``python spaces/nlue/app.py``, or ``nlue space`` through the CLI.

:func:`add_space_arguments` and :func:`run_space_command` are what the CLI's ``space``
sub-command wires in; :func:`launch` is what both entry points end in.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from nlue.cli_lists import add_name_list
from nlue.cli_support import (
    add_logging_options,
    run_with_parser,
)
from nlue.errors import NlueError
from nlue.space.settings import DEFAULT_MODELS, DEFAULT_RESULTS, SpaceSettings

logger = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7860


def quiet_gradio() -> None:
    """No telemetry or update check: the Space makes no network call of its own."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def build_demo(settings: SpaceSettings) -> Any:
    """The Space's ``gr.Blocks``, queue set up, not yet launched."""
    quiet_gradio()
    from nlue.space.ui import build_demo as build

    return build(settings)


def launch(
    settings: SpaceSettings,
    demo: Any = None,
    host: str | None = None,
    port: int | None = None,
    block: bool = True,
    **launch_kwargs: Any,
) -> Any:
    """Serve ``demo`` (built from ``settings`` when None); with ``block=False`` return it running (tests, benchmarks).

    The host is ``host``, else ``$GRADIO_SERVER_NAME`` (the Hub sets 0.0.0.0), else loopback.
    """
    from nlue.space.http_api import with_routes
    from nlue.space.ui import launch_options

    demo = demo if demo is not None else build_demo(settings)
    launch_kwargs = with_routes(demo, launch_kwargs)  # classify's own route: refusals get a 4xx
    logger.info(
        "limits: batches of up to %d predictions (%d let in at once), %d GMET calls and %d data events at once, "
        "%d places in the queue",
        settings.max_batch_size,
        settings.predict_concurrency,
        settings.model_concurrency,
        settings.data_concurrency,
        settings.queue_size,
    )
    demo.launch(
        server_name=host or os.environ.get("GRADIO_SERVER_NAME") or DEFAULT_HOST,
        server_port=port or int(os.environ.get("GRADIO_SERVER_PORT") or DEFAULT_PORT),
        prevent_thread_lock=not block,
        show_error=True,
        **launch_options(settings),
        **launch_kwargs,
    )
    return demo


def add_space_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``nlue space``."""
    parser.add_argument(
        "--models",
        type=Path,
        help=f"models file (.yaml/.json) or folder to scan for checkpoints "
        f"(default: $NLUE_SPACE_MODELS or {DEFAULT_MODELS})",
    )
    parser.add_argument(
        "--results-dir",
        "--results",
        dest="results",
        type=Path,
        nargs="+",
        metavar="RESULTS",
        help=f"results folders or sweep folders (build/sweep/<name>), shown together, each run named after its "
        f"folder when several (default: $NLUE_SPACE_RESULTS, else $NLUE_RESULTS_DIR, else {DEFAULT_RESULTS}: "
        "where every command writes its results)",
    )
    add_name_list(
        parser,
        "--dataset",
        what="dataset",
        help="datasets for the data browser, Hub ids or folders, each config read from the first that has it "
        "(`sample`: the embedded sample; default: $NLUE_SPACE_DATASET or the sample)",
    )
    parser.add_argument(
        "--task-file",
        dest="task_files",
        type=Path,
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE",
        help="task files (or folders of them, or benchmark files) of your own tasks, shown beside the shipped "
        "ones: Try a model, Browse data, the leaderboard (also: $NLUE_TASK_FILES, separated by ':')",
    )
    parser.add_argument(
        "--host", help=f"address to listen on (default: $GRADIO_SERVER_NAME or {DEFAULT_HOST}; 0.0.0.0 for all)"
    )
    parser.add_argument("--port", type=int, help=f"port (default: $GRADIO_SERVER_PORT or {DEFAULT_PORT})")


def run_space_command(args: argparse.Namespace) -> int:
    """``nlue space``: serve until interrupted."""
    if args.port is not None and not 0 < args.port < 65536:
        raise NlueError(f"--port must be a TCP port, 1-65535, got {args.port}")
    for folder in args.results or ():
        if folder.is_file():
            raise NlueError(f"--results-dir {folder} is a file; give the folder of <model>/<task>.json files")
    settings = SpaceSettings.from_env(models=args.models, results_dir=args.results, dataset=args.dataset)
    with space_task_files(settings, getattr(args, "task_files", None) or ()):  # for the Space's whole life
        launch(settings, host=args.host, port=args.port, block=True)
    return 0


def space_task_files(settings: SpaceSettings, task_files: Sequence[str | Path] = ()) -> Any:
    """The Space's own tasks, registered while the returned context runs: ``task_files`` (``--task-file``), those of
    ``NLUE_TASK_FILES`` and those its datasets carry (a build of a task file needs no ``--task-file``), through the
    one function every command registers with (:func:`nlue.registry.task_file.activate.activated_task_files`); then
    those carried by the local datasets its results files name (:mod:`nlue.results_tasks`), as `nlue report` does."""
    from nlue.registry.task_file.activate import activated_task_files
    from nlue.results_tasks import results_task_files

    @contextlib.contextmanager
    def registered() -> Iterator[tuple[Any, ...]]:
        # In this order: the results' datasets are looked at only for tasks still unknown once the others are in.
        with (
            activated_task_files(task_files, settings.datasets) as given,
            results_task_files(folder.path for folder in settings.results_folders) as found,
        ):
            tasks = (*given, *found)
            if tasks:
                logger.info("tasks of your own: %s", ", ".join(task.name for task in tasks))
            yield tasks

    return registered()


def main(argv: list[str] | None = None) -> int:
    """``python -m nlue.space``: the same options, errors and exit codes as ``nlue space``."""
    parser = argparse.ArgumentParser(prog="nlue space", description="Serve the NLUE Gradio Space.")
    add_space_arguments(parser)
    add_logging_options(parser)
    return run_with_parser("space", parser, argv, run_space_command)
