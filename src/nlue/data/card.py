"""The dataset card (README.md) of a built NLUE repo, from the registry and the build report.

The YAML header is produced by huggingface_hub's DatasetCardData together with
`datasets`' own MetadataConfigs / DatasetInfosDict, so it round-trips through both
libraries; the body is generated from the task registry plus measured statistics.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import datasets
import numpy as np
from datasets.info import DatasetInfosDict
from datasets.splits import SplitDict, SplitInfo
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData

from nlue.data.card_declared import citation_text, declared_task_lines, is_user_task, task_files_section
from nlue.data.card_sections import (
    conflict_lines,
    conflict_rule_sentence,
    gmet_fields_section,
    left_out_lines,
    overlap_section,
)
from nlue.data.card_text import (
    NLUE_CARD_TEXT,
    kind_texts,
    normalisation_lines,
    overview_lines,
    profile_line,
    sample_banner,
)
from nlue.data.card_translation import MACHINE_TRANSLATED_TAG, translation_section
from nlue.data.hub_benchmark import BENCHMARK_FILE, EVAL_SPLIT, benchmark_file, write_benchmark_file
from nlue.data.sample import SAMPLE_TAG
from nlue.registry.features import task_features
from nlue.registry.task_file.carry import CARRIED_FOLDER
from nlue.registry.tasks import TaskSpec, benchmark_of
from nlue.text.normalize import NEAR_DUPLICATE_RULES
from nlue.version import __version__

if TYPE_CHECKING:
    from nlue.data.report import BuildOptions, ConfigReport

logger = logging.getLogger(__name__)

SAMPLE_BANNER = (
    "> **This is the nlue SAMPLE data, not the NLUE benchmark.** Every item was written by "
    "the nlue developers to try the tools end to end (a few dozen items per task). Scores on "
    "it say nothing about a model's Nepali; build the real benchmark from the released NLUE "
    "files with `nlue build --source <folder>`."
)


def size_category(rows: int) -> str:
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
    for bound, label in bounds:
        if rows < bound:
            return label
    return "1M<n<10M" if rows < 10_000_000 else "n>10M"


def pretty_name(configs: Mapping[str, ConfigReport], options: BuildOptions) -> str:
    """The repo's display name: its benchmarks' titles, and "(sample data)" for the sample."""
    titles = dict.fromkeys(benchmark_of(cfg.task).title for cfg in configs.values())
    return " + ".join(titles) + (" (sample data)" if options.is_sample else "")


def _card_data(configs: Mapping[str, ConfigReport], options: BuildOptions) -> DatasetCardData:
    tasks = [cfg.task for cfg in configs.values()]
    total = sum(s.kept for cfg in configs.values() for s in cfg.splits.values())
    pretty = pretty_name(configs, options)
    languages = kind_texts(configs)[1]
    data = DatasetCardData(
        language=languages,
        license=options.license,
        multilinguality="monolingual" if len(languages) == 1 else "multilingual",
        size_categories=[size_category(total)],
        task_categories=sorted({t.hub_task_category for t in tasks}),
        task_ids=sorted({t.hub_task_id for t in tasks}),
        pretty_name=pretty,
        tags=[{"ne": "nepali", "ur": "urdu"}.get(code, code) for code in languages]
        + ["nlue", "benchmark"]
        + ([SAMPLE_TAG] if options.is_sample else [])
        + ([MACHINE_TRANSLATED_TAG] if any(cfg.translations for cfg in configs.values()) else []),
    )
    default = next(iter(configs))  # the builder writes configs in registry order
    metadata_configs = MetadataConfigs(
        {
            name: {
                "data_files": [
                    {"split": split, "path": f"{name}/{split}-*.parquet"}
                    for split, report in cfg.splits.items()
                    if not report.left_out  # no file: a split without rows cannot be loaded
                ],
                **({"default": True} if name == default else {}),
            }
            for name, cfg in configs.items()
        }
    )
    metadata_configs.to_dataset_card_data(data)
    infos = DatasetInfosDict()
    for name, cfg in configs.items():
        splits = SplitDict(dataset_name=options.name)
        for split, report in cfg.splits.items():
            if not report.left_out:
                splits.add(SplitInfo(name=split, num_bytes=report.num_bytes, num_examples=report.kept))
        infos[name] = datasets.DatasetInfo(
            features=task_features(cfg.task),
            splits=splits,
            config_name=name,
            dataset_name=options.name,
            dataset_size=sum(r.num_bytes for r in cfg.splits.values()),
            download_size=cfg.download_size,
        )
    infos.to_dataset_card_data(data)
    return data


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _score_summary(counts: Counter[float]) -> str:
    """Min / median / max from the score counts, without expanding them into one entry per row."""
    if not counts:
        return "-"
    values = sorted(counts)
    total = sum(counts.values())
    cumulative = np.cumsum([counts[v] for v in values])

    def nth(k: int) -> float:  # the k-th smallest score (0-based)
        return values[int(np.searchsorted(cumulative, k + 1))]

    median = nth(total // 2) if total % 2 else (nth(total // 2 - 1) + nth(total // 2)) / 2
    return f"{values[0]:.1f} / {median:.2f} / {values[-1]:.1f}"


def _paper_results_lines(task: TaskSpec) -> list[str]:
    """The paper's reported test scores for this task, as printed (percent), in its model order, with flags."""
    if not task.paper_results:
        return []
    metrics = list(next(iter(task.paper_results.values())))
    lines = [
        "",
        "Reported by the paper (test set, %, as printed; models in the paper's order, not ranked"
        + (
            "; native speakers judged each predicted word, so automatic scores are not comparable"
            if task.primary_is_paper_defined
            else ""
        )
        + "):",
        "",
        "| model | " + " | ".join(metrics) + " | flag |",
        "|---|" + "---|" * len(metrics) + "---|",
    ]
    notes = []
    for model, scores in task.paper_results.items():
        flags = task.paper_flags.get(model, ())
        cells = " | ".join(f"{100 * scores[m]:.2f}" for m in metrics)
        lines.append(f"| {model} | {cells} | {'; '.join(f.summary for f in flags)} |")
        notes += [f"- **{model}**: {flag.explanation}" for flag in flags]
    if notes:
        lines += ["", "Flagged cells (kept as printed; checks in `nlue.registry.paper_checks`):", "", *notes]
    return lines


