"""Human-readable summary of a build, printed by `nlue build` and `nlue quickstart`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nlue.text_table import text_table

if TYPE_CHECKING:
    from nlue.data.report import BuildResult, SplitReport


def _test_overlap(test: SplitReport | None) -> str:
    if test is None or test.overlap is None:
        return "-"
    return str(test.overlap.with_train + test.overlap.with_validation)


def _conflicts(counts: dict) -> str:
    """What the --conflicts rule did to a split's inputs given several labels, in a line."""
    if counts["rule"] == "keep-first":
        return f"{counts['inputs']} inputs kept their first label, {counts['rows_rejected']} rows rejected (keep-first)"
    return (
        f"{counts['inputs']} inputs; the majority label was the first row's for {counts['majority_is_first_label']}, "
        f"another for {counts['majority_is_another_label']}, a tie for {counts['tied_inputs']} (left out); "
        f"{counts['rows_rejected_outvoted'] + counts['rows_rejected_tied']} rows rejected (majority)"
    )


def build_summary(result: BuildResult) -> str:
    # The columns are the splits the built tasks have (train/validation/test; demo/test for an exam).
    split_names = list(dict.fromkeys(split for cfg in result.configs.values() for split in cfg.task.splits))
    header = (
        "config", *split_names, "rejected", "duplicates", "leaked", "label-map drops", "test overlap (kept)",
    )  # fmt: skip
    rows = [header]
    for name, cfg in result.configs.items():
        splits = cfg.splits

        def count(split: str, splits: dict = splits) -> str:
            carved = split == "validation" and splits.get(split) and splits[split].carved_from_train
            if split in splits and splits[split].left_out:
                return "left out"
            return (str(splits[split].kept) if split in splits else "-") + (" (carved)" if carved else "")

        rows.append(
            (
                name,
                *(count(split) for split in split_names),
                str(sum(r.rejected for r in splits.values())),
                str(sum(r.duplicates for r in splits.values())),
                str(sum(r.leaked_from_train + r.leaked_from_validation for r in splits.values())),
                str(sum(sum(r.dropped_by_label_map.values()) for r in splits.values())),
                _test_overlap(splits.get("test")),
            )
        )
    lines = text_table(rows, numbers_right=True).splitlines()
    lines += [
        "",
        "test overlap (kept): test items also in train or validation, kept as released "
        "(--drop-leaked-test removes them)",
    ]
    lines += [
        f"left out: {name}/{split}: {report.left_out}"
        for name, cfg in result.configs.items()
        for split, report in cfg.splits.items()
        if report.left_out
    ]
    lines += [
        f"several labels: {name}/{split}: {_conflicts(report.label_conflicts)}"
        for name, cfg in result.configs.items()
        for split, report in cfg.splits.items()
        if report.label_conflicts
    ]
    lines += [
        "",
        f"dataset repo : {result.repo_dir}",
        f"card         : {result.repo_dir / 'README.md'}",
        f"build report : {result.report_path}",
        f"rejected rows: {result.rejects} (listed in {result.rejects_path})",
    ]
    return "\n".join(lines)
