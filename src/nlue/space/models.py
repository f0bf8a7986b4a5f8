"""The models a visitor may pick: read from a models file or found by scanning a folder.

Visitors choose from this list and nothing else: no path or URL they type is ever
loaded. A local checkpoint is offered only for the tasks whose labels its ``config.json``
carries, in the registry's order; a Hub id must name its tasks in the models file and is
checked the same way when it is first loaded.

A models file (YAML or JSON; relative paths are relative to the file)::

    scan:                       # folders searched for checkpoints, two levels deep
      - ../../build/models
    models:
      - path: my-org/xlmr-base-nlue-sa   # Hub id or folder
        name: XLM-R base, SA fine-tune   # shown in the dropdown (default: the path)
        tasks: [sa]                      # needed for Hub ids; checked against the labels
      - path: FacebookAI/xlm-roberta-base
        kind: masked-lm                  # offered on the GMET tab
      - path: Qwen/Qwen3-0.6B
        kind: causal-lm                  # offered under "Ask a language model" (exams, NLUE)

A LoRA adapter folder (``adapter_config.json``) is a classifier for the task named by the
``nlue_results.json`` beside it, or by its folder name.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from nlue.errors import NlueError
from nlue.lm.adapters import adapter_task
from nlue.lm.checkpoints import ADAPTER_CONFIG, is_adapter_folder, is_causal_lm_config, is_checkpoint
from nlue.registry.kinds.base import named_labels
from nlue.registry.kinds.regression import HF_PROBLEM_TYPE
from nlue.registry.tasks import TASKS, TRAINABLE_TASKS, TaskSpec, get_task

logger = logging.getLogger(__name__)

Kind = Literal["classifier", "masked-lm", "causal-lm"]
KINDS: tuple[Kind, ...] = ("classifier", "masked-lm", "causal-lm")
_WHAT = {"classifier": "classifier", "masked-lm": "masked language model", "causal-lm": "causal language model"}
MODELS_FILE_SUFFIXES = (".yaml", ".yml", ".json")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_ENTRY_KEYS = {"path", "name", "kind", "tasks"}
_SCAN_DEPTH = 3  # <root>/<task>/, <root>/<model>/<task>/, <root>/<model>/<task>/merged/
CLASSIFIER_TASKS: Sequence[str] = TRAINABLE_TASKS  # a live view of the registry


class ModelNotAllowed(NlueError):
    """A model name that is not on the Space's list for the task asked."""


@dataclass(frozen=True)
class ModelEntry:
    """One model on the Space's list."""

    name: str  # what the dropdown shows; unique
    source: str  # local folder or Hub id, handed to from_pretrained
    kind: Kind
    tasks: tuple[str, ...] = ()  # classifier tasks it is valid for

    def __str__(self) -> str:
        return self.name


class ModelCatalog:
    """The fixed list of models; lookups refuse anything not on it."""

    def __init__(self, entries: Iterable[ModelEntry] = ()) -> None:
        self._entries: dict[str, ModelEntry] = {}
        for entry in entries:
            if entry.name in self._entries:
                raise NlueError(f"two models are listed under the name {entry.name!r}; give one a `name:`")
            self._entries[entry.name] = entry

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[ModelEntry]:
        return iter(self._entries.values())

    def classifiers_for(self, task: str) -> list[str]:
        return [e.name for e in self._entries.values() if e.kind == "classifier" and task in e.tasks]

    def masked_lms(self) -> list[str]:
        return [e.name for e in self._entries.values() if e.kind == "masked-lm"]

    def causal_lms(self) -> list[str]:
        return [e.name for e in self._entries.values() if e.kind == "causal-lm"]

    def require(self, name: str | None, kind: Kind, task: str | None = None) -> ModelEntry:
        """The entry called ``name``, if it is listed as ``kind`` (for ``task``); else ModelNotAllowed."""
        if name is not None and not isinstance(name, str):  # an API caller's JSON may put anything here
            raise ModelNotAllowed(
                f"the model must be given by its name on the list, a text, not a {type(name).__name__}; "
                "pick one from the list"
            )
        entry = self._entries.get(name or "")
        if entry is None or entry.kind != kind:
            raise ModelNotAllowed(f"{name!r} is not a {_WHAT[kind]} this Space offers; pick one from the list")
        if task is not None and task not in entry.tasks:
            raise ModelNotAllowed(f"{name!r} is not offered for {task}: its labels are not {task}'s")
        return entry


