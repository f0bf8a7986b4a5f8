"""A run's identity: everything that changes its numbers, stored in every results file, and what it allows.

Every command that writes a results file (:mod:`nlue.results`) records ``identity``, an object of
these fields, and ``identity_key``, a short hash of the fields that define the run:

* ``task``, ``split``: what was scored; ``task_fingerprint``: the task's declaration, a hash of what in it
  changes numbers (prompts, labels, label words, inputs, metrics, profile, kind:
  :func:`nlue.registry.declaration.task_fingerprint`), for shipped and user tasks alike, so that a run
  after an edit of its task file is a run of another identity; None for a task the registry does not know;
* ``model``: the folder, Hub id or served name; ``backend``: how it was loaded or called;
  ``model_fingerprint``: which weights (a local folder's sampled content hash, a Hub snapshot's
  commit; None for a server, which does not say; :mod:`nlue.lm.fingerprint`); ``endpoint``: the
  server's URL without credentials (None for a local model);
* ``mode`` (``loglik``, ``generate``, ``fine-tune``, ...), ``shots``, ``prompt_language``, ``seed``;
* ``limit``: the ``--limit`` asked for (None: the whole split);
* ``dataset_fingerprint``: SHA-256 of the whole split, every item with every field, in order (not
  only the items scored, so that a ``--limit`` run and a full run of one split share it);
  ``demonstrations_fingerprint``: the same of the demonstration pool of a k-shot prompt;
* ``settings``: the rest that changes numbers for this command (precision, chat or plain text,
  token cap, bootstrap resamples, hyperparameters, ...).

Beside them, not part of the key: ``items`` (scored), ``split_items`` (in the split) and
``complete`` (every item of the split scored). A run is *partial* when it scored fewer items than
its split has. A fine-tuning run also names the checkpoint it writes (``checkpoint``: its path, and
its fingerprint once written).

What the identity allows (:func:`replacement_refusal`, applied by :func:`nlue.results.write_result`):
a results file is replaced by a run of the same identity (the same run again, quietly), by a
complete run that differs from a partial one only in its limit, and, on the same items, by the
same checkpoint scored again (``nlue evaluate`` of what ``nlue train`` wrote) or by the training run
that rewrites the checkpoint a result scored. A partial run never replaces a
complete one, and a run of another identity never replaces a result, unless the user says so
(``--overwrite``). A partial run also gets a folder of its own (:func:`limit_suffix`), so it meets a
complete one only when told to write there.

A results file written before identities held ``task_fingerprint`` (identity version 1) keeps the key
it was written with (a field added later enters the key only when known), and its task declaration
counts as unknown, as a file without any identity does: a complete run that agrees with it on every
other field takes its place, a partial one does not.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

from nlue.text.safe import terminal_safe

IDENTITY_VERSION = 2  # 2: task_fingerprint
KEY_FIELDS: tuple[str, ...] = (
    "task", "task_fingerprint", "split", "model", "backend", "model_fingerprint", "endpoint", "mode", "shots", "prompt_language",
    "limit", "seed", "dataset_fingerprint", "demonstrations_fingerprint", "settings",
)  # fmt: skip
EXTENT_FIELDS: tuple[str, ...] = ("items", "split_items", "complete")
# Key fields added after version 1: in the key only when known, so an older file keeps the key it was written with.
LATER_KEY_FIELDS: tuple[str, ...] = ("task_fingerprint",)
SHORT = 16  # hex digits of identity_key


@dataclass(frozen=True)
class SplitFacts:
    """What a run knows of its data: the whole split's fingerprint and size, the items scored, the pool's fingerprint."""

    dataset_fingerprint: str
    split_items: int
    items: int
    demonstrations_fingerprint: str | None = None

    @property
    def complete(self) -> bool:
        return self.items >= self.split_items


def _plain(item: Any) -> Any:
    if is_dataclass(item) and not isinstance(item, type):
        return asdict(item)
    return item


def _rows(items: Iterable[Any]) -> Iterable[Any]:
    """The items one by one; a ``datasets.Dataset`` read a batch at a time (much faster than row by row)."""
    if hasattr(items, "iter") and hasattr(items, "column_names"):
        for batch in items.iter(batch_size=1000):  # type: ignore[attr-defined]
            names = list(batch)
            yield from (dict(zip(names, values, strict=True)) for values in zip(*batch.values(), strict=True))
    else:
        yield from items


def items_fingerprint(items: Iterable[Any]) -> str:
    """SHA-256 of the items in order, each as canonical JSON of all its fields (dicts, dataclasses, a Dataset)."""
    digest = hashlib.sha256()
    for item in _rows(items):
        text = json.dumps(_plain(item), ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
        digest.update(text.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def split_facts(split: Sequence[Any], scored: int, pool: Sequence[Any] | None = None) -> SplitFacts:
    """The facts of a run that scored the first ``scored`` items of ``split`` (with ``pool`` as demonstrations)."""
    return SplitFacts(
        dataset_fingerprint=items_fingerprint(split),
        split_items=len(split),  # type: ignore[arg-type]
        items=min(scored, len(split)),
        demonstrations_fingerprint=items_fingerprint(pool) if pool else None,
    )


def limit_suffix(limit: int | None) -> str:
    """What a partial run's folder name ends with: ``-limit<N>`` for ``--limit N``, nothing without a limit."""
    return f"-limit{limit}" if limit else ""


