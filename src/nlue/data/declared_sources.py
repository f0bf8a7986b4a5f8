"""The sources of tasks that declare their data (a task file's ``data:``), for `nlue build --task-file FILE`.

Each split a task file declares is read from where it says, with its own column and label maps:

* a local file (``path``, relative to the task file, and ``format``, by default from its suffix); a
  file whose suffix does not give its format is read through a link named by the format;
* a Hub dataset (``hub``, ``config``, ``split``, ``revision``): fetched with ``datasets.load_dataset``
  into a Parquet file in a temporary folder that lives as long as the build. Offline, or when the Hub
  cannot be reached, that is an error saying so (exit 1), naming the task and split; a dataset, config
  or split the Hub does not have is bad input (exit 2).

With ``--source`` too, the source folder's ``<task>/<split>.<ext>`` files win for the splits they hold
(read with the task's own field and label names, as every ``--source`` file is); the declared files
give the other splits.
"""

from __future__ import annotations

import contextlib
import logging
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from nlue.data.mapping import FieldMapping
from nlue.data.report import TaskSources
from nlue.errors import NlueError, ServiceError
from nlue.registry.spec import SplitSource, TaskSpec

logger = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@contextlib.contextmanager
def declared_sources(
    tasks: Sequence[TaskSpec], from_folder: Mapping[str, Mapping[str, list[Path]]] | None = None
) -> Iterator[list[TaskSources]]:
    """The build sources of ``tasks``, from their declared data and ``from_folder`` (``--source``'s files,
    config -> split -> files), valid while the block runs (a Hub split's Parquet lives in a temporary folder)."""
    with tempfile.TemporaryDirectory(prefix="nlue-declared-") as folder:
        yield [task_sources(task, (from_folder or {}).get(task.name, {}), Path(folder)) for task in tasks]


def task_sources(task: TaskSpec, from_folder: Mapping[str, list[Path]], folder: Path) -> TaskSources:
    """One task's files per split, each declared split read with its own column and label maps."""
    files: dict[str, list[Path]] = {}
    mappings: dict[str, FieldMapping] = {}
    for split, source in task.data.items():
        if split in from_folder:
            logger.info("%s/%s: read from the --source folder, not from %s", task.name, split, task.task_file)
            continue
        files[split] = [_local(task, split, source, folder) if source.path else _from_hub(task, split, source, folder)]
        mappings[split] = FieldMapping(dict(source.columns), dict(source.labels))
    files.update({split: list(paths) for split, paths in from_folder.items()})
    if not files:
        raise NlueError(
            f"task {task.name!r} declares no data ({task.task_file or 'no task file'} has no data: key) and no "
            f"--source folder holds {task.name}/: declare where its splits come from (data:), or give --source, or "
            f"--task {task.name} with --train/--validation/--test"
        )
    return TaskSources(task, {split: files[split] for split in task.splits if split in files}, FieldMapping(), mappings)


def _local(task: TaskSpec, split: str, source: SplitSource, folder: Path) -> Path:
    path = Path(str(source.path))
    if source.format is None or path.suffix.lower() == f".{source.format}":
        return path
    link = folder / f"{task.name}-{split}" / f"{path.stem}.{source.format}"  # the readers go by the suffix
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(path.resolve())
    return link


def _from_hub(task: TaskSpec, split: str, source: SplitSource, folder: Path) -> Path:
    """The Hub split written to a Parquet file in ``folder``."""
    import datasets

    wanted = source.split or split
    where = f"{source.hub_id}" + (f" (config {source.config})" if source.config else "") + f", split {wanted}"
    where += f" at revision {source.revision}" if source.revision else ""
    logger.info("%s/%s: fetching %s from the Hub", task.name, split, where)
    try:
        data = datasets.load_dataset(str(source.hub_id), source.config, split=wanted, revision=source.revision)
    except ConnectionError as exc:
        raise ServiceError(
            f"task {task.name!r}: its {split} split comes from the Hub dataset {where}, which could not be fetched "
            f"({' '.join(str(exc).split())[:300]}). Online (HF_HUB_OFFLINE and HF_DATASETS_OFFLINE unset) nlue "
            f"fetches it; offline, save the split to a file and declare it as data: {split}: {{path: FILE}}, or give "
            "--source"
        ) from None
    except (OSError, ValueError) as exc:  # no such dataset, config or split: the declaration names what is not there
        raise NlueError(
            f"task {task.name!r}: the Hub dataset {where} that {task.task_file} declares for {split} cannot be "
            f"loaded: {' '.join(str(exc).split())[:300]}"
        ) from None
    if not isinstance(data, datasets.Dataset):
        raise NlueError(f"task {task.name!r}: {where} is not one split; name the split (data: {split}: split:)")
    path = folder / f"{_UNSAFE.sub('_', str(source.hub_id))}-{_UNSAFE.sub('_', wanted)}.parquet"
    data.to_parquet(str(path))
    return path
