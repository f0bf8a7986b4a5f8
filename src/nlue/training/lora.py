"""LoRA through peft: adapters on the attention projections, the classification head trained in full.

The head is listed in ``modules_to_save`` so that it is trained and saved with the
adapter; without it a reloaded adapter would come back with a random head.
"""

from __future__ import annotations

import logging
from typing import Any

from nlue.errors import NlueError
from nlue.training.args import LoraArguments

logger = logging.getLogger(__name__)

# Attention projections to adapt, by config.model_type.
DEFAULT_TARGETS: dict[str, list[str]] = {
    "bert": ["query", "value"],
    "roberta": ["query", "value"],
    "xlm-roberta": ["query", "value"],
    "camembert": ["query", "value"],
    "electra": ["query", "value"],
    "deberta": ["in_proj"],
    "deberta-v2": ["query_proj", "value_proj"],
    "distilbert": ["q_lin", "v_lin"],
}


def target_modules(model: Any, lora_args: LoraArguments) -> list[str]:
    if lora_args.lora_target_modules:
        return [m.strip() for m in lora_args.lora_target_modules.split(",") if m.strip()]
    model_type = getattr(model.config, "model_type", "")
    if model_type not in DEFAULT_TARGETS:
        raise NlueError(
            f"no default LoRA target modules for model type {model_type!r}; pass --lora_target_modules "
            f"(known types: {', '.join(DEFAULT_TARGETS)})"
        )
    return DEFAULT_TARGETS[model_type]


def lora_settings(lora_args: LoraArguments) -> dict[str, Any]:
    return {
        "r": lora_args.lora_r,
        "alpha": lora_args.lora_alpha,
        "dropout": lora_args.lora_dropout,
        "target_modules": lora_args.lora_target_modules,
        "merged": lora_args.merge,
    }


def wrap_with_lora(model: Any, lora_args: LoraArguments) -> Any:
    """Return a peft model whose adapters and classification head train; the rest is frozen."""
    from peft import LoraConfig, TaskType, get_peft_model

    from nlue.lm.families import model_layout

    config = LoraConfig(
        task_type=TaskType.SEQ_CLS,
        r=lora_args.lora_r,
        lora_alpha=lora_args.lora_alpha,
        lora_dropout=lora_args.lora_dropout,
        target_modules=target_modules(model, lora_args),
        modules_to_save=list(model_layout(model).head),
    )
    peft_model = get_peft_model(model, config)
    trainable, total = peft_model.get_nb_trainable_parameters()
    logger.info("LoRA: %s of %s parameters train", f"{trainable:,}", f"{total:,}")
    return peft_model