def _paper_task_lines(cfg: ConfigReport) -> list[str]:
    """A config's bullets for one of the papers' tasks: its facts as the paper gives them."""
    task = cfg.task
    lines = [
        f"- **Category:** {task.category}",
        f"- **Inputs:** {', '.join(f'`{f}`' for f in task.input_fields)}",
        f"- **Label:** `{task.label_field}` - {task.label_notes}" if task.label_field else f"- {task.label_notes}",
        f"- **Metrics (the paper's):** {', '.join(task.metrics)}; **primary:** `{task.primary_metric}`, "
        f"{task.primary_note}",
        f"- **Domains (paper):** {', '.join(task.domains)}",
        f"- **Sources (paper):** {'; '.join(task.sources)}",
        profile_line(cfg),
    ]
    train = f"{task.paper_train_size:,}" if task.paper_train_size else "none (zero-shot)"
    if task.paper_total_size:  # an exam of our own (the Nepali one) has no published size
        lines.append(
            f"- **Paper sizes:** train {train}, test {task.paper_test_size:,}, total {task.paper_total_size:,}"
        )
    return lines


def _config_section(cfg: ConfigReport, options: BuildOptions, carried: Sequence[str] = ()) -> str:
    task = cfg.task
    lines = [f"### `{task.name}`: {task.title}", "", task.description, ""]
    if is_user_task(task):
        own = f"{CARRIED_FOLDER}/{task.name}.yaml"
        lines += [*declared_task_lines(task, own if own in carried else None), profile_line(cfg)]
    else:
        lines += _paper_task_lines(cfg)
    lines += _paper_results_lines(task)
    extra = (
        "label distribution | " if task.label_names else ("score min / median / max | " if task.num_labels == 1 else "")
    )
    lines += ["", "| split | rows | " + extra + "chars p50 / p95 |"]
    lines.append("|---|---|" + ("---|" if extra else "") + "---|")
    for split, report in cfg.splits.items():
        stats = report.stats
        lengths = stats.length_percentiles() if stats else {}
        first = task.text_fields[0]
        length = f"{lengths[first]['p50']} / {lengths[first]['p95']} (`{first}`)" if first in lengths else "-"
        cells = [split, "left out (0)" if report.left_out else str(report.kept)]
        if task.label_names and stats:
            cells.append(
                ", ".join(
                    f"{name} {stats.label_counts.get(i, 0)} ({_pct(stats.label_counts.get(i, 0), report.kept)})"
                    for i, name in enumerate(task.label_names)
                )
            )
        if task.score_range is not None and stats:
            cells.append(_score_summary(stats.label_counts))
        cells.append(length)
        lines.append("| " + " | ".join(cells) + " |")
    if task.class_balance:
        balance = ", ".join(f"{name} {100 * share:.0f}%" for name, share in task.class_balance.items())
        who = "declared in the task file" if is_user_task(task) else "reported by the paper"
        lines += ["", f"Class balance {who}: {balance}."]
    if task.categories:
        themes = cfg.splits["test"].stats.group_counts if "test" in cfg.splits and cfg.splits["test"].stats else {}
        if themes:
            lines += ["", "Items per thematic area: " + ", ".join(f"{k} {v}" for k, v in sorted(themes.items())) + "."]
        lines += gmet_fields_section(cfg, options)
    lines += left_out_lines(cfg)
    built = {split: report for split, report in cfg.splits.items() if not report.left_out}
    lines += task.kind.card_lines(task, built, options.is_sample)
    lines += overlap_section(cfg, options)
    return "\n".join(lines)


