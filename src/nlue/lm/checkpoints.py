"""Loading checkpoints: one home for what a model folder is and how it becomes a model.

* :func:`is_adapter_folder`, :func:`is_checkpoint` - what a local folder holds (a peft
  LoRA adapter, or a full transformers checkpoint); :func:`is_causal_lm_config` - whether a
  ``config.json`` is a causal LM's;
* :func:`load_sequence_classifier` - ``AutoModelForSequenceClassification.from_pretrained``
  that restores the optional extra fully connected layer (:mod:`nlue.lm.extra_fc`);
* :func:`load_classifier` - model and tokenizer from a checkpoint folder, a Hub id or an
  adapter folder (the evaluator, the search and the Space use it);
* :func:`load_masked_lm` - a fill-mask model and its tokenizer (GMET, the Space's GMET tab).
A LoRA adapter folder is loaded by :mod:`nlue.lm.adapters`; a weights file that cannot be read is
reported by :mod:`nlue.lm.weight_files`.

torch and transformers are imported inside the functions, so that importing this module
(the Space's model list does, to tell folders apart) costs nothing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.lm.weight_files import readable_weights

logger = logging.getLogger(__name__)

ADAPTER_CONFIG = "adapter_config.json"


def is_adapter_folder(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a local peft adapter folder (LoRA)."""
    return (Path(path) / ADAPTER_CONFIG).is_file()


def is_checkpoint(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a local checkpoint: a transformers model folder or an adapter folder."""
    return (Path(path) / "config.json").is_file() or is_adapter_folder(path)


def is_causal_lm_config(config: Mapping[str, Any]) -> bool:
    """Whether a ``config.json`` (as read) is a causal LM's, one ``AutoModelForCausalLM`` builds as it was saved.

    Its architecture says so (``*ForCausalLM``, ``*LMHeadModel``), or it is the very class transformers
    maps the model type to for causal LM (Gemma 3's ``Gemma3ForConditionalGeneration``), or, with no
    architecture recorded, its model type has a causal-LM class and no masked-LM one (``llama``, not
    ``bert``). A sequence-to-sequence or classifier checkpoint is none of these.
    """
    architectures = [str(a) for a in config.get("architectures") or ()]
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in architectures):
        return True
    model_type = config.get("model_type")
    if not isinstance(model_type, str):
        return False
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    causal_class = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(model_type)
    if causal_class is None:
        return False
    if architectures:
        return causal_class in architectures
    return model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES


def load_classifier(path_or_id: str, trust_remote_code: bool = False) -> tuple[Any, Any]:
    """Model (in eval mode) and tokenizer from a checkpoint folder, a Hub id, or a LoRA adapter folder."""
    from transformers import AutoTokenizer

    if is_adapter_folder(path_or_id):
        from nlue.lm.adapters import load_adapter_classifier

        model = load_adapter_classifier(path_or_id)  # the base with the task's labels, then the adapter
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

    from nlue.lm.extra_fc import EXTRA_FC_NAME, add_extra_fc
    from nlue.lm.families import model_layout

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
