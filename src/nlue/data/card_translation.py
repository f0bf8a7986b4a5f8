"""The card's section on splits that ``nlue translate`` made: what model, which checks, what they found.

The facts come from :func:`nlue.data.translation_provenance.translation_provenance`, one
dict per translated source file, kept on each config's report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nlue.data.report import ConfigReport

MACHINE_TRANSLATED_TAG = "machine-translated"

_HOW = (
    "The splits below are machine translations of English sources, made with `nlue translate`, not text "
    "written in Nepali. The English rows went to the model in batches that each hold one class, without their "
    "labels (a label is attached to its translation afterwards, so the model never sees it). Each answer had "
    "to be a numbered JSON list with one translation per row; a batch whose count did not match was asked "
    "again, then split in halves, and finally given up row by row, each with a reason. Every translated row "
    "then passed the row rules any source passes, and a script filter rejected rows whose letters were not "
    "mostly Devanagari (left untranslated, code-switched, or in another script). The translation output keeps "
    "each row's provenance (source file, row and id, batch, model, prompt version, review round); this dataset "
    "keeps only the task's fields."
)


def _rows_cell(rows: Mapping[str, Any] | None) -> tuple[str, str]:
    if not rows:
        return "-", "-"
    kept = f"{rows.get('sent', '?')} → {rows.get('written', '?')}"
    rejected = " / ".join(
        str(rows.get(key, 0)) for key in ("rejected_in_translation", "rejected_in_check", "rejected_by_script_filter")
    )
    return kept, rejected


def _review_cell(review: Mapping[str, Any] | None) -> str:
    if not review:
        return "**none imported**"
    sent_back, waiting = review.get("sent_back") or [], review.get("not_translated_again") or []
    return (
        f"{review.get('rows_reviewed')} rows, {review.get('rows_unacceptable')} unacceptable; "
        f"{len(sent_back)} batch{'es' if len(sent_back) != 1 else ''} sent back"
        + (f" (**{len(waiting)} not yet translated again**: {', '.join(waiting)})" if waiting else "")
    )


def _backtranslation_cell(back: Mapping[str, Any] | None) -> str:
    if not back:
        return "not run"
    scores = back.get("scores") or {}
    return (
        f"BLEU {scores.get('bleu')}, chrF {scores.get('chrf')} "
        f"({back.get('rows')} of {back.get('of_rows')} rows, by `{back.get('system')}`)"
    )


def _balance_line(config: str, made: Mapping[str, Any]) -> str | None:
    balance = made.get("class_balance") or {}
    before, after = balance.get("before") or {}, balance.get("after") or {}
    if not before:
        return None
    classes = ", ".join(f"{name} {before.get(name, 0)} → {after.get(name, 0)}" for name in sorted({*before, *after}))
    return f"- `{config}` {made['split']}: {classes}"


def translation_section(configs: Mapping[str, ConfigReport]) -> list[str]:
    """The card's lines about machine-translated splits; none when no source was translated."""
    made = [(name, m) for name, cfg in configs.items() for m in cfg.translations]
    if not made:
        return []
    lines = [
        "## How the machine-translated splits were made",
        "",
        _HOW,
        "",
        "| config | split | English source | translated by | prompt version | rows sent → kept "
        "| rejected: translation / row rules / script | native-speaker review | back-translation |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for config, m in made:
        sent_kept, rejected = _rows_cell(m.get("rows"))
        source = f"`{m['source_file']}` ({m.get('source_format')})" if m.get("source_file") else "-"
        by = f"`{m.get('model')}`" + (f" ({m['backend']})" if m.get("backend") else "")
        lines.append(
            f"| {config} | {m['split']} | {source} | {by} | `{m.get('prompt_version')}` | {sent_kept} | {rejected} "
            f"| {_review_cell(m.get('review'))} | {_backtranslation_cell(m.get('backtranslation'))} |"
        )
    balances = [line for config, m in made if (line := _balance_line(config, m))]
    if balances:
        lines += ["", "Rows per class before and after translation (before → after):", "", *balances]
    unreviewed = [f"`{config}` {m['split']}" for config, m in made if not m.get("review")]
    if unreviewed:
        lines += ["", f"No native-speaker review was imported for {', '.join(unreviewed)}: read these splits as "
                      "unreviewed machine translation."]  # fmt: skip
    without_report = [f"`{config}/{m['file']}`" for config, m in made if not m.get("run_report")]
    if without_report:
        lines += ["", f"The translation run's report was not beside {', '.join(without_report)}; only the model "
                      "and prompt version written in its rows are known."]  # fmt: skip
    return [*lines, ""]
