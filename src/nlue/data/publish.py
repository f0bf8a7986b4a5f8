"""Publishing a built folder (dataset repo, metric, model) to the Hugging Face Hub.

The token comes from huggingface_hub's usual sources (``HF_TOKEN`` or ``hf auth
login``); we never print it or write it anywhere. ``dry_run`` lists exactly what would
be uploaded and touches no network.

The files the Hub itself reads besides the card are read back and checked before anything is
sent, and summarised in :attr:`UploadPlan.hub_files`: a dataset repo's benchmark file
``eval.yaml`` (:mod:`nlue.data.hub_benchmark`) and a model repo's ``.eval_results/*.yaml``
(:mod:`nlue.data.hub_eval_results`). One that breaks the Hub's format is refused with every problem.
"""

from __future__ import annotations

import fnmatch
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from huggingface_hub.constants import EVAL_RESULTS_FOLDER

from nlue.data.hub_benchmark import benchmark_summary, read_benchmark_file
from nlue.data.hub_eval_results import eval_results_summary
from nlue.errors import NlueError

logger = logging.getLogger(__name__)

RepoType = Literal["dataset", "model", "space"]


@dataclass(frozen=True)
class UploadPlan:
    repo_id: str
    repo_type: RepoType
    folder: Path
    files: tuple[tuple[str, int], ...]  # (path in repo, size in bytes)
    private: bool
    hub_files: tuple[str, ...] = ()  # what the Hub-read files (eval.yaml, .eval_results/) say, checked

    @property
    def total_bytes(self) -> int:
        return sum(size for _, size in self.files)

    def describe(self) -> str:
        lines = [
            f"{'private ' if self.private else ''}{self.repo_type} repo {self.repo_id} "
            f"<- {self.folder} ({len(self.files)} files, {self.total_bytes:,} bytes):"
        ]
        lines += [f"  {path}  ({size:,} bytes)" for path, size in self.files]
        return "\n".join(lines)


# Trainer checkpoints are resumable training state, not part of the published model.
MODEL_IGNORE_DIRS: tuple[str, ...] = ("checkpoint-*", "search", "runs")


def _ignored(relative: Path, ignore_dirs: tuple[str, ...] = (), keep_dirs: tuple[str, ...] = ()) -> bool:
    parts = relative.parts[1:] if len(relative.parts) > 1 and relative.parts[0] in keep_dirs else relative.parts
    if any(part.startswith(".") or part == "__pycache__" for part in parts) or relative.suffix == ".pyc":
        return True
    return len(parts) > 1 and any(fnmatch.fnmatch(parts[0], pattern) for pattern in ignore_dirs)


def plan_upload(folder: Path, repo_id: str, repo_type: RepoType, private: bool = False) -> UploadPlan:
    """What :func:`push_folder` would upload, without any network access."""
    if not folder.is_dir():
        raise NlueError(f"{folder}: folder not found; build it first")
    if not (folder / "README.md").is_file():
        raise NlueError(f"{folder}: has no README.md card; refusing to publish a repo without a card")
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise NlueError(f"repo id {repo_id!r} should look like 'owner/name'")
    model = repo_type == "model"
    # A model repo's evaluation results live in a dot-folder the Hub reads; other dot-files stay home.
    keep = (EVAL_RESULTS_FOLDER,) if model else ()
    entries = sorted(
        (path.relative_to(folder).as_posix(), path.stat().st_size)
        for path in folder.rglob("*")
        if path.is_file() and not _ignored(path.relative_to(folder), MODEL_IGNORE_DIRS if model else (), keep)
    )
    return UploadPlan(repo_id, repo_type, folder, tuple(entries), private, _hub_files(folder, repo_type))


def _hub_files(folder: Path, repo_type: RepoType) -> tuple[str, ...]:
    """The Hub-read files of ``folder`` checked (NlueError listing every problem) and summarised."""
    if repo_type == "model":
        return tuple(eval_results_summary(folder))
    if repo_type != "dataset":
        return ()
    benchmark = read_benchmark_file(folder)
    if benchmark is None:
        return ("no eval.yaml: the Hub will not list this dataset as a benchmark (`nlue build` writes one)",)
    return tuple(benchmark_summary(benchmark))


def push_folder(plan: UploadPlan, commit_message: str, dry_run: bool) -> str | None:
    """Create the repo if needed and upload the planned folder; returns the commit URL."""
    if dry_run:
        logger.info("dry run: nothing uploaded")
        return None
    from huggingface_hub import HfApi  # imported here: a dry run needs no Hub client

    api = HfApi()
    extra = {"space_sdk": "gradio"} if plan.repo_type == "space" else {}  # metric pages and the demo are Gradio
    api.create_repo(plan.repo_id, repo_type=plan.repo_type, private=plan.private, exist_ok=True, **extra)
    info = api.upload_folder(
        repo_id=plan.repo_id,
        repo_type=plan.repo_type,
        folder_path=str(plan.folder),
        commit_message=commit_message,
        allow_patterns=[path for path, _ in plan.files],  # exactly what the plan (and a dry run) lists
    )
    return str(getattr(info, "commit_url", info))
