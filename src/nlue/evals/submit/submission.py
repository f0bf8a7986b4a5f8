"""Submitting a run to the shared results repo on the Hub: checked here first, then a pull request.

``nlue submit RUN --repo-id <org>/<repo> --release <dataset>`` checks every results file of a run
folder before anything leaves the machine, and reports every problem at once:

* the results file's schema (a known task and kind, the fields every file has), read under the size
  and depth limits of :mod:`nlue.results_files`;
* every stored metric a finite number in its range (:mod:`nlue.scoring.ranges`: no accuracy of 42);
* not scored on sample data, and not a diagnostic (which saw the answers);
* per-item predictions present, inside the run folder (no absolute path, ``..`` or symlink leading
  out), their rows whole (id, input fingerprint, prediction, gold), as many as the results file says,
  and their fingerprint the one the results file records;
* the dataset fingerprint equal to the published release's (``--release``: the Hub id or folder of
  the released dataset): the run scored the whole test split as released, not a sample, a ``--limit``
  or an edited copy;
* every score recomputed from the predictions against the release's gold answers, with the scoring
  code the runs use (:mod:`nlue.evals.verify`): a stored score that disagrees is refused, naming the
  metric, the stored and the recomputed value;
* the package versions the run was made with.

It then opens one pull request on the results repo (a Hub dataset repo the Space can read,
``NLUE_SPACE_RESULTS=<org>/<repo>``) adding ``runs/<run name>/`` with the results and predictions
files. Each checked score can also go on the model's own page and the benchmark's Hub leaderboard as
an ``.eval_results/*.yaml`` entry of the model repo (:mod:`nlue.data.hub_eval_results`: the results
file's own primary score, the release as the benchmark): :func:`model_repo_results` lists them, and
``--eval-results-pr`` opens one pull request per model repo with them, the Hub's way for anyone to add
a model's scores. ``--dry-run`` prints exactly the files (where each comes from, where it goes, what
each entry says) and the pull request's text, and sends nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlue.data.hub_eval_results import EvalResultsFile, eval_results_file, looks_like_hub_id
from nlue.errors import NlueError
from nlue.evals.submit.trust_files import SubmittedRun, carried_files
from nlue.evals.verify import VERIFIED, compare_with_predictions, range_problems
from nlue.predictions import read_predictions, release_fingerprint, split_fingerprint
from nlue.registry.tasks import get_task
from nlue.results_files import BadResultsFile, predictions_file, read_json_object
from nlue.text.safe import markdown_text

logger = logging.getLogger(__name__)

REQUIRED = ("task", "model", "kind", "metrics", "primary_metric", "dataset", "versions", "created", "schema_version")
KINDS = ("fine-tune", "zero-shot", "few-shot", "baseline")
RELEASE_HELP = (
    "the release is the published dataset the run was scored on, whose gold answers score it again: a dataset "
    "repo made by `nlue build --source <your source files> --out build` (the folder build/nlue) and published by "
    "`nlue push build/nlue --repo-id <org>/nlue`. Give its Hub id (--release <org>/nlue) or the built folder "
    "(--release build/nlue); the exams and neDIOM are releases of their own (`nlue build --configs mcq_ne ...`)"
)


@dataclass
class Submission:
    """A checked run: the files the pull request adds (path in the repo, local file, size) and its text."""

    run: str
    files: list[tuple[str, Path, int]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  # one per results file: task, model, score
    problems: list[str] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)  # the checked results files, as read

    @property
    def title(self) -> str:
        models = sorted({row["model"] for row in self.rows})
        return f"Results: {', '.join(models)} on {', '.join(row['task'] for row in self.rows)}"

    def description(self) -> str:
        lines = [f"Run {markdown_text(self.run)}, checked by `nlue submit` before upload:", "",
                 "| task | model | kind | primary metric | score (recomputed) | dataset fingerprint | nlue |",
                 "|---|---|---|---|---|---|---|"]  # fmt: skip
        for row in self.rows:
            cells = [row["task"], row["model"], row["kind"], row["primary_metric"], f"{row['score']:.4f}",
                     row["fingerprint"][:12], row["nlue"]]  # fmt: skip
            lines.append("| " + " | ".join(markdown_text(cell) for cell in cells) + " |")
        lines += ["", "Every results file comes with its per-item predictions; the fingerprints equal the release's, "
                  "and every score was recomputed from the predictions against the release's gold answers."]  # fmt: skip
        beside = [path for path, _, _ in self.files if not path.startswith("runs/")]
        if beside:  # contamination findings and memorisation files of these runs (nlue.evals.submit.trust_files)
            lines += ["", "Also carried, each checked by its reader and joined to the run's items: "
                      + ", ".join(markdown_text(path) for path in beside) + "."]  # fmt: skip
        releases = list(dict.fromkeys(str(row["release"]) for row in self.rows if row.get("release")))
        if len(releases) > 1:  # NLUE's release and a user's task's own build, say
            lines += ["", "Releases checked against: " + ", ".join(markdown_text(r) for r in releases) + "."]
        return "\n".join(lines)


@dataclass
class _Release:
    """What a release holds for one task and split: the fingerprint of a complete run, and the gold answers."""

    fingerprint: str
    golds: list[Any]
    source: str = ""  # the release (Hub id or folder) that holds the task


def _check_file(
    path: Path, releases: Sequence[str], expected: dict[str, _Release], problems: list[str]
) -> dict[str, Any] | None:
    try:
        data = read_json_object(path)
    except BadResultsFile as exc:
        problems.append(f"not a readable results file: {exc}")
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
    if not isinstance(data["metrics"], Mapping):
        problems.append(f"{path}: its metrics are not a mapping of metric names to numbers")
        return None
    out_of_range = range_problems(data["metrics"])
    problems += [f"{path}: {problem}" for problem in out_of_range]
    # null: a metric that could not be computed, fine when the file says why (details.null_metrics)
    details = data.get("details") if isinstance(data.get("details"), Mapping) else {}
    reasons = details.get("null_metrics") if isinstance(details.get("null_metrics"), Mapping) else {}
    unexplained = [k for k, v in data["metrics"].items() if v is None and k not in reasons]
    if unexplained:
        problems.append(
            f"{path}: metrics {', '.join(map(str, unexplained))} are null with no reason in details.null_metrics"
        )
    dataset = data["dataset"] if isinstance(data["dataset"], Mapping) else {}
    if dataset.get("is_sample"):
        problems.append(f"{path}: scored on the embedded SAMPLE data, which says nothing about a model")
    if not {"nlue", "python"} <= set(data.get("versions") or {}):
        problems.append(f"{path}: the package versions (versions.nlue, versions.python) are missing")
    try:
        rows_path = predictions_file(path, data)
        if rows_path is None:
            problems.append(f"{path}: no per-item predictions (field `predictions`), so its scores cannot be "
                            "recomputed; run it again with this nlue")  # fmt: skip
            return None
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
        try:
            expected[key] = _release_split(releases, task, split)
        except NlueError as exc:  # no release holds the task: one problem among the others, all reported at once
            problems.append(f"{path}: {exc}")
            return None
    released = expected[key]
    if fingerprint != released.fingerprint:
        problems.append(f"{path}: scored on other items than the release {released.source} ({task.name}, {split}): "
                        "submit a run of the whole split as released (no --limit, not an edited copy)")  # fmt: skip
    # The release's gold where the run scored the release's items in its order; otherwise (refused above) the rows'
    # own, so that a disagreement is reported too.
    golds = released.golds if fingerprint == released.fingerprint else None
    check = compare_with_predictions(task, rows, data, golds)
    if check.status != VERIFIED:
        against = "the release's gold answers" if golds is not None else "their own gold answers"
        reasons = [reason for reason in check.reasons if reason not in out_of_range]
        problems += [f"{path}: {reason} (predictions scored against {against})" for reason in reasons]
        return None
    return {"task": task.name, "model": str(data["model"]), "kind": str(data["kind"]),
            "score": check.recomputed[task.primary_metric], "primary_metric": str(data["primary_metric"]),
            "fingerprint": fingerprint, "nlue": (data.get("versions") or {}).get("nlue", "?"),
            "release": released.source, "predictions": rows_path, "result": data}  # fmt: skip


def _release_split(releases: Sequence[str], task: Any, split: str) -> _Release:
    """The first of ``releases`` that holds ``task``'s ``split``: a user's task has a release of its own (its build),
    so a run folder of NLUE's tasks and one's own is checked against both, each task against the one that has it."""
    from nlue.data.access import load_task

    reasons = []
    for release in releases:
        try:
            data = load_task(release, task)
        except (OSError, ValueError) as exc:
            reasons.append(f"--release {release!r}: cannot load {task.name} ({exc})")
            continue
        if split not in data:
            reasons.append(f"--release {release!r}: {task.name} has no {split!r} split")
            continue
        items = [dict(row) for row in data[split]]
        return _Release(release_fingerprint(task, items), [task.kind.gold(task, item) for item in items], release)
    if len(reasons) == 1:
        raise NlueError(reasons[0]) from None
    raise NlueError(f"no release holds {task.name}'s {split!r} split: " + "; ".join(reasons)) from None


def check_run(folder: Path, release: str | Sequence[str], trust_files: bool = True) -> Submission:
    """Every check of the module docstring on every results file of ``folder``; NlueError listing all problems.

    ``release``: the release, or several (NLUE's and a user's own task's build): each task is checked against
    the first that holds it. ``trust_files``: also carry the run's contamination findings and memorisation files
    from the results folder that holds ``folder``, each checked (:mod:`nlue.evals.submit.trust_files`).
    """

    releases = [release] if isinstance(release, str) else list(release)
    folder = Path(folder)
    if not folder.is_dir():
        raise NlueError(f"{folder}: no such run folder")
    submission = Submission(folder.name)
    expected: dict[str, _Release] = {}
    paths = sorted(p for p in folder.glob("*.json"))
    if not paths:
        raise NlueError(f"{folder}: no results files to submit")
    checked: list[SubmittedRun] = []
    for path in paths:
        row = _check_file(path, releases, expected, submission.problems)
        if row is None:
            continue
        rows_path = row.pop("predictions")
        checked.append(SubmittedRun(row["result"], rows_path))
        submission.results.append(row.pop("result"))
        submission.rows.append(row)
        for local in (path, rows_path):
            inside = local.relative_to(folder).as_posix()  # predictions_file keeps it inside the folder
            submission.files.append((f"runs/{folder.name}/{inside}", local, local.stat().st_size))
    if trust_files:  # beside the run folders, as in the results folder: the Space reads them from there
        submission.files += carried_files(folder.resolve().parent, checked, submission.problems)
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


@dataclass(frozen=True)
class ModelRepoResults:
    """What one checked results file gives the model's own repo: an ``.eval_results`` file, or why none."""

    model: str  # the model repo the file goes to
    task: str
    file: EvalResultsFile | None
    reason: str = ""


def model_repo_results(submission: Submission, release: str | None, repo_id: str) -> list[ModelRepoResults]:
    """The ``.eval_results`` file of each checked results file, its source the results repo (with the predictions).

    Each names as its benchmark the release its task was checked against (``release`` where a row names none).
    """
    source = f"https://huggingface.co/datasets/{repo_id}"
    planned = []
    for data, row in zip(submission.results, submission.rows, strict=True):
        model, task = str(data["model"]), str(data["task"])
        release = row.get("release") or release
        if not looks_like_hub_id(model):
            planned.append(ModelRepoResults(model, task, None, "not a model repo on the Hub (owner/name)"))
            continue
        file, reason = eval_results_file(data, release, source, f"nlue results repo, runs/{submission.run}")
        planned.append(ModelRepoResults(model, task, file, reason))
    return planned


def open_eval_results_prs(planned: Sequence[ModelRepoResults], dry_run: bool) -> list[str]:
    """One pull request per model repo adding its ``.eval_results`` files; nothing on a dry run."""
    by_model: dict[str, list[EvalResultsFile]] = {}
    for item in planned:
        if item.file is not None:
            by_model.setdefault(item.model, []).append(item.file)
    if dry_run or not by_model:
        return []
    from huggingface_hub import CommitOperationAdd, HfApi

    api, urls = HfApi(), []
    for model, files in by_model.items():
        operations = [CommitOperationAdd(file.path, file.text.encode("utf-8")) for file in files]
        info = api.create_commit(
            model, operations, commit_message="Evaluation results (checked by nlue submit)", repo_type="model",
            commit_description="\n".join(f"- {markdown_text(file.summary())}" for file in files), create_pr=True,
        )  # fmt: skip
        urls.append(str(getattr(info, "pr_url", None) or getattr(info, "commit_url", info)))
    return urls