# --- what a checkpoint folder is ---------------------------------------------------------


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise NlueError(f"{path}: cannot read it as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise NlueError(f"{path}: expected a JSON object")
    return data


def tasks_for_labels(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The registry tasks whose labels a classifier config carries, in the registry's order.

    A regression head (one output) fits stsb. A config whose labels are unnamed
    (``LABEL_0``...) fits no task: its outputs cannot be read against the registry.
    """
    id2label = config.get("id2label") or {}
    count = len(id2label) or int(config.get("num_labels") or 0)
    labels = named_labels(id2label)
    if config.get("problem_type") == HF_PROBLEM_TYPE:
        count = 1
    fits = [
        task
        for task in (TASKS[name] for name in CLASSIFIER_TASKS)
        if task.kind.head_mismatch(task, count, labels) is None and (labels is not None or not task.kind.has_classes)
    ]
    return tuple(task.name for task in fits)


def labels_fit(task: TaskSpec, config: Any) -> bool:
    """True when a loaded model's config reads out ``task``'s labels in the registry's order."""
    num_labels = int(getattr(config, "num_labels", 0) or 0)
    # Unnamed labels of the right number: a LoRA base config, whose head's names live in the registry.
    return task.kind.head_mismatch(task, num_labels, named_labels(getattr(config, "id2label", None))) is None


def _task_hint(folder: Path) -> tuple[str, ...]:
    """A task named by the folder or its parent (``build/models/sa``, ``runs/xlmr/sa/merged``)."""
    for part in (folder.name, folder.parent.name):
        if part in CLASSIFIER_TASKS:
            return (part,)
    return ()


def describe_checkpoint(folder: Path) -> tuple[Kind, tuple[str, ...]] | None:
    """(kind, tasks) of a local checkpoint folder, or None when it is not one the Space can serve."""
    if is_adapter_folder(folder):
        adapter = _read_json(folder / ADAPTER_CONFIG)
        if adapter.get("task_type") != "SEQ_CLS":
            return None
        task = adapter_task(folder)  # the one rule the loader also builds the head by
        return ("classifier", (task.name,)) if task is not None else None
    if not (folder / "config.json").is_file():
        return None
    config = _read_json(folder / "config.json")
    architectures = [str(a) for a in config.get("architectures") or []]
    if any(a.endswith("ForMaskedLM") for a in architectures):
        return "masked-lm", ()
    if any(a.endswith("ForSequenceClassification") for a in architectures):
        tasks = tasks_for_labels(config)
        hint = _task_hint(folder)
        if hint and set(hint) <= set(tasks):
            tasks = hint  # qnli and rte share labels: the folder says which one it was trained for
        return ("classifier", tasks) if tasks else None
    if is_causal_lm_config(config):  # GPT2LMHeadModel, LlamaForCausalLM, Gemma3ForConditionalGeneration, ...
        return "causal-lm", ()
    return None


def _what_it_is(folder: Path) -> str:
    if is_adapter_folder(folder):
        adapter = _read_json(folder / ADAPTER_CONFIG)
        if adapter.get("task_type") != "SEQ_CLS":
            return f"a {adapter.get('task_type')} adapter, not a classifier's"
        return "a classifier adapter for no task it names: no nlue_results.json, no task as its folder's name"
    config = _read_json(folder / "config.json")
    shown = ", ".join(map(str, config.get("architectures") or ())) or f"model type {config.get('model_type')}"
    if any(str(a).endswith("ForSequenceClassification") for a in config.get("architectures") or ()):
        return f"{shown} whose labels fit no task"
    return f"{shown}: not a classifier, masked LM or causal LM"


def scan_folder(root: Path, label_root: Path | None = None) -> list[ModelEntry]:
    """Every servable checkpoint under ``root`` (up to three levels), named by its path under it.

    Trainer's intermediate ``checkpoint-*`` folders and hidden folders are skipped.
    """
    root = Path(root)
    if not root.is_dir():
        logger.warning("models folder %s does not exist; no models from it", root)
        return []
    prefix = (label_root or root).name
    entries: list[ModelEntry] = []

    def visit(folder: Path, depth: int) -> None:
        found = describe_checkpoint(folder)
        if found is None and is_checkpoint(folder):  # say why a model folder is not offered, never drop it silently
            logger.info("%s: a checkpoint this Space cannot serve (%s); not offered", folder, _what_it_is(folder))
        if found is not None:
            kind, tasks = found
            relative = folder.relative_to(root).as_posix()
            name = prefix if relative == "." else f"{prefix}/{relative}"
            entries.append(ModelEntry(name=name, source=str(folder), kind=kind, tasks=tasks))
        if depth >= _SCAN_DEPTH:
            return
        for child in sorted(p for p in folder.iterdir() if p.is_dir()):
            if not child.name.startswith((".", "checkpoint-", "runs")):
                visit(child, depth + 1)

    visit(root, 0)
    if not entries:
        logger.warning("found no servable checkpoint under %s", root)
    return entries


# --- the models file ---------------------------------------------------------------------


def _entry_from_config(item: Any, index: int, base: Path, origin: Path) -> ModelEntry | None:
    where = f"{origin}, models[{index}]"
    if isinstance(item, str):
        item = {"path": item}
    if not isinstance(item, dict) or not isinstance(item.get("path"), str) or not item["path"].strip():
        raise NlueError(f"{where}: expected a mapping with a `path` (a folder or a Hub id)")
    unknown = set(item) - _ENTRY_KEYS
    if unknown:
        raise NlueError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(_ENTRY_KEYS))}"
        )
    raw = item["path"].strip()
    if "://" in raw:
        raise NlueError(f"{where}: {raw!r} is a URL; give a Hub id (owner/name) or a folder")
    folder = (base / raw).expanduser()
    declared_kind = item.get("kind")
    if declared_kind is not None and declared_kind not in KINDS:
        raise NlueError(f"{where}: kind {declared_kind!r} is not one of {', '.join(KINDS)}")
    declared_tasks = item.get("tasks")
    if declared_tasks is not None:
        if isinstance(declared_tasks, str):
            declared_tasks = [declared_tasks]
        try:
            declared_tasks = tuple(get_task(str(t)).name for t in declared_tasks)
        except ValueError as exc:
            raise NlueError(f"{where}: {exc}") from None
        zero_shot = [t for t in declared_tasks if not get_task(t).kind.trainable]
        if zero_shot:
            raise NlueError(
                f"{where}: {', '.join(zero_shot)} is served by masked LMs; write `kind: masked-lm` instead of a task"
            )
    name = str(item.get("name") or raw)
    if folder.is_dir():
        found = describe_checkpoint(folder)
        if found is None:
            logger.warning("%s: %s is %s; skipped", where, raw, _what_it_is(folder))
            return None
        kind, tasks = found
        if declared_kind and declared_kind != kind:
            raise NlueError(f"{where}: declared kind {declared_kind} but {raw} holds a {kind}")
        if declared_tasks:
            wrong = [t for t in declared_tasks if t not in tasks]
            if wrong and kind == "classifier":
                raise NlueError(
                    f"{where}: {raw} cannot serve {', '.join(wrong)}: its labels fit {', '.join(tasks) or 'no task'}"
                )
            tasks = declared_tasks
        return ModelEntry(name=name, source=str(folder), kind=kind, tasks=tasks)
    if not _HUB_ID.fullmatch(raw):
        logger.warning("%s: %s is neither a folder nor a Hub id (owner/name); skipped", where, raw)
        return None
    kind = declared_kind or "classifier"
    if kind == "classifier" and not declared_tasks:
        raise NlueError(f"{where}: a Hub classifier needs `tasks:` (its labels are checked when it loads)")
    return ModelEntry(name=name, source=raw, kind=kind, tasks=declared_tasks or ())


