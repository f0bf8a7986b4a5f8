"""Weights files that cannot be read are the user's input: :func:`readable_weights`.

transformers reads pickled weights (``pytorch_model.bin``) with ``torch.load(weights_only=True)``,
which refuses a file holding anything but tensors (a NumPy array, an object of the trainer that
saved it) and cannot unpickle a damaged one; safetensors refuses a damaged or cut file. Each is the
checkpoint the user named, not a fault of nlue, so every loader in :mod:`nlue.lm` loads weights
inside :func:`readable_weights`, which reports them as input errors (exit 2) with the library's reason.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import re
from collections.abc import Iterator
from pathlib import Path

from nlue.errors import NlueError

# torch's refusal names the first object it would not unpickle in one sentence; the rest is advice to
# turn the protection off, which nlue never does for a checkpoint it did not write.
_REFUSED_GLOBAL = re.compile(r"WeightsUnpickler error: ([^\n]*?\.)(?:\s|$)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _weights_files(source: str | os.PathLike) -> str:
    folder = Path(source)
    names = sorted(p.name for p in folder.glob("*") if p.suffix in (".bin", ".pt", ".pth", ".safetensors"))
    return f" ({', '.join(names[:5])}{', ...' if len(names) > 5 else ''})" if folder.is_dir() and names else ""


@contextlib.contextmanager
def readable_weights(source: str | os.PathLike) -> Iterator[None]:
    """Turn a weights file of ``source`` that cannot be read into an NlueError (exit 2) with the library's reason.

    transformers reads pickled weights (``pytorch_model.bin``) with ``torch.load(weights_only=True)``,
    which refuses a file holding anything but tensors (a NumPy array, an object of the trainer that
    saved it) and cannot unpickle a damaged one; safetensors refuses a damaged or cut file. Each is
    the checkpoint the user named, not a fault of nlue, so it is reported as their input.
    """
    from nlue.text.safe import terminal_safe

    try:
        yield
    except pickle.UnpicklingError as exc:
        message = _ANSI.sub("", str(exc))
        refused = _REFUSED_GLOBAL.search(message)
        if refused or "weights_only" in message.lower() or "Weights only load failed" in message:
            reason = refused.group(1) if refused else " ".join(message.split())[:300]
            raise NlueError(
                f"{source}: its pickled weights{_weights_files(source)} hold more than tensors, and torch's safe "
                f"loading (weights_only=True) refuses them: {terminal_safe(reason)} nlue does not load such files "
                "unsafely. If you trust the checkpoint, load it once yourself and save it as safetensors "
                "(model.save_pretrained(folder, safe_serialization=True)), then give that folder"
            ) from exc
        raise NlueError(
            f"{source}: a weights file{_weights_files(source)} cannot be unpickled, damaged or not a torch file "
            f"({terminal_safe(' '.join(message.split())[:300])}); save the checkpoint again"
        ) from exc
    except Exception as exc:
        if type(exc).__name__ != "SafetensorError":  # safetensors' Rust error class, importable only with it
            raise
        raise NlueError(
            f"{source}: a safetensors weights file{_weights_files(source)} cannot be read, damaged or cut short "
            f"({terminal_safe(exc)}); save or download the checkpoint again"
        ) from exc