def declared_fingerprint(task: str) -> str | None:
    """The declaration fingerprint of the registered task ``task`` (None when the registry does not know it)."""
    from nlue.registry.declaration import task_fingerprint
    from nlue.registry.tasks import TASKS

    spec = TASKS.get(task)
    return task_fingerprint(spec) if spec is not None else None


def local_model(model: str, backend: str) -> dict[str, Any]:
    """The model part of an identity for a model a command loads itself (fine-tuning, the baselines)."""
    from nlue.lm.fingerprint import model_fingerprint

    return {"backend": backend, "model": model, "model_fingerprint": model_fingerprint(model), "endpoint": None}


def run_identity(
    task: str,
    answerer: Mapping[str, Any],
    facts: SplitFacts,
    *,
    mode: str,
    shots: int | None = None,
    prompt_language: str | None = None,
    limit: int | None = None,
    seed: int | None = None,
    split: str = "test",
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A run's identity (module docstring); ``answerer`` from :func:`nlue.lm.fingerprint.answerer_identity`."""
    merged = {**dict(answerer.get("settings") or {}), **dict(settings or {})}
    merged = json.loads(json.dumps(merged, default=str))  # plain JSON values (an enum's text, a path's)
    return {
        "version": IDENTITY_VERSION,
        "task": task,
        "task_fingerprint": declared_fingerprint(task),
        "split": split,
        "model": answerer.get("model"),
        "backend": answerer.get("backend"),
        "model_fingerprint": answerer.get("model_fingerprint"),
        "endpoint": answerer.get("endpoint"),
        "mode": mode,
        "shots": shots,
        "prompt_language": prompt_language,
        "limit": limit,
        "seed": seed,
        "dataset_fingerprint": facts.dataset_fingerprint,
        "demonstrations_fingerprint": facts.demonstrations_fingerprint,
        "settings": dict(sorted(merged.items())),
        "items": facts.items,
        "split_items": facts.split_items,
        "complete": facts.complete,
    }


def identity_key(identity: Mapping[str, Any]) -> str:
    """A short hash of the defining fields (:data:`KEY_FIELDS`): equal keys, the same run."""
    payload = {name: identity.get(name) for name in KEY_FIELDS
               if name not in LATER_KEY_FIELDS or identity.get(name) is not None}  # fmt: skip
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:SHORT]


