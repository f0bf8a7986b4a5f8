"""The contamination findings and memorisation files a submission carries beside its runs.

``nlue contamination`` and ``nlue memorisation`` write into the results folder (``contamination/`` and
``memorisation/`` beside the run folders). A submitted run brings the files that are its own, so that a Space
reading the results repo shows them (its clean scores, its probes), at the same place in the repo as in the
results folder (``contamination/<dataset>/<corpus>.json``, ``memorisation/<model>/<dataset>.json``):

* a findings file is the run's when it checked a task the run scored, on the same items: the join the clean
  score makes (:func:`~nlue.evals.contamination.clean_scores.join_findings`: the same split, its size, every
  item by id and input fingerprint) must succeed;
* a memorisation file is the run's when it probed the run's model (by the name both record) on a task the run
  scored, every probed item among the run's items with the same input fingerprint, and not on sample data.

Every file in those folders is read by its checked reader first (:func:`read_findings`, :func:`read_probes`):
one that is refused, and one of the run's task or model whose items are not the run's, is a problem of the
submission, with the reason; nothing is sent. Files of other tasks and models stay behind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.evals.contamination.clean_scores import findings_of, join_findings
from nlue.evals.memorisation.probes_file import BadProbesFile, probe_files, read_probes
from nlue.predictions import read_predictions

LEAVE_OUT = "--without-findings"
REPO_FILE = tuple[str, Path, int]  # (path in the results repo, local file, size), as Submission.files holds


@dataclass(frozen=True)
class SubmittedRun:
    """One checked results file of the submission: its data and its per-item rows' file."""

    data: Mapping[str, Any]
    predictions: Path

    @property
    def task(self) -> str:
        return str(self.data.get("task"))


def _model(name: Any) -> str:
    return str(name).removeprefix("hf:").rstrip("/")


def _repo_file(results_dir: Path, path: Path) -> REPO_FILE:
    return path.relative_to(results_dir).as_posix(), path, path.stat().st_size


def _findings(results_dir: Path, runs: Sequence[SubmittedRun], problems: list[str]) -> list[REPO_FILE]:
    found, refused = findings_of(results_dir)
    problems += [f"{results_dir / line}" for line in refused]
    by_task = {run.task: run for run in runs}
    carried: dict[Path, REPO_FILE] = {}
    for findings in found:
        run = by_task.get(findings.task)
        if run is None:
            continue
        try:
            join_findings(findings, read_predictions(run.predictions), run.data)
        except NlueError as exc:
            problems.append(f"{findings.path}: checked {findings.task}, but not the items the run scored: {exc} "
                            f"(move it out of the results folder, or submit {LEAVE_OUT})")  # fmt: skip
            continue
        carried.setdefault(findings.path, _repo_file(results_dir, findings.path))
    return list(carried.values())


def _probes_match(path: Path, data: Mapping[str, Any], run: SubmittedRun, problems: list[str]) -> bool:
    dataset = data.get("dataset") if isinstance(data.get("dataset"), Mapping) else {}
    if dataset.get("is_sample"):
        problems.append(f"{path}: probed the embedded SAMPLE data, which says nothing about a model")
        return False
    rows = {row["id"]: row["input_sha256"] for row in read_predictions(run.predictions)}
    items = data["tasks"][run.task]["items"]
    other = [r["id"] for r in items if rows.get(r["id"]) != r["input_sha256"]]
    if other:
        problems.append(f"{path}: probed {run.task} items the run did not score with that text ({len(other)} of "
                        f"{len(items)}, first id {other[0]!r:.40}): another build of the data (move it out of the "
                        f"results folder, or submit {LEAVE_OUT})")  # fmt: skip
        return False
    return True


def _probes(results_dir: Path, runs: Sequence[SubmittedRun], problems: list[str]) -> list[REPO_FILE]:
    carried = []
    for path in probe_files(results_dir):
        try:
            data = read_probes(path)
        except BadProbesFile as exc:
            problems.append(str(exc))
            continue
        model = _model((data.get("model") if isinstance(data.get("model"), Mapping) else {}).get("name"))
        mine = [run for run in runs if _model(run.data.get("model")) == model and run.task in data["tasks"]]
        if mine and all(_probes_match(path, data, run, problems) for run in mine):
            carried.append(_repo_file(results_dir, path))
    return carried


def carried_files(results_dir: Path, runs: Sequence[SubmittedRun], problems: list[str]) -> list[REPO_FILE]:
    """The findings and memorisation files of ``runs`` under ``results_dir`` (module docstring); each file
    refused, or of the runs' tasks but other items, is added to ``problems`` with the reason."""
    try:
        return [*_findings(results_dir, runs, problems), *_probes(results_dir, runs, problems)]
    except NlueError as exc:  # a predictions file that cannot be read again: the run's own check said so
        problems.append(str(exc))
        return []
