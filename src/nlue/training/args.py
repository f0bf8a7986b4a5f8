"""Arguments of the fine-tuning recipe, as dataclasses with help text.

Parsed by transformers' HfArgumentParser from the command line or from a JSON/YAML
file (``nlue train args.yaml``). The defaults follow the NLUE paper's protocol: up to
15 epochs, evaluation every epoch, early stopping after 3 epochs without a better
validation loss, and the best checkpoint restored before the final evaluation.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from transformers import TrainingArguments

from nlue.errors import NlueError

PRECISIONS = ("auto", "fp32", "bf16", "fp16")


@dataclass
class ModelArguments:
    model_name_or_path: str = field(
        metadata={
            "help": "Encoder to fine-tune: a Hub id or a local folder (any AutoModelForSequenceClassification).",
            "aliases": ["--model"],
        }
    )
    tokenizer_name: str | None = field(default=None, metadata={"help": "Tokenizer, if not the model's own."})
    preset: str = field(
        default="I",
        metadata={
            "help": "Parameter subset that trains: I (everything, full fine-tuning), II (all layers, embeddings "
            "frozen) .. VII (head + top sixth of the layers), VIII (classification head only). Our reading of "
            "the paper's configurations I-VIII; see trainers/README.md."
        },
    )
    extra_fc: bool = field(
        default=False,
        metadata={
            "help": "Add a new fully connected layer (Linear d->d, GELU, dropout) before the classifier; it trains "
            "with any preset. The paper tried it with its configuration IV. Not with --lora."
        },
    )
    trust_remote_code: bool = field(
        default=False, metadata={"help": "Allow model code from the Hub repo (off: only transformers' own code runs)."}
    )


@dataclass
class DataArguments:
    task: str = field(metadata={"help": "NLUE config to train on (see `nlue tasks`); gmet is zero-shot only."})
    dataset: str | None = field(
        default=None,
        metadata={"help": "Built NLUE dataset: a Hub id or a local folder. Default: the embedded sample data."},
    )
    task_file: list[str] = field(
        default_factory=list,
        metadata={
            "help": "Task files (YAML), folders of them or benchmark files whose tasks --task may name (the tasks a "
            "--dataset built by nlue carries are known without it; so are those of $NLUE_TASK_FILES)."
        },
    )
    max_seq_length: int = field(default=128, metadata={"help": "Longest tokenized input; longer inputs are cut."})
    max_train_samples: int | None = field(default=None, metadata={"help": "Use only the first N training rows."})
    max_eval_samples: int | None = field(default=None, metadata={"help": "Use only the first N validation/test rows."})


@dataclass
class LoraArguments:
    lora: bool = field(default=False, metadata={"help": "Train LoRA adapters (peft) instead of a parameter preset."})
    lora_r: int = field(default=8, metadata={"help": "LoRA rank."})
    lora_alpha: int = field(default=16, metadata={"help": "LoRA scaling alpha."})
    lora_dropout: float = field(default=0.1, metadata={"help": "Dropout on the LoRA path."})
    lora_target_modules: str | None = field(
        default=None,
        metadata={"help": "Comma-separated module names to adapt (default: the attention projections of the family)."},
    )
    merge: bool = field(default=False, metadata={"help": "Also write merged full weights to <output_dir>/merged."})


@dataclass
class RecipeArguments:
    paper_hparams: str | None = field(
        default=None,
        metadata={
            "help": "Use the paper's best configuration for this task and the named paper model (e.g. 'XLM-R "
            "Base'), or 'auto' to match the model id against the registry: learning rate, epochs and batch size "
            "are the paper's (appendix E); the preset is the paper's configuration numeral, but the parameter "
            "subset that numeral names is our reading (trainers/README.md). With `nlue search` it only names the "
            "paper model whose best configuration --presets auto starts from."
        },
    )
    early_stopping_patience: int = field(
        default=3, metadata={"help": "Stop after this many evaluations without a lower validation loss (0: never)."}
    )
    precision: str = field(
        default="auto",
        metadata={"help": "auto (bf16 on CUDA that supports it, else fp16 on CUDA, else fp32), fp32, bf16, fp16."},
    )
    results_dir: str | None = field(
        default=None,
        metadata={
            "help": "Folder that receives the results JSON for the leaderboard (default: $NLUE_RESULTS_DIR, "
            "else build/results, the folder `nlue space` reads)."
        },
    )
    results_name: str | None = field(
        default=None,
        metadata={"help": "Model name in the results folder and leaderboard (default: the Hub id or output folder)."},
    )
    results_kind: str = field(
        default="fine-tune", metadata={"help": "Kind of run shown on the leaderboard: fine-tune or baseline."}
    )
    bootstrap_resamples: int = field(
        default=1000,
        metadata={
            "help": "Bootstrap resamples for the test metrics' 95%% intervals (0: none).",
            "aliases": ["--bootstrap"],  # the short name nlue gmet and nlue evaluate take too
        },
    )
    seeds: int = field(
        default=1,
        metadata={
            "help": "Train and test this many times, with seeds --seed, --seed+1, ...: the results give the mean, the "
            "standard deviation and each seed's scores (each seed's checkpoint in <output_dir>/seed-<n>)."
        },
    )
    resume: bool = field(
        default=True, metadata={"help": "Resume from the newest checkpoint in output_dir when one is there."}
    )
    dry_run: bool = field(
        default=False, metadata={"help": "With --push_to_hub: list what would be uploaded; upload nothing."}
    )
    overwrite: bool = field(
        default=False,
        metadata={
            "help": "Replace a results file in --results_dir that holds a complete run with a partial one "
            "(--max_eval_samples), or a run of another identity (another base model, data, hyperparameters, seed); "
            "without it such a run is refused before it trains."
        },
    )
    eval_results_dataset: str | None = field(
        default=None,
        metadata={
            "help": "The benchmark's Hub dataset id that the checkpoint's .eval_results/ entry names (default: "
            "--dataset when it is a Hub id). Give it when --dataset is a local build of a benchmark on the Hub."
        },
    )


@dataclass
class NlueTrainingArguments(TrainingArguments):
    """TrainingArguments with the paper's protocol as defaults."""

    output_dir: str | None = field(
        default=None, metadata={"help": "Where the checkpoint, card and metrics go (default: runs/<model>-<task>)."}
    )
    num_train_epochs: float = field(
        default=15.0, metadata={"help": "Upper bound on epochs (early stopping ends sooner)."}
    )
    learning_rate: float = field(default=2e-5, metadata={"help": "Peak learning rate (AdamW)."})
    per_device_train_batch_size: int = field(default=16, metadata={"help": "Training batch size per device."})
    per_device_eval_batch_size: int = field(default=64, metadata={"help": "Evaluation batch size per device."})
    eval_strategy: str = field(default="epoch", metadata={"help": "When to evaluate: epoch (paper), steps or no."})
    save_strategy: str = field(default="epoch", metadata={"help": "When to save: must match eval_strategy."})
    logging_strategy: str = field(default="epoch", metadata={"help": "When to log training loss."})
    load_best_model_at_end: bool = field(default=True, metadata={"help": "Restore the best checkpoint at the end."})
    metric_for_best_model: str = field(default="eval_loss", metadata={"help": "Checkpoint selection metric."})
    greater_is_better: bool = field(default=False, metadata={"help": "Whether a larger selection metric is better."})
    save_total_limit: int = field(default=2, metadata={"help": "Keep at most this many checkpoints (best kept)."})

    def __post_init__(self) -> None:
        from nlue.training.processes import settle_cpu_processes

        settle_cpu_processes(self)  # before transformers sets up the devices (torchrun on a machine without a GPU)
        super().__post_init__()


