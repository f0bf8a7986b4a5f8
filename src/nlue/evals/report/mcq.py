"""The report's exams section (the UrduMMLU protocol): Table 4, few-shot deltas, the STEM - Humanities gap, levels.

* Table 4 is the Space's exam board (:func:`nlue.boards.sections.exam_board_of`): our runs, then
  the paper's rows as printed, with the cell that cannot hold if invalid outputs counted as wrong
  flagged (:func:`nlue.registry.mcq.denominator_flags`);
* few-shot deltas: our k-shot minus zero-shot accuracy per model, exam, mode and prompt language,
  with a mean row; the paper's Table 5 body is missing, so its mean gains are shown as its text
  quotes them (:data:`nlue.registry.mcq.FEWSHOT_MEAN_GAINS`);
* the STEM - Humanities gap: the paper's Table 15 is computed from Table 4, as its caption says;
  ours from the domain tables of each run;
* accuracy by level: ours only (the paper's text gives no per-level numbers);
* option-order robustness, for runs made with ``--option-orders cyclic``: ours only
  (:mod:`nlue.evals.report.mcq_orders`);
* prompt-wording robustness, for runs made with ``--wordings all``: ours only (:mod:`nlue.evals.report.wordings`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from nlue.boards.exams import LEGEND, domain_scores, percent
from nlue.boards.score_checks import UNVERIFIED_CELL
from nlue.boards.sections import exam_board_of
from nlue.evals.report.mcq_figures import MAX_LEVEL_RUNS, gap_figure, level_figure
from nlue.evals.report.mcq_orders import order_table
from nlue.evals.report.runs import Gathered, ResultFile
from nlue.evals.report.types import DERIVED, OURS, PAPER, CellFlag, Chart, Section, Table
from nlue.evals.report.wordings import wording_table
from nlue.registry.mcq import FEWSHOT_MEAN_GAINS, FEWSHOT_MODELS, TABLE4_COLUMNS, URDUMMLU_TABLE4, denominator_flags
from nlue.registry.tasks import TASKS
from nlue.results_folders import ResultsFolder
from nlue.text.safe import markdown_text

SHOTS = (1, 3, 5)  # the paper's few-shot settings
STEM, HUMANITIES, ALL = TABLE4_COLUMNS[0], TABLE4_COLUMNS[1], TABLE4_COLUMNS[-1]
PROMPT_ROLES = {"en": "english", "english": "english", "native": "native"}


@dataclass(frozen=True)
class ExamRun:
    """What the exam tables need from one results file."""

    run: str
    model: str
    exam: str
    mode: str
    prompt: str  # english or native
    shots: int | None  # None: the file does not say
    all_items: float | None  # 0-1
    parseable: float | None
    domains: Mapping[str, Mapping[str, Any]]
    levels: Sequence[Mapping[str, Any]]
    is_sample: bool

    @classmethod
    def of(cls, file: ResultFile) -> ExamRun:
        hyper = file.hyperparameters
        language = str(hyper.get("prompt_language", "?"))
        role = str(hyper.get("prompt_language_role") or PROMPT_ROLES.get(language, "native"))
        shots = hyper.get("shots", 0)
        tables = file.details.get("tables") if isinstance(file.details.get("tables"), Mapping) else {}
        return cls(
            run=file.run,
            model=str(file.data.get("model") or file.run).removeprefix("hf:"),
            exam=file.task,
            mode=str(hyper.get("mode", "?")),
            prompt=role,
            shots=shots if isinstance(shots, int) and not isinstance(shots, bool) else None,
            all_items=_number(file.metrics.get("accuracy_all_items")),
            parseable=_number(file.metrics.get("accuracy_parseable")),
            domains=domain_scores(file.details),
            levels=[r for r in tables.get("level") or [] if isinstance(r, Mapping)],
            is_sample=file.is_sample,
        )

    @property
    def label(self) -> str:
        return Path(self.model.rstrip("/")).name


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


# ------------------------------------------------------------------ Table 4
def _table4(folders: Sequence[ResultsFolder]) -> tuple[Table, list[str]]:
    board = exam_board_of(folders)
    frame = board.frame()
    origins = [PAPER if str(kind).startswith("paper") else OURS for kind in frame["kind"]]
    # The Space's check cells go under the origin column's legend instead of a column of their own: the
    # table must fit a 1280-pixel window. Our unverified runs say so in their model cell.
    unverified = frame["check"] == UNVERIFIED_CELL
    frame.loc[unverified, "model"] = frame.loc[unverified, "model"].astype(str) + f" ({UNVERIFIED_CELL})"
    frame = frame.drop(columns=["check"])
    flags = []
    for flag in denominator_flags():
        prompt = "en" if flag["prompt"] == "en" else "native"
        for position, row in frame.iterrows():
            if origins[position] == PAPER and row["model"] == flag["model"] and row["prompt"] == prompt:
                explanation = (
                    f"**{flag['model']}, {'English' if prompt == 'en' else 'Urdu'} prompt**: "
                    f"{flag['explanation']}; so the paper's accuracy cannot count invalid outputs as "
                    "wrong: it is read as accuracy over parseable outputs."
                )
                for column in ("All (parseable)", "Inv%"):
                    flags.append(CellFlag(int(position), column, "above what its Inv% allows", explanation))
    table = Table(
        "mcq_table4",
        "UrduMMLU Table 4 · zero-shot accuracy (%) by domain, and Inv%",
        frame,
        origins,
        flags,
        [LEGEND],
        formats={"shots": "{:.0f}"},
    )
    return table, board.skipped


# ------------------------------------------------------------------ few-shot deltas
def _fewshot(runs: Sequence[ExamRun]) -> Table:
    groups: dict[tuple[str, str, str, str], dict[int, ExamRun]] = {}
    for run in (r for r in runs if r.shots is not None):  # oldest first: the newest run of a shot count wins
        groups.setdefault((run.label, run.exam, run.mode, run.prompt), {})[run.shots] = run
    records, origins, unmatched = [], [], []
    deltas: dict[str, dict[int, list[float]]] = {}
    for (label, exam, mode, prompt), by_shots in sorted(groups.items()):
        zero = by_shots.get(0)
        if zero is None or zero.all_items is None:
            unmatched.extend(r.run for k, r in by_shots.items() if k)
            continue
        record: dict[str, Any] = {
            "model": label,
            "exam": exam,
            "mode": mode,
            "prompt": prompt,
            "0-shot (%)": percent(zero.all_items),
        }
        for k in SHOTS:
            other = by_shots.get(k)
            value = None if other is None or other.all_items is None else 100.0 * (other.all_items - zero.all_items)
            record[f"Δ {k}-shot"] = None if value is None else round(value, 2)
            if value is not None:
                deltas.setdefault(prompt, {}).setdefault(k, []).append(value)
        if any(record[f"Δ {k}-shot"] is not None for k in SHOTS):
            records.append(record)
            origins.append(OURS)
    for prompt, by_k in sorted(deltas.items()):
        mean = {f"Δ {k}-shot": round(sum(v) / len(v), 2) for k, v in by_k.items()}
        count = max(len(v) for v in by_k.values())
        records.append({"model": f"mean over {count} model{'s' if count > 1 else ''} (ours)", "prompt": prompt, **mean})
        origins.append(OURS)
    for prompt, gains in FEWSHOT_MEAN_GAINS.items():
        records.append(
            {
                "model": f"paper: mean of its {len(FEWSHOT_MODELS)} models (quoted)",
                "exam": "mcq_ur",
                "prompt": PROMPT_ROLES[prompt],
                **{f"Δ {k}-shot": gain for k, gain in gains.items()},
            }
        )
        origins.append(PAPER)
    zero_means = {p: sum(_paper_all(m, p) for m in FEWSHOT_MODELS) / len(FEWSHOT_MODELS) for p in ("en", "ur")}
    notes = [
        "Δ k-shot: accuracy over all items (invalid outputs wrong; our primary) with k demonstrations minus the same "
        "model's zero-shot accuracy on the same exam, mode and prompt language, in points. Mean rows are ours.",
        f"The paper's Table 5 body is missing from its text, which quotes only these mean gains of its four models "
        f"({', '.join(FEWSHOT_MODELS)}), drawn from lm-evaluation-harness (the paper leaves its scoring mode "
        f"unclear): shown as quoted. Their Table 4 zero-shot mean is {zero_means['en']:.2f} "
        f"(English prompt) and {zero_means['ur']:.2f} (Urdu prompt), our arithmetic.",
    ]
    if unmatched:
        notes.append(
            f"Few-shot runs without a zero-shot run to subtract: {markdown_text(', '.join(sorted(set(unmatched))))}."
        )
    columns = ["model", "exam", "mode", "prompt", "0-shot (%)", *(f"Δ {k}-shot" for k in SHOTS)]
    table = Table(
        "mcq_fewshot_deltas",
        "Few-shot: k-shot minus zero-shot accuracy (points)",
        pd.DataFrame(records, columns=columns),
        origins,
        notes=notes,
    )
    return table


def _paper_all(model: str, prompt: str) -> float:
    row = next(r for r in URDUMMLU_TABLE4 if r.model == model)
    return (row.en if prompt == "en" else row.ur)[-1]


# ------------------------------------------------------------------ STEM - Humanities
def _gaps(runs: Sequence[ExamRun]) -> tuple[Table, Table, Chart]:
    paper_records = []
    for row in URDUMMLU_TABLE4:
        en, ur = dict(zip(TABLE4_COLUMNS, row.en, strict=True)), dict(zip(TABLE4_COLUMNS, row.ur, strict=True))
        paper_records.append(
            {
                "model": row.model,
                "group": row.group,
                "STEM (Urdu prompt)": ur[STEM],
                "Humanities (Urdu prompt)": ur[HUMANITIES],
                "gap, Urdu prompt (Table 15)": round(ur[STEM] - ur[HUMANITIES], 2),
                "gap, English prompt": round(en[STEM] - en[HUMANITIES], 2),
            }
        )
    paper = Table(
        "mcq_stem_humanities_paper",
        "UrduMMLU Table 15 · STEM − Humanities (points), from Table 4",
        pd.DataFrame(paper_records),
        [DERIVED] * len(paper_records),
        notes=[
            "Table 15's body is missing from the paper's text; its caption says it comes from Table 4, "
            "so each gap is Table 4's STEM minus Humanities accuracy as printed (the paper quotes "
            "12.50 for Gemini-3.5-Flash). The STEM and Humanities columns are Table 4 as printed."
        ],
    )
    ours_records = []
    for run in runs:
        stem, humanities = (_number((run.domains.get(d) or {}).get("accuracy_parseable")) for d in (STEM, HUMANITIES))
        if stem is None or humanities is None:
            continue
        ours_records.append(
            {
                "run": run.run,
                "exam": run.exam,
                "prompt": run.prompt,
                "shots": run.shots,
                "STEM (%)": percent(stem),
                "Humanities (%)": percent(humanities),
                "gap (points)": round(100.0 * (stem - humanities), 2),
                "STEM items": (run.domains.get(STEM) or {}).get("n_items"),
                "Humanities items": (run.domains.get(HUMANITIES) or {}).get("n_items"),
            }
        )
    ours = Table(
        "mcq_stem_humanities_ours",
        "Our runs · STEM − Humanities (points)",
        pd.DataFrame(
            ours_records,
            columns=[
                "run",
                "exam",
                "prompt",
                "shots",
                "STEM (%)",
                "Humanities (%)",
                "gap (points)",
                "STEM items",
                "Humanities items",
            ],
        ),
        [OURS] * len(ours_records),
        formats={c: "{:.0f}" for c in ("shots", "STEM items", "Humanities items")},
        notes=[
            "Accuracy over parseable outputs per domain, the denominator Table 4 appears to use; runs "
            "without both domains are left out."
        ],
    )
    chart = Chart(
        "mcq_stem_humanities",
        "STEM − Humanities gap: the paper's models and our runs",
        gap_figure(
            [(r["model"], r["gap, Urdu prompt (Table 15)"]) for r in paper_records],
            [(f"{r['run']} ({r['prompt']})", r["gap (points)"]) for r in ours_records],
        ),
        "A model that knows STEM but not Urdu literature, language and Islamic studies has a large gap; "
        "BLOOMZ sits at chance on both.",
    )
    return paper, ours, chart


# ------------------------------------------------------------------ levels
def _levels(runs: Sequence[ExamRun]) -> list[Table | Chart]:
    parts: list[Table | Chart] = []
    for exam in sorted({r.exam for r in runs}):
        chosen = [r for r in runs if r.exam == exam and r.levels]
        if not chosen:
            continue
        known = tuple(getattr(TASKS[exam], "levels", ()))
        seen = {str(row.get("group")) for r in chosen for row in r.levels}
        levels = [lv for lv in known if lv in seen] + sorted(seen - set(known))
        records, by_run = [], {}
        for run in chosen:
            rows = {str(row.get("group")): row for row in run.levels}
            by_run[f"{run.run}"] = {lv: percent(rows[lv].get("accuracy_all_items")) for lv in rows}
            records.append(
                {
                    "run": run.run,
                    "prompt": run.prompt,
                    "shots": run.shots,
                    **{f"{lv} (%)": by_run[run.run].get(lv) for lv in levels},
                    **{f"{lv} items": (rows.get(lv) or {}).get("n_items") for lv in levels},
                }
            )
        formats = {"shots": "{:.0f}", **{f"{lv} items": "{:.0f}" for lv in levels}}
        parts.append(
            Table(
                f"{exam}_by_level",
                f"{exam} · our runs, accuracy by level (%)",
                pd.DataFrame(records),
                [OURS] * len(records),
                formats=formats,
                notes=[
                    "Accuracy over all items (invalid outputs wrong). The UrduMMLU paper's text gives "
                    "no per-level numbers, so this table is ours alone."
                ],
            )
        )
        caption = "" if len(by_run) <= MAX_LEVEL_RUNS else f"The first {MAX_LEVEL_RUNS} runs; the table holds all."
        parts.append(
            Chart(f"{exam}_by_level", f"{exam}: accuracy by level", level_figure(exam, levels, by_run), caption)
        )
    return parts


def mcq_section(folders: Sequence[ResultsFolder], gathered: Gathered) -> tuple[Section, list[str]]:
    runs = [ExamRun.of(f) for f in gathered.of("mcq")]
    table4, skipped = _table4(folders)
    section = Section(
        key="mcq",
        title="Exams (UrduMMLU protocol): Table 4, few-shot deltas, STEM − Humanities, levels",
        intro=[
            "Rows *paper, as printed* are the UrduMMLU paper's Table 4 (Urdu exam, 30 models, English and Urdu "
            "prompts). Rows *ours* are our exam runs, on the exam their *exam* column names (`mcq_ne`, Nepali "
            "school exams, has no paper rows of its own: the protocol is UrduMMLU's)."
        ],
        sample=gathered.sample_count("mcq") > 0,
    )
    if not runs:
        section.empty = "No exam run in the results folder: the paper's numbers alone."
    fewshot = _fewshot(runs)
    paper_gap, ours_gap, gap_chart = _gaps(runs)
    section.add(table4, fewshot, paper_gap)
    section.add(ours_gap if len(ours_gap.frame) else "No run of ours has both STEM and Humanities items.", gap_chart)
    section.add(*(_levels(runs) or ["No run of ours has per-level tables (written by `nlue llm mcq`)."]))
    orders = order_table(gathered.of("mcq"))
    if orders is not None:
        section.add(orders)
    worded = wording_table(gathered.of("mcq"), "mcq_prompt_wordings", "Our runs · prompt wordings (--wordings all)")
    if worded is not None:
        section.add(worded)
    return section, skipped
