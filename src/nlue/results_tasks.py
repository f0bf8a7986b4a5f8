"""The task files that the runs of a results folder need, found through the datasets the runs name.

A results file of a user's task (``<run>/<task>.json``) can only be read once that task is registered.
Its ``dataset`` says what it was scored on (``path``: where the data was read from; ``id``: as the user
named it), and a dataset built from a task file carries that file (``<dataset>/tasks/<task>.yaml``,
:mod:`nlue.registry.task_file.carry`). So `nlue report`, `nlue compare` and the Space, reading results
after the runs, register those carried files themselves: ``nlue report build/results`` shows a user's
task without ``--task-file``, as long as its dataset is still where the runs read it.

Only what is needed is read: a results file whose name is a registered task is not opened (its task
is known); one that names an unknown task is read under the limits of :mod:`nlue.results_files`, and
the datasets it names are used only when they are local folders carrying that task's file. Those
files are registered as a command registers a dataset's carried files (the same loader and checks;
a name already registered, by ``--task-file`` or another dataset, keeps its registered task). A
dataset whose carried files have a problem is a warning naming it and the results file: its runs stay
unknown and the reader lists them as left out, as it does without any task file. Hub datasets are not
asked: reading results never goes to the network (``--task-file`` names such a task).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.registry.spec import TaskSpec
from nlue.registry.task_file.carry import CARRIED_FOLDER, carried_task_files
from nlue.registry.task_file.register import registered_task_files
from nlue.registry.tasks import TASKS
from nlue.results_files import BadResultsFile, read_json_object
from nlue.results_folders import resolve_folders

logger = logging.getLogger(__name__)

MAX_PATH_CHARS = 4096  # a dataset path from a results file longer than any real one is not looked at


def _carrying(value: Any, task: str) -> Path | None:
    """The local dataset folder ``value`` (a results file's ``dataset.path`` or ``id``) when it carries ``task``."""
    if not isinstance(value, str) or not value or len(value) > MAX_PATH_CHARS or "\x00" in value:
        return None
    folder = Path(value).expanduser()
    try:
        carries = (folder / CARRIED_FOLDER / f"{task}.yaml").is_file()
    except (OSError, ValueError):  # a name the file system refuses
        return None
    return folder.resolve() if carries else None


def datasets_of_unknown_tasks(folders: Iterable[str | Path]) -> dict[Path, list[Path]]:
    """The local datasets carrying the task of a results file whose task is not registered: dataset -> the files.

    ``folders``: results, sweep or run folders (one that is not a folder is passed over).
    """
    found: dict[Path, list[Path]] = {}
    existing = [Path(f) for f in folders if Path(f).is_dir()]
    for folder in resolve_folders(existing, missing_ok=True) if existing else []:
        for path in sorted(folder.path.rglob("*.json")):
            if path.name.split(".")[0] in TASKS:
                continue  # <task>.json or <task>.human.json of a registered task: nothing to find
            try:
                data = read_json_object(path)
            except BadResultsFile as exc:  # the reader itself lists it with this reason
                logger.debug("not looking for task files through %s: %s", path, exc)
                continue
            task, dataset = data.get("task"), data.get("dataset")
            if not isinstance(task, str) or task in TASKS or not isinstance(dataset, dict):
                continue
            for value in (dataset.get("path"), dataset.get("id")):
                repo = _carrying(value, task)
                if repo is not None:
                    found.setdefault(repo, []).append(path)
                    break
    return found


@contextlib.contextmanager
def results_task_files(folders: Iterable[str | Path]) -> Iterator[tuple[TaskSpec, ...]]:
    """Register, while the block runs, the task files carried by the datasets that the runs of unknown tasks in
    ``folders`` name (:func:`datasets_of_unknown_tasks`); yields the tasks registered this way."""
    with contextlib.ExitStack() as stack:
        registered: list[TaskSpec] = []
        for repo, files in datasets_of_unknown_tasks(folders).items():
            try:
                tasks = stack.enter_context(registered_task_files(carried_task_files(str(repo)), keep_known=True))
            except NlueError as exc:  # TaskFileError included: every problem of the carried files, in its text
                logger.warning("the task files carried by %s (named by %s) cannot be used, so its runs stay "
                               "unknown: %s", repo, files[0], exc)  # fmt: skip
                continue
            logger.info("registered %s from the task files carried by %s (named by %s)",
                        ", ".join(t.name for t in tasks), repo, files[0])  # fmt: skip
            registered += tasks
        yield tuple({task.name: task for task in registered}.values())
