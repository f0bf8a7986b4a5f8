"""What answers: a model's identity, for the answer journal and a run's identity (:mod:`nlue.run_identity`).

:func:`answerer_identity` says which model gives a backend's answers: its backend, its name, the
folder, Hub id or served name, a fingerprint of its weights, and for a server the endpoint without
credentials (:func:`nlue.text.safe.public_url`). Answers journalled for one answerer are never
handed out for another (:mod:`nlue.lm.journal`), and a results file of one is never silently
replaced by one of another (:mod:`nlue.results`).

The model fingerprint (``model_fingerprint``):

* a local folder: ``sampled-sha256:<hex>``, a SHA-256 over every file of the folder's top level that
  can change what the model computes (configuration, tokenizer, chat template, code, weights; not
  the model card or training logs): its name, its size, and its bytes, whole for a file of up to
  1 MiB, else :data:`CHUNKS` chunks of 64 KiB spread evenly from its first to its last byte. At most
  1 MiB is read of a weight file, so a 15 GB model is fingerprinted in milliseconds. Why it is
  enough: training or fine-tuning changes weights throughout a file, so every chunk changes, and
  another model almost always differs in size or configuration. What it misses: an edit confined to
  bytes no chunk covers, in a file whose size did not change. Cached in the process per file size
  and modification time.
* a Hub id: ``hub-commit:<sha>``, the commit of the snapshot loaded (``config._commit_hash``, or the
  snapshot the local Hub cache resolves the id to).
* a server: None. A server does not say which weights it serves; its answers are known by the
  served name and the endpoint, which are both part of the identity.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nlue.text.safe import public_url

logger = logging.getLogger(__name__)

WHOLE_FILE = 1 << 20  # files up to this size are hashed whole
CHUNK = 1 << 16  # bytes per sampled chunk of a larger file
CHUNKS = 16  # chunks per larger file, first and last byte included
# What a model folder holds that changes its numbers, by file suffix; anything else (cards, logs) does not.
MODEL_SUFFIXES = frozenset({".json", ".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf", ".msgpack", ".h5",
                            ".onnx", ".model", ".spm", ".txt", ".tiktoken", ".py", ".jinja", ".vocab"})  # fmt: skip
# Training bookkeeping the Trainer leaves beside the weights; it does not change what the model computes.
NOT_MODEL = frozenset({"trainer_state.json", "training_args.bin", "all_results.json", "train_results.json",
                       "eval_results.json", "nlue_results.json", "optimizer.pt", "scheduler.pt", "scaler.pt"})  # fmt: skip
# A backend's settings that change its answers (a local model's precision, a server's route), where it has them.
NUMERIC_SETTINGS = ("dtype", "add_bos_token", "generation_endpoint", "temperature")
FOLDER_PREFIX, HUB_PREFIX = "sampled-sha256:", "hub-commit:"
_SNAPSHOT = re.compile(r"[/\\]snapshots[/\\]([0-9a-f]{40})[/\\]")


def _model_files(folder: Path) -> list[Path]:
    files = []
    for path in sorted(folder.iterdir()):
        name = path.name
        if name.startswith(".") or name in NOT_MODEL or name.startswith("rng_state") or not path.is_file():
            continue
        if path.suffix.lower() in MODEL_SUFFIXES:
            files.append(path)
    return files


def _file_digest(path: Path, size: int, digest: Any) -> None:
    with path.open("rb") as handle:
        if size <= WHOLE_FILE:
            digest.update(handle.read())
            return
        last = size - CHUNK
        for index in range(CHUNKS):
            handle.seek(last * index // (CHUNKS - 1))
            digest.update(handle.read(CHUNK))


@functools.lru_cache(maxsize=32)
def _folder_digest(stamps: tuple[tuple[str, int, int], ...], folder: str) -> str:
    digest = hashlib.sha256()
    for name, size, _ in stamps:
        digest.update(f"{name}\0{size}\0".encode())
        _file_digest(Path(folder) / name, size, digest)
    return FOLDER_PREFIX + digest.hexdigest()


def folder_fingerprint(folder: str | os.PathLike[str]) -> str:
    """The sampled content fingerprint of a local model folder (module docstring)."""
    root = Path(folder)
    stamps = []
    for path in _model_files(root):
        stat = path.stat()
        stamps.append((path.name, stat.st_size, stat.st_mtime_ns))
    return _folder_digest(tuple(stamps), str(root.resolve()))


def hub_commit(model_id: str, loaded: Any = None, revision: str | None = None) -> str | None:
    """The commit of the Hub snapshot a model was loaded from: the loaded config's, else the local cache's."""
    config = getattr(loaded, "config", None)
    commit = getattr(config, "_commit_hash", None)
    if isinstance(commit, str) and commit:
        return commit
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(model_id, "config.json", revision=revision)
    except Exception as exc:  # not a repo id (a served name, a path that is gone): no commit to tell
        logger.debug("no Hub cache entry for %r: %s", model_id, exc)
        return None
    match = _SNAPSHOT.search(str(found)) if isinstance(found, str) else None
    return match.group(1) if match else None


def model_fingerprint(model_id: str, loaded: Any = None, revision: str | None = None) -> str | None:
    """``sampled-sha256:...`` for a local folder, ``hub-commit:...`` for a Hub snapshot, else None."""
    if not model_id:
        return None
    if os.path.isdir(model_id):
        return folder_fingerprint(model_id)
    commit = hub_commit(model_id, loaded, revision)
    return HUB_PREFIX + commit if commit else None


def _loaded_weights(model: Any) -> Any:
    """The transformers model inside a backend object, when it holds one (for the snapshot's commit)."""
    for name in ("model", "_model"):
        inner = getattr(model, name, None)
        if inner is not None and hasattr(inner, "config"):
            return inner
    return None


def answerer_identity(model: Any) -> dict[str, Any]:
    """Which model answers: backend, name, model, model_fingerprint, endpoint (no credentials), settings.

    ``model`` is any backend with ``describe()`` (:class:`nlue.lm.description.ModelDescription`).
    """
    description = model.describe()
    settings: Mapping[str, Any] = description.settings or {}
    endpoint = public_url(settings.get("base_url"))
    fingerprint = None
    if not endpoint:
        fingerprint = model_fingerprint(str(description.model), _loaded_weights(model), settings.get("revision"))
    identity = {
        "backend": description.backend,
        "name": description.name,
        "model": description.model,
        "model_fingerprint": fingerprint,
        "endpoint": endpoint,
    }
    numeric = {k: settings[k] for k in NUMERIC_SETTINGS if settings.get(k) is not None}
    if numeric:
        identity["settings"] = numeric
    return identity