def read_models_file(path: Path) -> list[ModelEntry]:
    """The entries of a YAML or JSON models file (see the module docstring)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise NlueError(f"cannot read the models file {path}: {exc}") from None
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise NlueError(f"{path}: not valid JSON ({exc})") from None
    else:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise NlueError(f"{path}: not valid YAML ({exc})") from None
    if data is None:
        data = {}
    if isinstance(data, list):
        data = {"models": data}
    if not isinstance(data, dict) or set(data) - {"scan", "models"}:
        raise NlueError(f"{path}: expected a mapping with `scan:` and/or `models:` lists")
    base = path.parent
    entries: list[ModelEntry] = []
    for folder in data.get("scan") or []:
        entries.extend(scan_folder((base / str(folder)).resolve()))
    for index, item in enumerate(data.get("models") or []):
        entry = _entry_from_config(item, index, base, path)
        if entry is not None:
            entries.append(entry)
    return entries


def load_catalog(source: Path) -> ModelCatalog:
    """The catalog from a models file, or from scanning a folder."""
    source = Path(source)
    entries = read_models_file(source) if source.suffix in MODELS_FILE_SUFFIXES else scan_folder(source)
    catalog = ModelCatalog(entries)
    logger.info(
        "Space models from %s: %d classifier(s), %d masked LM(s), %d causal LM(s)",
        source,
        sum(e.kind == "classifier" for e in catalog),
        len(catalog.masked_lms()),
        len(catalog.causal_lms()),
    )
    return catalog
