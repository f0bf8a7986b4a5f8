"""Loading a config of a built dataset repo: a Hub id, a local folder, or the sample.

With no dataset given, the embedded SAMPLE data is built once into a cache folder
(:func:`nlue.cache_root.nlue_cache_root`), keyed by a hash of the sample files so that an
edited sample is rebuilt, and loaded from there. Nothing is downloaded for the sample.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import datasets

from nlue.cache_root import nlue_cache_root
from nlue.data.build import build_repo
from nlue.data.discover import task_sources_from_folder
from nlue.data.report import REPORT_SUFFIX, BuildOptions
from nlue.data.sample import SAMPLE_TAG, sample_data_dir
from nlue.data.swap import card_digest, journal_path, settle
from nlue.errors import NlueError
from nlue.registry.tasks import TaskSpec

logger = logging.getLogger(__name__)


def cache_dir() -> Path:
    return nlue_cache_root()


def _sample_fingerprint() -> str:
    digest = hashlib.sha256()
    for path in sorted(sample_data_dir().rglob("*.jsonl")):
        digest.update(path.relative_to(sample_data_dir()).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def sample_repo(benchmark: str = "nlue") -> Path:
    """The built sample repo of ``benchmark`` (NLUE, the exams, neDIOM: one repo each), built on first use."""
    from nlue.registry.tasks import BENCHMARKS

    if benchmark not in BENCHMARKS:
        raise NlueError(f"unknown benchmark {benchmark!r}; expected one of {', '.join(BENCHMARKS)}")
    out = cache_dir() / f"sample-{_sample_fingerprint()}"
    repo = out / benchmark
    if not (repo / "README.md").is_file():
        logger.info("building the embedded sample data into %s", repo)
        options = BuildOptions(name=benchmark, is_sample=True, license="apache-2.0", show_progress=False)
        configs = [task.name for task in BENCHMARKS[benchmark].tasks]
        build_repo(task_sources_from_folder(sample_data_dir(), configs), out, options)
    return repo


def resolve_dataset(dataset: str | None, task: TaskSpec | None = None) -> str:
    """The path or Hub id to hand to ``load_dataset``: ``dataset``, or for None the sample repo of
    ``task``'s benchmark (NLUE's when no task is named)."""
    if dataset in (None, "", "sample"):
        if task is not None and not (sample_data_dir() / task.name).is_dir():
            raise NlueError(
                f"task {task.name!r} has no embedded sample data (nlue ships samples of its own tasks only); give "
                f"--dataset: the folder `nlue build --task-file FILE` wrote, or the dataset's Hub id"
            )
        return str(sample_repo(task.benchmark if task is not None else "nlue"))
    folder = Path(str(dataset)).expanduser()
    if (
        looks_like_a_path(str(dataset))
        and not folder.exists()
        and not journal_path(folder.parent, folder.name).exists()
    ):
        # (a build killed between its renames leaves no folder but a journal: the load finishes the swap)
        raise NlueError(f"--dataset {dataset}: no such folder (a Hub id is `name` or `owner/name`; a built dataset "
                        "is the folder `nlue build --out` wrote, such as build/nlue)")  # fmt: skip
    return str(folder) if str(dataset).startswith("~") else str(dataset)


def looks_like_a_path(dataset: str) -> bool:
    """Whether ``dataset`` can only be a local path: it starts with ``.``, ``/`` or ``~``, or has more parts than
    a Hub id's ``owner/name`` (so a missing one is bad input, not a Hub that cannot be reached)."""
    return dataset.startswith((".", "/", "~")) or dataset.replace("\\", "/").count("/") > 1


def load_task(dataset: str | None, task: TaskSpec) -> datasets.DatasetDict:
    """All splits of ``task`` from ``dataset`` (Hub id, local path, or None for the sample)."""
    source = resolve_dataset(dataset, task)
    settle_local_build(Path(source))
    logger.info("loading %s / %s", source, task.name)
    try:
        return datasets.load_dataset(source, task.name)
    except ConnectionError as exc:  # still a failure outside nlue (exit 1), but say where else it was looked for
        if Path(source).exists():
            raise
        raise ConnectionError(f"{exc}; nor is there a folder {source} here (`nlue build --out build` writes "
                              "build/nlue)") from None  # fmt: skip
    except ValueError as exc:  # datasets' "BuilderConfig 'x' not found": a dataset of other tasks is bad input
        try:
            configs = datasets.get_dataset_config_names(source)
        except (OSError, ValueError):
            raise exc from None
        if task.name in configs:
            raise
        raise NlueError(f"{dataset or source} has no config {task.name!r}; its configs: {', '.join(configs)}") from None


def settle_local_build(repo: Path) -> None:
    """Before a local build is read: finish a swap a killed build left half done, and say so; warn when the
    report beside the repo describes another build (:mod:`nlue.data.swap`)."""
    out_dir, name = repo.parent, repo.name
    if not repo.is_dir() and not journal_path(out_dir, name).exists():
        return  # a Hub id, or nothing there
    try:
        finished = settle(out_dir, name)
    except OSError as exc:
        logger.warning("%s: a killed build left its swap unfinished and it cannot be finished here (%s); "
                       "run `nlue build` into %s again", repo, exc, out_dir)  # fmt: skip
        return
    if finished is not None:
        logger.warning("%s", finished)
    report = out_dir / f"{name}{REPORT_SUFFIX}"
    try:
        described = json.loads(report.read_text(encoding="utf-8")).get("card_sha256")
    except (OSError, ValueError, AttributeError):
        return  # no report (a repo downloaded or copied alone), or not ours
    if described is not None and described != card_digest(repo):
        logger.warning("%s describes another build than the one in %s (its card differs)", report, repo)


def is_sample(dataset: str | None) -> bool:
    """True for the embedded sample, also when given as the folder of a sample build (its card says so)."""
    if dataset in (None, "", "sample"):
        return True
    card = Path(str(dataset)) / "README.md"
    if not card.is_file():
        return False
    stat = card.stat()
    return _card_has_sample_tag(str(card.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _card_has_sample_tag(card: str, mtime_ns: int, size: int) -> bool:
    """Read a card's tags once per version of the file (a run asks for every task it scores)."""
    from huggingface_hub import DatasetCard

    return SAMPLE_TAG in (DatasetCard.load(card).data.tags or [])


def dataset_description(dataset: str | None, config: str, split: str, **extra: Any) -> dict[str, Any]:
    """What a results file says about the data it was scored on (one shape for every command).

    ``id`` as the user named it, ``path`` where it was read from, the ``config`` and ``split``,
    and ``is_sample`` so that scores on the embedded sample are never mistaken for real ones.
    """
    from nlue.registry.tasks import TASKS

    return {
        "id": dataset or "nlue sample data",
        "path": resolve_dataset(dataset, TASKS.get(config)),
        "config": config,
        "split": split,
        "is_sample": is_sample(dataset),
        **extra,
    }
