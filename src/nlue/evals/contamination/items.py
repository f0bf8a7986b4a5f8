"""The test items a check reads: every task of a built dataset, and the English texts they were translated from.

An item's texts are the string values of its task kind's identity fields (what a model is shown:
a premise and a hypothesis, a question and its options), each kept apart. Its id and input fingerprint
are those of its per-item predictions (:mod:`nlue.predictions`), so a report can leave a contaminated
item out of a score by either.

A mask-filling item (GMET) holds its blank as the task's placeholder (``[MASK]``), which no corpus holds:
its sentence is checked as a corpus would hold it, the blank filled with the item's first accepted answer
(its gold); an item without answers (the paper's release gives none) is checked as the two sides of its blank,
each a text of its own (:func:`check_texts`).

A built dataset keeps no English source: the builder stores the task's fields only. The translations
``nlue translate`` wrote do (``<out>/<config>/<split>.translated.jsonl``, each row's
``provenance.source_text``); given with ``--sources``, they are joined to the built items by the item's
text fields, normalised as the builder normalised them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from nlue.errors import NlueError
from nlue.evals.contamination.corpus import json_lines
from nlue.evals.contamination.measures import Item
from nlue.predictions import input_fingerprint, item_id
from nlue.registry.spec import TaskSpec
from nlue.text.profiles import profile_of

logger = logging.getLogger(__name__)

SOURCES_SUFFIX = ".translated.jsonl"


def dataset_tasks(dataset: str, wanted: Sequence[str] | None, split: str) -> list[TaskSpec]:
    """The registered tasks of ``dataset`` that have ``split`` (``wanted``: only these, each required)."""
    import datasets

    from nlue.data.access import resolve_dataset
    from nlue.registry.tasks import TASKS

    source = resolve_dataset(dataset)
    try:
        configs = datasets.get_dataset_config_names(source)
    except (FileNotFoundError, datasets.exceptions.DatasetNotFoundError) as exc:
        raise NlueError(f"--dataset {dataset}: no built dataset there ({exc})") from None
    if wanted:
        missing = [name for name in wanted if name not in configs]
        if missing:
            raise NlueError(
                f"--dataset {dataset} has no config {', '.join(missing)}; its configs: {', '.join(configs)}"
            )
        names = list(wanted)
    else:
        names = [name for name in configs if name in TASKS]
        unknown = [name for name in configs if name not in TASKS]
        if unknown:
            logger.warning("configs that are no registered task are not checked (give their --task-file): %s",
                           ", ".join(unknown))  # fmt: skip
    tasks = [TASKS[name] for name in names if name in TASKS]
    if not any(split in task.splits for task in tasks):
        raise NlueError(f"--dataset {dataset}: no task with a {split!r} split among {', '.join(names) or 'none'}")
    return [task for task in tasks if split in task.splits]


def check_texts(task: TaskSpec, row: dict) -> tuple[str, ...]:
    """The item's texts as a corpus would hold them: its identity fields' text, a mask-filling task's blank filled
    with the first accepted answer, or (no answer) the text on each side of the blank as two texts."""
    fields = task.kind.identity_fields(task)
    texts = tuple(value for name in fields if isinstance(value := row.get(name), str) and value.strip())
    if not task.mask:
        return texts
    answers = [a.strip() for a in row.get("answers") or () if isinstance(a, str) and a.strip()]
    filled: list[str] = []
    for text in texts:
        if task.mask not in text:
            filled.append(text)
        elif answers:
            filled.append(text.replace(task.mask, answers[0]))
        else:
            filled += [side.strip() for side in text.split(task.mask) if side.strip()]
    return tuple(filled)


def task_items(
    dataset: str, task: TaskSpec, split: str, sources: dict[tuple[str, ...], tuple[str, ...]] | None = None
) -> list[Item]:
    """The ``split`` items of ``task`` in ``dataset`` (a folder, a Hub id, or ``sample``), each with its English
    source texts where ``sources`` (:func:`english_sources`) has them."""
    from nlue.data.access import load_task

    profile = profile_of(task).name
    rows = load_task(None if dataset == "sample" else dataset, task)[split]
    items = []
    for position, row in enumerate(rows):
        english = None
        if sources:
            key = _join_key(task, (row.get(name) for name in task.text_fields))
            english = sources.get(key) if key is not None else None
        items.append(Item(task.name, item_id(row, position), input_fingerprint(task, row), check_texts(task, row),
                          profile, english))  # fmt: skip
    return items


def _join_key(task: TaskSpec, values: Iterable[object]) -> tuple[str, ...] | None:
    normalize = profile_of(task).normalizer()
    texts = [normalize(v) if isinstance(v, str) else None for v in values]
    return None if None in texts else tuple(texts)  # type: ignore[return-value]


def source_files(paths: Sequence[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(path.rglob(f"*{SOURCES_SUFFIX}"))
        elif path.is_file():
            found.append(path)
        else:
            raise NlueError(f"--sources {path}: no such file or folder")
    return found


def english_sources(
    paths: Sequence[Path], tasks: Sequence[TaskSpec]
) -> dict[str, dict[tuple[str, ...], tuple[str, ...]]]:
    """Per task: an item's normalised text fields -> its English source texts, from ``nlue translate``'s files.

    A file's task is its folder's name (``<config>/<split>.translated.jsonl``); a file of no checked task is
    skipped and said.
    """
    by_name = {task.name: task for task in tasks}
    joined: dict[str, dict[tuple[str, ...], tuple[str, ...]]] = {}
    for path in source_files(paths):
        task = by_name.get(path.parent.name)
        if task is None:
            logger.warning("%s: its folder names no checked task (%s); its sources are not used", path,
                           ", ".join(by_name))  # fmt: skip
            continue
        table = joined.setdefault(task.name, {})
        for _number, record, where in json_lines(path):
            source = record.get("provenance", {}).get("source_text") if isinstance(record, dict) else None
            if not isinstance(source, dict):
                raise NlueError(f"{where}: field 'provenance.source_text' missing; nlue translate writes it "
                                "(a file of English sources is a <split>.translated.jsonl)")  # fmt: skip
            key = _join_key(task, (record.get(name) for name in task.text_fields))
            english = tuple(v for name in task.text_fields if isinstance(v := source.get(name), str) and v.strip())
            if key is None or not english:
                raise NlueError(f"{where}: fields {', '.join(task.text_fields)} must be text, in the row and in "
                                "provenance.source_text")  # fmt: skip
            table[key] = english
    return joined
