"""Loading checkpoints: one home for what a model folder is and how it becomes a model.

* :func:`is_adapter_folder`, :func:`is_checkpoint` - what a local folder holds (a peft
  LoRA adapter, or a full transformers checkpoint);
* :func:`load_sequence_classifier` - ``AutoModelForSequenceClassification.from_pretrained``
  that restores the optional extra fully connected layer (:mod:`nlue.training.extra_fc`);
* :func:`load_classifier` - model and tokenizer from a checkpoint folder, a Hub id or an
  adapter folder (the evaluator, the search and the Space use it);
* :func:`load_masked_lm` - a fill-mask model and its tokenizer (GMET, the Space's GMET tab);
* :func:`readable_weights` - a weights file that cannot be read (refused by torch's ``weights_only``
  loading, damaged, cut short) as the user's input error it is, with the library's reason; every
  loader in :mod:`nlue.lm` loads weights inside it.

torch and transformers are imported inside the functions, so that importing this module
(the Space's model list does, to tell folders apart) costs nothing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pickle
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nlue.errors import NlueError

logger = logging.getLogger(__name__)

ADAPTER_CONFIG = "adapter_config.json"


def is_adapter_folder(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a local peft adapter folder (LoRA)."""
    return (Path(path) / ADAPTER_CONFIG).is_file()


