"""Submitting a run to the shared results repo on the Hub: checked here first, then a pull request.

``nlue submit RUN --repo-id <org>/<repo> --release <dataset>`` checks every results file of a run
folder before anything leaves the machine, and reports every problem at once:

* the results file's schema (a known task and kind, finite metrics, the fields every file has);
* not scored on sample data, and not a diagnostic (which saw the answers);
* per-item predictions present, their rows whole (id, input fingerprint, prediction, gold), as many
  as the results file says, and their fingerprint the one the results file records;
* the dataset fingerprint equal to the published release's (``--release``: the Hub id or folder of
  the released dataset): the run scored the whole test split as released, not a sample, a ``--limit``
  or an edited copy;
* the package versions the run was made with.

It then opens one pull request on the results repo (a Hub dataset repo the Space can read,
``NLUE_SPACE_RESULTS=<org>/<repo>``) adding ``runs/<run name>/`` with the results and predictions
files. ``--dry-run`` prints exactly the files and the pull request's text, and sends nothing.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.predictions import read_predictions, release_fingerprint, split_fingerprint
from nlue.registry.tasks import get_task

logger = logging.getLogger(__name__)

REQUIRED = ("task", "model", "kind", "metrics", "primary_metric", "dataset", "versions", "created", "schema_version")
KINDS = ("fine-tune", "zero-shot", "few-shot", "baseline")


@dataclass
class Submission:
    """A checked run: the files the pull request adds (path in the repo, local file, size) and its text."""

    run: str
    files: list[tuple[str, Path, int]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  # one per results file: task, model, score
    problems: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        models = sorted({row["model"] for row in self.rows})
        return f"Results: {', '.join(models)} on {', '.join(row['task'] for row in self.rows)}"

    def description(self) -> str:
        lines = [f"Run `{self.run}`, checked by `nlue submit` before upload:", "",
                 "| task | model | kind | primary metric | score | dataset fingerprint | nlue |", "|---|---|---|---|---|---|---|"]  # fmt: skip
        for row in self.rows:
            lines.append(f"| {row['task']} | {row['model']} | {row['kind']} | {row['primary_metric']} | "
                         f"{row['score']:.4f} | {row['fingerprint'][:12]} | {row['nlue']} |")  # fmt: skip
        lines += ["", "Every results file comes with its per-item predictions; the fingerprints equal the release's."]
        return "\n".join(lines)


def _check_file(path: Path, release: str, expected: dict[str, str], problems: list[str]) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        problems.append(f"{path}: not a readable results file ({exc})")
        return None
    missing = [name for name in REQUIRED if name not in data]
    if missing:
        problems.append(f"{path}: lacks {', '.join(missing)} (not a results file nlue writes)")
        return None
    try:
        task = get_task(str(data["task"]))
    except NlueError as exc:
        problems.append(f"{path}: {exc}")
        return None
    if data["kind"] not in KINDS:
        problems.append(f"{path}: kind {data['kind']!r} cannot be submitted (expected one of {', '.join(KINDS)})")
    # null: a metric that could not be computed, fine when the file says why (details.null_metrics)
    reasons = (data.get("details") or {}).get("null_metrics") or {} if isinstance(data.get("details"), dict) else {}
    bad = [k for k, v in data["metrics"].items()
           if (v is None and k not in reasons) or (v is not None and (isinstance(v, bool) or not isinstance(
               v, int | float) or not math.isfinite(v)))]  # fmt: skip
    if bad:
        problems.append(f"{path}: metrics {', '.join(bad)} are not finite numbers (nor null with a reason)")
    dataset = data["dataset"] if isinstance(data["dataset"], dict) else {}
    if dataset.get("is_sample"):
        problems.append(f"{path}: scored on the embedded SAMPLE data, which says nothing about a model")
    if not {"nlue", "python"} <= set(data.get("versions") or {}):
        problems.append(f"{path}: the package versions (versions.nlue, versions.python) are missing")
    if not data.get("predictions"):
        problems.append(f"{path}: no per-item predictions (field `predictions`); run it again with this nlue")
        return None
    rows_path = path.parent / str(data["predictions"])
    try:
        rows = read_predictions(rows_path)
    except NlueError as exc:
        problems.append(str(exc))
        return None
    fingerprint = split_fingerprint(rows)
    if dataset.get("fingerprint") != fingerprint:
        problems.append(f"{rows_path}: its rows do not give the dataset fingerprint the results file records")
    if dataset.get("items") not in (None, len(rows)):
        problems.append(f"{rows_path}: {len(rows)} rows, but the results file says {dataset['items']} items")
    split = str(dataset.get("split") or "test")
    key = f"{task.name}/{split}"
    if key not in expected:
        expected[key] = _release_fingerprint(release, task, split)
    if fingerprint != expected[key]:
        problems.append(f"{path}: scored on other items than the release {release} ({task.name}, {split}): "
                        "submit a run of the whole split as released (no --limit, not an edited copy)")  # fmt: skip
    return {"task": task.name, "model": str(data["model"]), "kind": str(data["kind"]), "score": data.get("primary_score"),
            "primary_metric": str(data["primary_metric"]), "fingerprint": fingerprint,
            "nlue": (data.get("versions") or {}).get("nlue", "?"), "predictions": rows_path}  # fmt: skip


def _release_fingerprint(release: str, task: Any, split: str) -> str:
    from nlue.data.access import load_task

    try:
        data = load_task(release, task)
    except (OSError, ValueError) as exc:
        raise NlueError(f"--release {release!r}: cannot load {task.name} ({exc})") from None
    if split not in data:
        raise NlueError(f"--release {release!r}: {task.name} has no {split!r} split")
    return release_fingerprint(task, [dict(row) for row in data[split]])


def check_run(folder: Path, release: str) -> Submission:
    """Every check of the module docstring on every results file of ``folder``; NlueError listing all problems."""
    folder = Path(folder)
    if not folder.is_dir():
        raise NlueError(f"{folder}: no such run folder")
    submission = Submission(folder.name)
    expected: dict[str, str] = {}
    paths = sorted(p for p in folder.glob("*.json"))
    if not paths:
        raise NlueError(f"{folder}: no results files to submit")
    for path in paths:
        row = _check_file(path, release, expected, submission.problems)
        if row is None:
            continue
        rows_path = row.pop("predictions")
        submission.rows.append(row)
        for local in (path, rows_path):
            submission.files.append((f"runs/{folder.name}/{local.name}", local, local.stat().st_size))
    if submission.problems:
        shown = "\n  ".join(submission.problems)
        raise NlueError(
            f"{folder} cannot be submitted; nothing was sent ({len(submission.problems)} problems):\n  {shown}"
        )
    return submission


def open_pull_request(submission: Submission, repo_id: str, dry_run: bool) -> str | None:
    """One pull request adding the run's files to the results repo; None on a dry run (nothing sent)."""
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise NlueError(f"--repo-id {repo_id!r} should look like 'owner/name'")
    if dry_run:
        return None
    from huggingface_hub import CommitOperationAdd, HfApi

    operations: Sequence[Any] = [CommitOperationAdd(path, str(local)) for path, local, _ in submission.files]
    info = HfApi().create_commit(
        repo_id, operations, commit_message=submission.title, commit_description=submission.description(),
        repo_type="dataset", create_pr=True,
    )  # fmt: skip
    return str(getattr(info, "pr_url", None) or getattr(info, "commit_url", info))