def _carving_sentence(configs: Mapping[str, ConfigReport], options: BuildOptions) -> str:
    """What happens to a config without a validation split: only kinds that train carve one from train."""
    carving = [name for name, cfg in configs.items() if cfg.task.kind.carves_validation]
    if not carving:
        return ""
    which = "" if len(carving) == len(configs) else f" (configs {', '.join(f'`{c}`' for c in carving)})"
    return (
        f" When a source has no validation split{which}, a stratified {100 * options.validation_fraction:.0f}% "
        "of train is held out with the seed above."
    )


def _processing_section(configs: Mapping[str, ConfigReport], options: BuildOptions) -> str:
    lines = [
        "## How it was built",
        "",
        f"Built by `nlue build` (nlue {__version__}) with seed {options.seed}.",
        "",
        *normalisation_lines(configs),
        "Rows that fail validation are left out and listed, with file, row, field and reason, in the "
        "build's rejects file. In train and validation, exact duplicates (same normalised inputs) are kept "
        "once, and a validation item whose inputs also occur in train is removed as leakage. "
        f"{conflict_rule_sentence(options)} "
        + (
            "Test items whose inputs also occur in train or validation were removed (`--drop-leaked-test`); "
            "the test set is otherwise kept as released, repeats included."
            if options.drop_leaked_test
            else "The test set is kept as released: its items that also occur in train or validation, and its "
            'repeats, are counted under each config\'s "Overlap between splits", not removed.'
        )
        + f" {NEAR_DUPLICATE_RULES}"
        + _carving_sentence(configs, options)
        + " A split left with no rows (every row removed or rejected, or none carved) is left out of the repo, "
        "since no one can load a Parquet split without rows; its config's section says why.",
        "",
        "| config | split | read | kept | rejected | duplicates removed | leaked, removed | dropped by label map |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, cfg in configs.items():
        for split, r in cfg.splits.items():
            read = "(carved from train)" if r.carved_from_train else str(r.read)
            dropped = sum(r.dropped_by_label_map.values())
            leaked = r.leaked_from_train + r.leaked_from_validation
            lines.append(
                f"| {name} | {split} | {read} | {r.kept} | {r.rejected} | {r.duplicates} | {leaked} | {dropped} |"
            )
    lines += conflict_lines(configs, options)
    lines += ["", "Source files (SHA-256):", ""]
    for name, cfg in configs.items():
        for source in cfg.source_files:
            lines.append(f"- `{name}/{source['file']}` `{source['sha256'][:16]}…`")
    return "\n".join(lines)


def _leaderboard_lines(configs: Mapping[str, ConfigReport]) -> list[str]:
    """What the repo's eval.yaml makes of it on the Hub, when some config has a test split to rank."""
    if not any(EVAL_SPLIT in cfg.splits and not cfg.splits[EVAL_SPLIT].left_out for cfg in configs.values()):
        return []
    return [
        f"The repo's `{BENCHMARK_FILE}` makes it a benchmark on the Hub, with one leaderboard per config (its "
        f"{EVAL_SPLIT} split, ranked by the task's primary metric). A model repo joins a leaderboard with an "
        "`.eval_results/` entry naming this dataset and the config: `nlue train --push_to_hub` writes one, and "
        "`nlue submit --eval-results-pr` proposes checked scores to a model's repo.",
        "",
    ]


def render_card(configs: Mapping[str, ConfigReport], options: BuildOptions, carried: Sequence[str] = ()) -> DatasetCard:
    """The full dataset card for the built configs; ``carried``: the task files the repo carries (``tasks/...``)."""
    data = _card_data(configs, options)
    first = next(iter(configs))
    repo = options.repo_id or options.name
    own = kind_texts(configs)[0]  # a benchmark whose kinds speak for themselves (the exams), or NLUE's words
    built = [split for split, report in configs[first].splits.items() if not report.left_out]
    first_split = next(s for s in ("train", "test", *built) if s in built)
    body = [
        f"# {data.pretty_name}",
        "",
        *([sample_banner(own, SAMPLE_BANNER), ""] if options.is_sample else []),
        (own or NLUE_CARD_TEXT).intro,
        "",
        "\n".join(overview_lines(configs)),
        "",
        "## Use",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'ds = load_dataset("{repo}", "{first}")  # a Hub id or the local folder',
        f'print(ds["{first_split}"].features)',
        "```",
        "",
        (own or NLUE_CARD_TEXT).scoring,
        "",
        *_leaderboard_lines(configs),
        *task_files_section(carried, repo, first),
        "## Configs",
        "",
        "\n\n".join(_config_section(cfg, options, carried) for cfg in configs.values()),
        "",
        _processing_section(configs, options),
        "",
        *translation_section(configs),
        "## Limitations",
        "",
        (own or NLUE_CARD_TEXT).limitations
        + (" This sample data is far too small for any conclusion about a model." if options.is_sample else ""),
        "",
        "## License",
        "",
        f"`{options.license}`."
        + (
            " The sample items are written by the nlue developers and licensed with the project."
            if options.is_sample
            else " Check the licences of the source datasets listed above before redistribution."
        ),
        "",
        "## Citation",
        "",
        *citation_text([cfg.task for cfg in configs.values()]),
        "",
    ]
    return DatasetCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(body))


def write_dataset_card(
    repo_dir: Path, configs: Mapping[str, ConfigReport], options: BuildOptions, carried: Sequence[str] = ()
) -> Path:
    """README.md (the card, with the YAML configs) and, beside it, the Hub's benchmark file eval.yaml."""
    for cfg in configs.values():
        cfg.download_size = sum((repo_dir / f).stat().st_size for s in cfg.splits.values() for f in s.files)
    card = render_card(configs, options, carried)
    path = repo_dir / "README.md"
    path.write_text(str(card), encoding="utf-8")
    own = kind_texts(configs)[0]
    write_benchmark_file(
        repo_dir, benchmark_file(configs, pretty_name(configs, options), own or NLUE_CARD_TEXT, options.is_sample)
    )
    return path
