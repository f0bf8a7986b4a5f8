"""LoRA classifiers: which task an adapter folder serves, and loading it onto its base model.

A classifier adapter (peft, ``task_type: SEQ_CLS``) holds the LoRA matrices and, as peft's
``modules_to_save``, the weights of the classification head (and of a pooler trained with it);
its base is a checkpoint with no head for the task, often a masked LM. Loading the base as a
sequence classifier therefore leaves the head's weights *missing* and the base's own head
*unexpected*, and transformers prints that as a load report, although the adapter supplies the
head a moment later. :func:`load_adapter_classifier` drops that report and checks the load
itself: a weight that neither the base nor the adapter holds (it would be random, and the
predictions not the trained model's) is named in a warning, as is a shape the base gets wrong.

The base is built with the task's labels (its registry ``classifier_config``), so that an
adapter of a three-label task (MNLI) loads onto a three-output head, and the model's config
names its labels in the registry's order.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nlue.errors import NlueError
from nlue.lm.weight_files import readable_weights

logger = logging.getLogger(__name__)

RESULTS_FILE = "nlue_results.json"  # what `nlue train` writes beside a checkpoint; its task names the adapter's
_PEFT_PREFIX = "base_model.model."  # how peft names the base model's weights inside an adapter file
_ADAPTER_WEIGHTS = "adapter_model.safetensors"


def adapter_task(folder: str | os.PathLike) -> Any:
    """The registry task an adapter folder was trained for, or None.

    The ``task`` of the ``nlue_results.json`` beside it, else a trainable task's name as the
    folder's or its parent's name (``build/models/sa``, ``runs/xlmr/sa/adapter``).
    """
    from nlue.registry.tasks import TASKS, TRAINABLE_TASKS

    folder = Path(folder)
    results = folder / RESULTS_FILE
    if results.is_file():
        try:
            name = json.loads(results.read_text(encoding="utf-8")).get("task")
        except (OSError, ValueError, AttributeError) as exc:
            raise NlueError(f"{results}: cannot read the task it names ({exc})") from None
        if name in TRAINABLE_TASKS:
            return TASKS[name]
    for part in (folder.name, folder.parent.name):
        if part in TRAINABLE_TASKS:
            return TASKS[part]
    return None


@contextlib.contextmanager
def _without_load_report(source: str) -> Iterator[None]:
    """Drop transformers' load report for ``source`` while the block runs (the caller checks the load itself)."""
    report_logger = logging.getLogger("transformers.modeling_utils")

    def keep(record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not ("LOAD REPORT" in message and str(source) in message)

    report_logger.addFilter(keep)
    try:
        yield
    finally:
        report_logger.removeFilter(keep)


def _supplied_by_adapter(folder: Path, modules_to_save: Any) -> Any:
    """A test of a base weight's name: does the adapter hold it (its file's names, else its modules_to_save)?"""
    weights = folder / _ADAPTER_WEIGHTS
    if weights.is_file():
        from safetensors import safe_open

        with safe_open(str(weights), framework="pt") as handle:
            names = {key.removeprefix(_PEFT_PREFIX) for key in handle.keys()}  # noqa: SIM118 (no __iter__)
        return names.__contains__
    prefixes = tuple(f"{module}." for module in modules_to_save or ())  # a pickled adapter: read by its config
    return lambda name: name.startswith(prefixes) if prefixes else False


def load_adapter_classifier(folder: str | os.PathLike) -> Any:
    """The adapter's base model as a sequence classifier for its task, with the adapter loaded onto it."""
    from peft import PeftConfig, PeftModel
    from transformers import AutoModelForSequenceClassification

    folder = Path(folder)
    adapter = PeftConfig.from_pretrained(str(folder))
    if adapter.task_type != "SEQ_CLS":
        raise NlueError(f"{folder}: a {adapter.task_type} adapter; a classifier needs a SEQ_CLS one")
    task = adapter_task(folder)
    labels = task.kind.classifier_config(task) if task is not None else {}
    base = adapter.base_model_name_or_path
    revision = {"revision": adapter.revision} if adapter.revision else {}
    with _without_load_report(base), readable_weights(base):
        model, info = AutoModelForSequenceClassification.from_pretrained(
            base, output_loading_info=True, **revision, **labels
        )
    with readable_weights(folder):
        model = PeftModel.from_pretrained(model, str(folder))
    supplied = _supplied_by_adapter(folder, getattr(adapter, "modules_to_save", None))
    random = sorted(name for name in info.get("missing_keys") or () if not supplied(name))
    misshapen = sorted(str(entry[0] if isinstance(entry, tuple) else entry)
                       for entry in info.get("mismatched_keys") or ())  # fmt: skip
    misshapen = [name for name in misshapen if not supplied(name)]
    if random:
        logger.warning("%s: weights in neither the base model %s nor the adapter, so initialised at random: %s; "
                       "the predictions are not those of the trained model", folder, base, ", ".join(random))  # fmt: skip
    if misshapen:
        logger.warning("%s: weights of the base model %s whose shapes do not fit, so initialised at random: %s",
                       folder, base, ", ".join(misshapen))  # fmt: skip
    unused = info.get("unexpected_keys") or ()
    logger.debug("%s: base weights the classifier does not use (its own head): %s", folder, ", ".join(sorted(unused)))
    return model