def is_checkpoint(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a local checkpoint: a transformers model folder or an adapter folder."""
    return (Path(path) / "config.json").is_file() or is_adapter_folder(path)


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


def load_classifier(path_or_id: str, trust_remote_code: bool = False) -> tuple[Any, Any]:
    """Model (in eval mode) and tokenizer from a checkpoint folder, a Hub id, or a LoRA adapter folder."""
    from transformers import AutoTokenizer

    if is_adapter_folder(path_or_id):
        from peft import AutoPeftModelForSequenceClassification

        with readable_weights(path_or_id):
            model = AutoPeftModelForSequenceClassification.from_pretrained(path_or_id)
    else:
        model = load_sequence_classifier(path_or_id, trust_remote_code=trust_remote_code)
    tokenizer = AutoTokenizer.from_pretrained(path_or_id, trust_remote_code=trust_remote_code)
    model.eval()
    return model, tokenizer


_HUB_KWARGS = ("cache_dir", "force_download", "local_files_only", "token", "revision", "subfolder")


@contextlib.contextmanager
def _quiet_load_report(expected_name: str) -> Iterator[None]:
    """Drop transformers' load report when it names the extra FC: those keys are expected, and
    ``_check_load`` turns any other problem of the report into an error."""
    report_logger = logging.getLogger("transformers.modeling_utils")

    def keep(record: logging.LogRecord) -> bool:
        return expected_name not in record.getMessage()

    report_logger.addFilter(keep)
    try:
        yield
    finally:
        report_logger.removeFilter(keep)


def _checkpoint_tensors(path_or_id: str | os.PathLike, keys: set[str], hub: dict[str, Any]) -> dict[str, Any]:
    """Read ``keys`` from a safetensors checkpoint (single file or sharded), local or on the Hub."""
    from safetensors import safe_open
    from transformers.utils import SAFE_WEIGHTS_INDEX_NAME, SAFE_WEIGHTS_NAME, cached_file

    def resolve(filename: str) -> str | None:
        return cached_file(path_or_id, filename, _raise_exceptions_for_missing_entries=False, **hub)

    single = resolve(SAFE_WEIGHTS_NAME)
    if single is not None:
        files = {key: single for key in keys}
    else:
        index = resolve(SAFE_WEIGHTS_INDEX_NAME)
        if index is None:
            raise NlueError(f"{path_or_id}: the extra FC layer can be loaded from safetensors checkpoints only")
        with open(index, encoding="utf-8") as handle:
            weight_map = json.load(handle)["weight_map"]
        files = {key: resolve(weight_map[key]) for key in keys if key in weight_map}
    tensors: dict[str, Any] = {}
    for file in set(files.values()):
        with safe_open(file, framework="pt") as handle:
            tensors.update({key: handle.get_tensor(key) for key in keys if files.get(key) == file})
    return tensors


def _check_load(path_or_id: str | os.PathLike, info: dict[str, Any], expected: set[str]) -> None:
    """Raise unless the checkpoint matched the model exactly, apart from the extra-FC keys."""
    problems = []
    if info.get("missing_keys"):
        problems.append(f"missing keys {sorted(info['missing_keys'])}")
    if info.get("mismatched_keys"):
        problems.append(f"mismatched keys {sorted(info['mismatched_keys'])}")
    unexpected = set(info.get("unexpected_keys") or ())
    if unexpected != expected:
        problems.append(f"unexpected keys {sorted(unexpected)}, expected exactly the extra FC {sorted(expected)}")
    if problems:
        raise NlueError(f"{path_or_id}: checkpoint does not match its extra-FC config: " + "; ".join(problems))


def load_sequence_classifier(path_or_id: str | os.PathLike, **kwargs: Any) -> Any:
    """``AutoModelForSequenceClassification.from_pretrained`` that restores the extra FC layer.

    Without ``nlue_extra_fc`` in the config this is the plain call (any checkpoint, base models
    included). With it, the model is loaded, the layer is rebuilt from the config, its saved
    weights are read from the checkpoint and loaded strictly, and any other missing, mismatched
    or unexpected key is an error, so nothing is silently re-initialised. ``kwargs`` go to
    ``from_pretrained`` (``output_loading_info=True`` returns the loading info too, with the
    extra-FC keys no longer listed as unexpected).
    """
    from transformers import AutoConfig, AutoModelForSequenceClassification

    from nlue.lm.families import model_layout
    from nlue.training.extra_fc import EXTRA_FC_NAME, add_extra_fc

    hub = {key: kwargs[key] for key in _HUB_KWARGS if key in kwargs}
    config = kwargs.get("config")
    if not hasattr(config, "model_type"):
        remote = {"trust_remote_code": kwargs["trust_remote_code"]} if "trust_remote_code" in kwargs else {}
        config = AutoConfig.from_pretrained(config or path_or_id, **hub, **remote)
    if not getattr(config, "nlue_extra_fc", False):
        with readable_weights(path_or_id):
            return AutoModelForSequenceClassification.from_pretrained(path_or_id, **kwargs)
    return_info = kwargs.pop("output_loading_info", False)
    with _quiet_load_report(EXTRA_FC_NAME), readable_weights(path_or_id):
        model, info = AutoModelForSequenceClassification.from_pretrained(path_or_id, output_loading_info=True, **kwargs)
    layout = model_layout(model)
    extra = add_extra_fc(
        model,
        layout,
        getattr(model.config, "nlue_extra_fc_activation", "gelu"),
        getattr(model.config, "nlue_extra_fc_dropout", None),
    )
    prefix = f"{layout.logits}.{EXTRA_FC_NAME}."
    expected = {prefix + key for key in extra.state_dict()}
    _check_load(path_or_id, info, expected)
    tensors = _checkpoint_tensors(path_or_id, expected, hub)
    extra.load_state_dict({key[len(prefix) :]: value for key, value in tensors.items()}, strict=True)
    logger.info("%s: restored the extra FC layer at %s", path_or_id, prefix.rstrip("."))
    if return_info:
        return model, {**info, "unexpected_keys": set(info["unexpected_keys"]) - expected}
    return model


def load_masked_lm(name_or_path: str) -> tuple[Any, Any]:
    """A fill-mask model and its tokenizer; a clear error for what is not one (or not there)."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from nlue.errors import NlueError

    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, trust_remote_code=False)
    except (OSError, ValueError) as exc:
        raise NlueError(f"{name_or_path}: cannot load its tokenizer: {exc}") from exc
    if getattr(tokenizer, "mask_token", None) is None:  # refuse before loading weights
        raise NlueError(
            f"{name_or_path}: its tokenizer has no mask token, so it is not a masked language model; "
            "GMET needs a fill-mask checkpoint (BERT [MASK], RoBERTa/XLM-R <mask>, DeBERTa, ...)"
        )
    try:
        with readable_weights(name_or_path):
            model = AutoModelForMaskedLM.from_pretrained(name_or_path, trust_remote_code=False)
    except ValueError as exc:
        raise NlueError(f"{name_or_path}: is not a masked language model (fill-mask): {exc}") from exc
    except OSError as exc:
        raise NlueError(f"{name_or_path}: cannot load the model: {exc}") from exc
    model.eval()
    return model, tokenizer


def classifier_from_spec(spec: Any, **context: Any) -> tuple[Any, Any]:
    """The ``sequence-classifier`` backend (:mod:`nlue.lm.backends`): (model in eval mode, tokenizer)."""
    return load_classifier(spec.model, trust_remote_code=bool(context.get("trust_remote_code", False)))
