"""Which runs are one model, and which were asked the same way: the pairs `nlue report` and `nlue compare` test.

A run's numbers change with the model that answered and with how it was asked. A results file with
an ``identity`` (model, model_fingerprint, endpoint, mode, shots, prompt_language, limit, seed,
dataset_fingerprint) states both; older files are read for the same facts where they keep them
(``model``, ``hyperparameters``, ``dataset``). Three keys come of it:

* the model: its name (``hf:`` and a trailing ``/`` aside), with its fingerprint and the endpoint
  that served it where the file names them;
* the setting: how a language model was asked (mode, shots, prompt language) and neDIOM's setting
  and input variant. Fine-tunings, baselines and classifiers have none of these and share one
  setting, so a classifier is tested against the baseline. The seed is no part of it;
* the data: the split's fingerprint (else its id, config, split and limit).

Per task, data and setting, every two runs of different models are tested. Runs of one model in one
setting (another seed, a repeat, another sweep's copy) are never tested against each other as if they
were two models, and runs that answered every item alike form one row: a difference of nothing
between them has nothing to test.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from nlue.predictions import read_predictions
from nlue.registry.tasks import TASKS
from nlue.results_folders import predictions_file

MODE_NAMES = {"loglik": "log-likelihood", "generate": "generation"}
# The identity's modes of runs that prompt no language model: classifiers (fine-tuned or scored) and baselines
# answer the same task the same way, so they share the "no prompt" setting and are tested against each other.
UNPROMPTED_MODES = frozenset({"fine-tune", "classify", "baseline"})
NO_PROMPT = "no prompt (fine-tuned, baselines, classifiers)"  # the setting of runs that prompted no language model


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None and v != ""), None)


@dataclass(frozen=True)
class RunKey:
    """What a results file says about who answered (model), how (setting) and on what (data)."""

    model: str
    setting: str
    data: str


def _described(hyper: Mapping[str, Any]) -> Mapping[str, Any]:
    """The model's description an LLM run keeps (``hyperparameters.model``; ``scorer`` for neDIOM)."""
    return _mapping(hyper.get("model")) or _mapping(hyper.get("scorer"))


def model_key(data: Mapping[str, Any]) -> str:
    identity = _mapping(data.get("identity"))
    hyper = _mapping(data.get("hyperparameters"))
    name = str(_first(identity.get("model"), data.get("model")) or "unknown model")
    parts = [name.removeprefix("hf:").rstrip("/")]
    if identity.get("model_fingerprint"):
        parts.append(f"fingerprint {str(identity['model_fingerprint'])[:12]}")
    endpoint = identity.get("endpoint") if identity else _described(hyper).get("base_url")
    if endpoint:
        parts.append(f"at {endpoint}")
    return " · ".join(parts)


def setting_key(data: Mapping[str, Any]) -> str:
    """How the model was asked, as a reader would say it ("" when no language model was prompted)."""
    identity = _mapping(data.get("identity"))
    hyper = _mapping(data.get("hyperparameters"))
    details = _mapping(data.get("details"))
    parts = []
    idiom_setting = _first(hyper.get("setting"), details.get("setting"))
    if idiom_setting:
        parts.append(str(idiom_setting))
    variant = hyper.get("input_variant")
    if variant:
        parts.append(f"input {variant}")
    mode = _first(identity.get("mode"), hyper.get("mode"))
    if mode and str(mode) not in UNPROMPTED_MODES:
        parts.append(MODE_NAMES.get(str(mode), str(mode)))
    shots = _first(identity.get("shots"), hyper.get("shots"))
    if shots is not None and not idiom_setting:
        parts.append(f"{shots}-shot")
    language = _first(identity.get("prompt_language"), hyper.get("prompt_language"))
    if language:
        parts.append(f"{language} prompt")
    return " · ".join(parts)


