"""Sections of a config on the dataset card that come from the build's counts: overlap between splits,
splits left out, which GMET fields are the paper's, and what the rule for inputs given several labels
did (:mod:`nlue.data.card` assembles the card)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nlue.data.report import BuildOptions, ConfigReport, SplitReport


def overlap_section(cfg: ConfigReport, options: BuildOptions) -> list[str]:
    """Per config: what validation and test share with train (and test with validation).

    Empty for a config with no train split, unless its test items repeat one another.
    """
    splits = cfg.splits
    test = splits.get("test")
    compared = [
        (name, r, r.overlap)
        for name, r in splits.items()
        if name != "train" and r.overlap is not None and not r.left_out
    ]
    if not compared:
        repeats = _kept_repeats(test) if test else 0
        lines = _apart_from_test_lines(cfg)
        if repeats:
            lines += ["", f"Test items that repeat an earlier test item are kept as released: {repeats}."]
        return lines
    lines = ["", "#### Overlap between splits", ""]
    if test is not None and test.overlap is not None:
        if options.drop_leaked_test:
            removed = test.leaked_from_train + test.leaked_from_validation
            lines.append(
                f"`--drop-leaked-test` removed {removed} test items whose inputs also occur in train "
                f"({test.leaked_from_train}) or validation ({test.leaked_from_validation}); the other test "
                "items are kept as released."
            )
        else:
            found = test.overlap.with_train + test.overlap.with_validation
            lines.append(
                f"The test set is kept as released: {found} of its {test.kept} items have the same inputs as a "
                f"train ({test.overlap.with_train}) or validation ({test.overlap.with_validation}) item and are "
                "counted here, not removed (`nlue build --drop-leaked-test` removes them)."
                if found
                else f"The test set is kept as released; none of its {test.kept} items has the same inputs as a "
                "train or validation item."
            )
    if "validation" in splits and splits["validation"].carved_from_train:
        lines.append(
            "Validation was carved from the released train split, so counts refer to the splits as built: "
            "a test item equal to a carved validation item counts under validation, and which items those are "
            "depends on the seed."
        )
    fields = list(compared[0][2].fields_shared_with_train)
    lines += [
        "",
        "| split | same inputs as train | same inputs as validation | near-duplicates of train | "
        + "".join(f"shared `{name}` | " for name in fields)
        + "repeats within split (kept) |",
        "|---|---|---|---|" + "---|" * len(fields) + "---|",
    ]
    for name, report, counts in compared:
        is_test = name == "test"
        cells = [
            name,
            str(counts.with_train),
            str(counts.with_validation) if is_test else "-",
            str(counts.near_duplicates_of_train),
            *(str(counts.fields_shared_with_train[field]) for field in fields),
            str(_kept_repeats(report)) if is_test else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    if fields:
        lines += [
            "",
            "A `shared` column counts the items whose text in that field is also the text of that field in "
            "some train item (after normalisation), e.g. a premise that train pairs with another hypothesis.",
        ]
    return lines


def _apart_from_test_lines(cfg: ConfigReport) -> list[str]:
    """What the builder checked for a split that must share no item with test (an exam's demo), and found."""
    if "test" not in cfg.splits:
        return []
    fields = ", ".join(cfg.task.kind.identity_fields(cfg.task))
    lines = []
    for name in cfg.task.kind.apart_from_test:
        if name not in cfg.splits:
            continue
        found = cfg.splits[name].found_in_test
        lines += [
            "",
            f"The `{name}` split shares no item with `test`: the builder compares their normalised {fields}"
            + (
                f"; {found} `{name}` rows that were test items were rejected (listed in the build's rejects file)."
                if found
                else f", and no `{name}` row was a test item."
            ),
        ]
    return lines


def left_out_lines(cfg: ConfigReport) -> list[str]:
    """A sentence per split that ended with no rows and is not in the repo (no Parquet split can be empty)."""
    return [
        line
        for name, report in cfg.splits.items()
        if report.left_out
        for line in ("", f"**`{name}` is left out of this config:** {report.left_out}. `load_dataset` gives the "
                     f"config without a `{name}` split.")
    ]  # fmt: skip


def _kept_repeats(report: SplitReport) -> int:
    return report.kept_duplicates + report.kept_conflicting_duplicates


def gmet_fields_section(cfg: ConfigReport, options: BuildOptions) -> list[str]:
    """Which GMET fields come from the paper and which nlue adds (the paper's items have a sentence only)."""
    test = cfg.splits.get("test")
    without = test.stats.without_answers if test is not None and test.stats is not None else None
    lines = [
        "",
        "#### Which fields are the paper's",
        "",
        "| field | from the paper | added by nlue |",
        "|---|---|---|",
        "| `sentence` | the sentence, its missing word marked `[MASK]` | - |",
        "| `category` | the list of 75 categories (appendix F.1) | the category of each item, when a release "
        "does not give it |",
        "| `theme` | the 7 thematic areas that group the categories | derived from the category |",
        "| `answers` | - (the paper had native speakers judge the predictions) | the acceptable words, where listed |",
        "| `idx` | - | the row number |",
    ]
    if test is not None and without:
        lines += [
            "",
            f"{without} of the {test.kept} items have no listed answers: they can be scored only by human "
            "judging (`nlue gmet --judgments`).",
        ]
    elif test is not None and without == 0:
        lines += ["", f"Each of the {test.kept} items lists at least one acceptable answer."]
    if options.is_sample:
        lines += ["", "In this sample every field of every item was written by the nlue developers."]
    return lines


def conflict_rule_sentence(options: BuildOptions) -> str:
    """How the build chose among the labels of an input given several in train or validation (``--conflicts``)."""
    if options.conflicts == "keep-first":
        return (
            "An input that train or validation gives two or more labels keeps its first row's label, and the "
            "later rows with another label are rejected (`--conflicts keep-first`)."
        )
    return (
        "An input that train or validation gives two or more labels keeps the label most of its rows give (the "
        "first row with that label), and the rows with another label are rejected; when two labels tie, no "
        "label can be told right, and every row of the input is rejected (`--conflicts majority`, the default; "
        "`--conflicts keep-first` keeps the first row's label instead)."
    )


def conflict_lines(configs: Mapping[str, ConfigReport], options: BuildOptions) -> list[str]:
    """Per split, what the rule changed: the inputs given several labels and what became of them."""
    rows = [
        (name, split, report.label_conflicts)
        for name, cfg in configs.items()
        for split, report in cfg.splits.items()
        if report.label_conflicts
    ]
    if not rows:
        return ["", "No input of train or validation was given two different labels."]
    if options.conflicts == "keep-first":
        lines = ["", "| config | split | inputs given several labels | rows rejected (not their first label) |"]
        lines.append("|---|---|---|---|")
        lines += [f"| {n} | {s} | {c['inputs']} | {c['rows_rejected']} |" for n, s, c in rows]
        return lines
    lines = [
        "",
        "What the majority rule changed, against keeping each input's first label: an input whose majority is "
        "another label than its first row's is stored with the majority label, and a tied input is left out.",
        "",
        "| config | split | inputs given several labels | majority = first label | majority = another label "
        "| tied, left out | rows rejected |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {n} | {s} | {c['inputs']} | {c['majority_is_first_label']} | {c['majority_is_another_label']} | "
        f"{c['tied_inputs']} | {c['rows_rejected_outvoted'] + c['rows_rejected_tied']} |"
        for n, s, c in rows
    ]
    return lines