EPILOG = (
    "Every option takes both spellings (--output_dir or --output-dir). -v/--verbose and -q/--quiet set the "
    "logging. Test metrics go to <output_dir>/nlue_results.json, and a copy to --results_dir (default: a "
    "$NLUE_RESULTS_DIR, else build/results). Exit codes: 0 done, 2 bad input, 1 a system failure, 130 interrupted."
)


def parse(dataclass_types: tuple[type, ...], argv: Sequence[str], prog: str) -> tuple[Any, ...]:
    """Parse recipe dataclasses from the command line, or from one JSON/YAML file given alone.

    ``argv`` comes without the logging flags (:func:`nlue.cli_support.split_logging_flags`
    takes them out); they are declared here for ``--help`` only.
    """
    import argparse

    from transformers import HfArgumentParser

    parser = HfArgumentParser(dataclass_types, prog=prog, epilog=EPILOG)
    logging_group = parser.add_argument_group("logging (every nlue command)")
    logging_group.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="debug logging")
    logging_group.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="warnings and errors only"
    )
    from_file = len(argv) == 1 and argv[0].endswith((".json", ".yaml", ".yml"))
    # The dataclasses' own checks (TrainingArguments.__post_init__) raise ValueError; a file may also miss
    # a required option or have a wrong key (TypeError from the dataclass) or be no YAML at all.
    refused: tuple[type[BaseException], ...] = (ValueError,)
    if from_file:
        import yaml

        refused = (ValueError, TypeError, yaml.YAMLError)
    try:
        if from_file:
            if argv[0].endswith(".json"):
                return parser.parse_json_file(argv[0])
            return parser.parse_yaml_file(argv[0])
        return parser.parse_args_into_dataclasses(args=list(argv))
    except refused as exc:
        where = f" in {argv[0]}" if from_file else ""
        raise NlueError(f"{_options_problem(exc, where)}{_hint(str(exc))}") from exc


# Our defaults keep the best checkpoint at the end (the paper's early stopping), so transformers asks
# every save to fall on an evaluation: a user who changes one strategy meets this first.
_STRATEGY_HINT = (
    " (nlue trains with --load_best_model_at_end true by default: give --eval_strategy and --save_strategy "
    "the same value, with --save_steps a multiple of --eval_steps for steps, or --load_best_model_at_end false)"
)


def _options_problem(exc: BaseException, where: str) -> str:
    """transformers' reason for refusing the options, on one line, as its message gives it."""
    from nlue.text.safe import terminal_safe

    return f"the training options{where} are refused by transformers: {terminal_safe(' '.join(str(exc).split()))}"


def _hint(message: str) -> str:
    return _STRATEGY_HINT if "load_best_model_at_end" in message else ""


@contextlib.contextmanager
def data_task_files(data: DataArguments) -> Iterator[None]:
    """The task files the recipe's data arguments name (``task_file``, those ``dataset`` carries), registered
    while the block runs: what a YAML or JSON file of arguments gives, which no scan of the command line sees."""
    from nlue.registry.task_file.activate import activated_task_files

    with activated_task_files(data.task_file, [data.dataset], [data.task], environ={}):
        yield