def data_key(data: Mapping[str, Any]) -> str:
    identity = _mapping(data.get("identity"))
    dataset = _mapping(data.get("dataset"))
    fingerprint = _first(identity.get("dataset_fingerprint"), dataset.get("fingerprint"))
    if fingerprint:
        return f"data {str(fingerprint)[:12]}"
    limit = _first(identity.get("limit"), dataset.get("limit"))
    where = "/".join(str(dataset.get(k)) for k in ("id", "config", "split") if dataset.get(k))
    return f"{where or 'unknown data'}" + (f" (first {limit})" if limit else "")


def run_key(data: Mapping[str, Any]) -> RunKey:
    return RunKey(model_key(data), setting_key(data), data_key(data))


# ------------------------------------------------------------------ grouping
@dataclass(frozen=True)
class RunFile:
    """One results file with per-item predictions: its run's name and folder, task key and keys."""

    run: str  # the run's name as the page prints it
    folder: Path
    task: str  # the file's name less .json: gmet and gmet.human are apart
    key: RunKey
    predictions: Path

    @property
    def answers(self) -> str:
        """A fingerprint of every item's answer: runs that answered alike share it."""
        rows = read_predictions(self.predictions)
        items = sorted(
            (json.dumps(r.get("id")), str(r.get("input_sha256")), json.dumps(r.get("prediction"))) for r in rows
        )
        return hashlib.sha256(json.dumps(items).encode("utf-8")).hexdigest()


def run_files(found: Iterable[tuple[str, Path, Mapping[str, Any]]]) -> list[RunFile]:
    """The (run name, path, data) of results files with per-item predictions, as RunFiles; the others left out."""
    out = []
    for run, path, data in found:
        if str(data.get("task")) not in TASKS:
            continue  # a task the registry does not know cannot be scored: the boards list it as left out
        predictions = predictions_file(path, data)
        if predictions is not None:
            out.append(RunFile(run, path.parent, path.name.removesuffix(".json"), run_key(data), predictions))
    return out


@dataclass
class SettingGroup:
    """The runs of one task on one data in one setting; rows of runs that answered every item alike."""

    task: str
    setting: str
    data: str
    rows: list[list[RunFile]] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(f.key.model for row in self.rows for f in row))

    def label(self, row: Sequence[RunFile]) -> str:
        return " = ".join(f.run for f in row)

    def pairs(self) -> list[tuple[int, int]]:
        """The rows to test: every two whose first runs are of different models."""
        return [(i, j) for i, j in combinations(range(len(self.rows)), 2) if not self.same_model(i, j)]

    def same_model(self, i: int, j: int) -> bool:
        return self.rows[i][0].key.model == self.rows[j][0].key.model

    @property
    def title(self) -> str:
        return f"{self.task} · {self.setting or NO_PROMPT}"


def group_runs(files: Sequence[RunFile]) -> list[SettingGroup]:
    """Per task, data and setting: the runs, those with the same answers on one row (in the files' order)."""
    groups: dict[tuple[str, str, str], SettingGroup] = {}
    answers: dict[tuple[str, str, str], dict[str, int]] = {}
    for file in files:
        where = (file.task, file.key.data, file.key.setting)
        group = groups.setdefault(where, SettingGroup(file.task, file.key.setting, file.key.data))
        rows = answers.setdefault(where, {})
        signature = file.answers
        if signature in rows:
            group.rows[rows[signature]].append(file)
        else:
            rows[signature] = len(group.rows)
            group.rows.append([file])
    return sorted(groups.values(), key=lambda g: (g.task, g.data, g.setting))


def pair_tasks(groups: Sequence[SettingGroup]) -> dict[tuple[Path, Path], list[str]]:
    """Per two run folders of different models in one setting, the tasks to test them on (Holm's family).

    Runs that answered alike are in it too: `nlue compare A B` counts every task the pair shares.
    """
    found: dict[tuple[Path, Path], list[str]] = {}
    for group in groups:
        runs = sorted((f for row in group.rows for f in row), key=lambda f: str(f.folder))
        for a, b in combinations(runs, 2):
            if a.key.model != b.key.model and group.task not in found.get((a.folder, b.folder), []):
                found.setdefault((a.folder, b.folder), []).append(group.task)
    return found
