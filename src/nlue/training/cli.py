"""Command-line entry points of the recipes: `nlue train`, `nlue search`, `python trainers/*.py`.

Arguments are parsed by transformers' HfArgumentParser from the command line, or from
one JSON/YAML file given as the only argument.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from nlue.cli_support import configure_logging, run_command, run_with_task_files, split_logging_flags

logger = logging.getLogger(__name__)


def train_main(argv: Sequence[str] | None = None, prog: str = "nlue train") -> int:
    """Parse the recipe's arguments and run one fine-tuning."""
    from nlue.training.args import (
        DataArguments,
        LoraArguments,
        ModelArguments,
        NlueTrainingArguments,
        RecipeArguments,
        data_task_files,
        parse,
    )
    from nlue.training.run import run_training

    args = list(sys.argv[1:] if argv is None else argv)
    model_args, data_args, lora_args, recipe_args, training_args = parse(
        (ModelArguments, DataArguments, LoraArguments, RecipeArguments, NlueTrainingArguments), args, prog
    )
    with data_task_files(data_args):
        outcome = run_training(model_args, data_args, lora_args, recipe_args, training_args)
    if training_args.process_index == 0:
        print(f"checkpoint : {outcome.output_dir}")
        print(f"results    : {outcome.results_path}")
        print(f"model card : {outcome.card_path}")
        if outcome.merged_dir:
            print(f"merged     : {outcome.merged_dir}")
        if outcome.result.dataset.get("is_sample"):
            from nlue.data.sample import SAMPLE_DATA_NOTE

            print(SAMPLE_DATA_NOTE)
        seeds = outcome.result.details.get("seeds")
        if seeds:
            print(
                f"seeds      : {', '.join(map(str, seeds))} (mean over seeds; each seed in {outcome.output_dir}/seed-*)"
            )
        for name, value in outcome.result.metrics.items():
            if not name.endswith(("_ci_low", "_ci_high", "_sd")):
                low = outcome.result.metrics.get(f"{name}_ci_low")
                high = outcome.result.metrics.get(f"{name}_ci_high")
                ci = f"  (95% CI {low:.4f}-{high:.4f})" if low is not None and high is not None else ""
                sd = outcome.result.metrics.get(f"{name}_sd")
                print(f"test {name:<22} {value:.4f}" + (f" ± {sd:.4f} sd" if sd is not None else "") + ci)
    return 0


def run_hf_command(name: str, argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Run `nlue train|search` (or ``trainers/train.py``, ``trainers/search.py``) on the CLI's backbone.

    The logging flags may stand anywhere in ``argv``; errors become the exit codes and
    messages every other sub-command uses (:func:`nlue.cli_support.run_command`).
    """
    from nlue.training.processes import process_label
    from nlue.training.search import search_main

    commands = {"train": train_main, "search": search_main}
    given = list(sys.argv[1:] if argv is None else argv)
    verbose, quiet, rest = split_logging_flags(given)
    configure_logging(verbose, quiet)
    # --task-file, $NLUE_TASK_FILES and the files a --dataset carries, registered before the arguments are
    # parsed (trainers/train.py and torchrun's every process come through here too).
    return run_with_task_files(
        name,
        given,
        # Under torchrun every process reports its own failure: the label says which one it was.
        lambda: run_command(name + process_label(), lambda: commands[name](rest, prog=prog or f"nlue {name}")),
    )
