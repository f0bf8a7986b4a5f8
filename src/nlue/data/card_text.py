"""The parts of a dataset card that depend on which benchmark is built: opening, scoring, limitations, sizes,
the language profiles text was normalised with.

NLUE's paragraphs are the default; a kind whose configs speak for themselves (the
exams) gives its own through :meth:`nlue.registry.kinds.TaskKind.card_text`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from nlue.data.card_declared import declared_card_text, is_user_task
from nlue.registry.kinds.base import CardText
from nlue.registry.tasks import NLUE_SCORE_NOTE
from nlue.text.profiles import profile_of

if TYPE_CHECKING:
    from nlue.data.report import ConfigReport, SplitReport

NLUE_INTRO = (
    "NLUE gathers twelve Nepali language-understanding tasks - single-sentence classification, "
    "similarity and paraphrase, inference, and a zero-shot masked-word task (GMET) - with "
    "train/validation/test splits, typed features and fixed label orders."
)
NLUE_SCORING = (
    'Score predictions with the `nlue` evaluate modules (`evaluate.load("nlue", config)`), which '
    "compute the paper's metrics. The primary metric of each task (macro-F1 for classification, "
    "the mean of Pearson and Spearman for `stsb`, the GMET combined score for `gmet`) is a ranking "
    "convention of the nlue package except for GMET's combined score, which is the paper's own; "
    f"the paper computes no mean of Pearson and Spearman. {NLUE_SCORE_NOTE}"
)
NLUE_LIMITATIONS = (
    "Most NLUE tasks were machine-translated from English datasets and checked on samples by "
    "native speakers (the paper's appendices B-C): expect translationese, occasional label flips "
    "and named entities spelled inconsistently. GMET answers are judged against listed acceptable "
    "words; a correct synonym that is not listed counts as wrong unless judged by people."
)
NLUE_CARD_TEXT = CardText(NLUE_INTRO, NLUE_SCORING, NLUE_LIMITATIONS, ("ne",))


def kind_texts(configs: Mapping[str, ConfigReport]) -> tuple[CardText | None, list[str]]:
    """The kinds' own card paragraphs when every config's kind has them (else NLUE's are used), and the languages.

    A repo of user-declared tasks (:mod:`nlue.data.card_declared`) has paragraphs of its own, whatever the kinds.
    """
    if configs and all(is_user_task(cfg.task) for cfg in configs.values()):
        text = declared_card_text(configs)
        return text, list(text.languages)
    texts = [cfg.task.kind.card_text(cfg.task) for cfg in configs.values()]
    languages = list(dict.fromkeys(code for text in texts for code in (text.languages if text else ("ne",))))
    return (texts[0] if texts and all(texts) else None), languages


def sample_banner(own: CardText | None, default: str) -> str:
    return own.sample_banner if own is not None and own.sample_banner else default


def overview_lines(configs: Mapping[str, ConfigReport]) -> list[str]:
    """One row per config with its split sizes; the columns are the splits the configs have, in task order."""
    splits = list(dict.fromkeys(split for cfg in configs.values() for split in cfg.task.splits))
    lines = [
        "| config | task | category | primary metric | " + " | ".join(splits) + " |",
        "|---|---|---|---|" + "---|" * len(splits),
    ]
    for name, cfg in configs.items():
        sizes = " | ".join(_size(cfg.splits[s]) if s in cfg.splits else "-" for s in splits)
        lines.append(f"| `{name}` | {cfg.task.title} | {cfg.task.category} | {cfg.task.primary_metric} | {sizes} |")
    return lines


def _size(report: SplitReport) -> str:
    return "left out (0)" if report.left_out else str(report.kept)


def profile_line(cfg: ConfigReport) -> str:
    """The config's bullet naming the language profile its text fields were normalised with."""
    profile = profile_of(cfg.task)
    return f"- **Text normalisation:** the `{profile.name}` language profile: {profile.summary}"


def normalisation_lines(configs: Mapping[str, ConfigReport]) -> list[str]:
    """Each language profile used, the configs it normalised and its rules in full."""
    used: dict[str, list[str]] = {}
    for name, cfg in configs.items():
        used.setdefault(profile_of(cfg.task).name, []).append(name)
    lines: list[str] = []
    for profile_name, names in used.items():
        which = (
            "every config"
            if len(used) == 1
            else ("config " if len(names) == 1 else "configs ") + ", ".join(f"`{n}`" for n in names)
        )
        rules = profile_of(configs[names[0]].task).rules
        lines += [f"Each text field of {which} is normalised by the `{profile_name}` language profile:", "", rules, ""]
    return lines