def _shown(value: Any) -> str:
    if isinstance(value, str) and len(value) > 40 and " " not in value:  # a fingerprint: its start tells enough
        return value[:28] + "…"
    return terminal_safe(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str), limit=120)


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``field: <there> -> <this run>`` for each defining field that differs."""
    out = []
    for name in KEY_FIELDS:
        if name in LATER_KEY_FIELDS and old.get(name) is None:
            continue  # unknown there (an older file), not different
        if old.get(name) != new.get(name):
            out.append(f"{name}: {_shown(old.get(name))} there, {_shown(new.get(name))} in this run")
    return out


def _extent(identity: Mapping[str, Any]) -> str:
    items, total = identity.get("items"), identity.get("split_items")
    return f"{items} of {total} items" if items is not None and total is not None else "its items"


def _same_place(first: Any, second: Any) -> bool:
    return bool(first) and bool(second) and os.path.realpath(str(first)) == os.path.realpath(str(second))


def same_checkpoint(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether two runs score one checkpoint on the same items: a training run and the evaluation of what it
    wrote (its fingerprint), or a training run that rewrites the checkpoint a result scored (its folder)."""
    if any(old.get(k) != new.get(k) for k in ("task", "split", "dataset_fingerprint", "limit")):
        return False
    if None not in (old.get("task_fingerprint"), new.get("task_fingerprint")) and (
        old.get("task_fingerprint") != new.get("task_fingerprint")
    ):
        return False  # the task's declaration changed: scored another way
    old_checkpoint, new_checkpoint = old.get("checkpoint") or {}, new.get("checkpoint") or {}
    if new_checkpoint and _same_place(new_checkpoint.get("path"), old.get("model")):
        return True  # this training rewrites the checkpoint that result scored: the result goes with it
    fingerprint = old_checkpoint.get("fingerprint")
    return bool(fingerprint) and fingerprint == new.get("model_fingerprint")  # those very weights, scored again


def replacement_refusal(existing: Any, identity: Mapping[str, Any] | None) -> str | None:
    """Why a run of ``identity`` may not replace the results file ``existing`` (parsed), or None when it may."""
    if identity is None or not isinstance(existing, Mapping):
        return None  # a writer that records no identity, or a file that is no result: nothing to compare
    new_complete = identity.get("complete") is not False
    old = existing.get("identity")
    if not isinstance(old, Mapping):
        if new_complete:
            return None  # written before runs recorded their identity: a complete run takes its place
        return (f"it holds a result written without a run identity (by an older nlue, or by hand), and this run "
                f"is partial ({_extent(identity)})")  # fmt: skip
    if identity_key(old) == identity_key(identity) or same_checkpoint(old, identity):
        return None  # the same run again, or the same checkpoint scored again
    unknown = [name for name in LATER_KEY_FIELDS if old.get(name) is None and identity.get(name) is not None]
    if unknown and identity_key(old) == identity_key({**identity, **dict.fromkeys(unknown)}):
        if new_complete:
            return None  # written before identities held these: unknown there, and the rest agrees
        return (f"it holds a result written before run identities recorded {', '.join(unknown)} (by an older "
                f"nlue), and this run is partial ({_extent(identity)})")  # fmt: skip
    old_complete = old.get("complete") is not False
    changed = differences(old, identity)
    listed = "; ".join(changed)
    if old_complete and not new_complete:
        return (f"it holds a complete run ({_extent(old)}) and this run is partial ({_extent(identity)}); "
                f"a partial run never replaces a complete one (differs: {listed})")  # fmt: skip
    if new_complete and not old_complete and {c.split(":", 1)[0] for c in changed} <= {"limit"}:
        return None  # the complete run of the same setting replaces the partial one
    return f"it holds a run of another identity (differs: {listed})"


def model_run_identity(model: Any, task: str, facts: SplitFacts, **fields: Any) -> dict[str, Any]:
    """:func:`run_identity` of a run of a loaded backend (``describe()`` tells what answers)."""
    from nlue.lm.fingerprint import answerer_identity

    return run_identity(task, answerer_identity(model), facts, **fields)
