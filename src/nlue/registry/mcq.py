"""Native-language multiple-choice exams (the UrduMMLU protocol): the paper's facts and tables, the prompt words.

Facts come from the UrduMMLU paper (arXiv:2606.07167, digest ``shared/mcq_facts.md``);
descriptions are our own words. Two tasks, declared in task files
(``nlue/registry/shipped_tasks/mcq/``: their descriptions, vocabularies, aliases and prompts):

* ``mcq_ur``: Urdu exam questions in UrduMMLU's schema and vocabularies (Table 13: 5
  domains, 26 subdomains, levels SSC-I to HSSC-II, grades 9-12 mapped as the paper does).
  The real items are the paper's release (``MBZUAI/UrduMMLU``); the package ships a
  small sample of our own.
* ``mcq_ne``: the same protocol for Nepali school exams. No published Nepali exam set
  exists yet; the sample is ours. Decided here: the paper's five domains (so results
  line up with UrduMMLU's per-domain columns) with Nepali-school subjects as subdomains,
  and levels named by grade, ``Grade 8`` to ``Grade 12``, because Nepal's exams are
  named by the grade they close: the Basic Level Examination (``BLE``) after grade 8,
  the Secondary Education Examination (``SEE``) after grade 10 and the National
  Examinations Board's grade-12 exam (``NEB``); those names, ``Class 10``, ``कक्षा १०``
  and Roman grades (``XII``) are accepted as aliases. The sample uses grades 8, 10 and 12.

The paper's Table 4 (zero-shot accuracy per domain, overall and Inv%, English and Urdu
prompts) is kept as printed in :data:`URDUMMLU_TABLE4` for the leaderboard; it is on
UrduMMLU's 26,431 items, never on the sample. Its accuracy appears to be over parseable
outputs (:func:`denominator_flags`), so it compares with our ``accuracy_parseable``.

Other decisions on the facts file's ambiguities (§12): the prompt words (12.3) are declared in
the task files, and :data:`MCQ_PROMPTS` is their view by language; the demonstration pool is its own split ``demo``,
never counted in ``test`` (12.5, 12.7); the few-shot runs' "LLaMA-3.1-8B" is the one
checkpoint the paper lists, ``meta-llama/Llama-3.1-8B-Instruct`` (12.6); options are shown
in stored order, never shuffled (12.9).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from nlue.errors import NlueError
from nlue.registry.benchmarks import MCQ
from nlue.registry.spec import ExamSpec, PromptSpec  # noqa: F401  (ExamSpec: its old home, still importable)

PAPER_TOTAL_ITEMS = 26_431
PAPER_DEMO_POOL_SIZE = (
    200  # held-out validated MCQs the few-shot runs drew from (whether inside the 26,431 is unstated)
)
PAPER_SEED = 42

# Table 13: domain -> (subdomain, acronym, levels it appears at), in the paper's order.
_ALL = ("SSC-I", "SSC-II", "HSSC-I", "HSSC-II")
_S3 = ("SSC-I", "SSC-II", "HSSC-I")
URDUMMLU_SUBDOMAINS: Mapping[str, tuple[tuple[str, str, tuple[str, ...]], ...]] = MappingProxyType(
    {
        "Humanities": (
            ("ethics", "ETH", _S3), ("fine arts", "FNA", _S3), ("islamic studies", "ISL", _ALL),
            ("urdu grammar", "UGR", _ALL), ("urdu language", "ULG", _ALL), ("urdu literature", "ULT", _ALL),
        ),
        "Social Sciences": (
            ("civics", "CIV", _ALL), ("commerce", "COM", _ALL), ("current & international affairs", "CIA", _ALL),
            ("economics", "ECO", _ALL), ("education", "EDU", _ALL), ("geography", "GEO", _ALL),
            ("health & physical education", "HPE", ("SSC-I", "SSC-II", "HSSC-II")),
            ("pakistan studies", "PKS", _ALL), ("psychology", "PSY", ("HSSC-I", "HSSC-II")),
            ("psychometrics", "PMT", _ALL), ("sociology", "SOC", ("HSSC-I", "HSSC-II")),
        ),
        "STEM": (
            ("biology", "BIO", _ALL), ("chemistry", "CHM", _S3), ("computer science", "CSC", _S3),
            ("general science", "GSC", _S3), ("mathematics", "MTH", _S3),
            ("physics", "PHY", ("SSC-I", "SSC-II", "HSSC-II")),
        ),
        "Other": (("general knowledge", "GKN", _ALL),),
        "Profession": (("professional development", "PRD", _ALL), ("professional studies", "PRS", ("SSC-I", "SSC-II"))),
    }
)  # fmt: skip
URDUMMLU_DOMAIN_COUNTS: Mapping[str, int] = MappingProxyType(
    {"Humanities": 11_010, "Social Sciences": 7_968, "STEM": 5_113, "Other": 1_365, "Profession": 975}
)


# How an exam item is put to a language model, per prompt language (facts §6; our own wording of the
# instructions, the paper's format lines): declared in the exams' task files (prompts:), where each exam
# gives English and its own language. The instruction is the system prompt and ends with the two answer
# lines; the field labels name the item's lines; the answer lines stay in English everywhere. Decided
# (ambiguity 12.3): options as "A) text", subject and level on separate lines, the format lines unbulleted
# in English and Nepali and with the "- " the Urdu figure shows in Urdu (the parser takes both).
def _exam_prompts() -> Mapping[str, PromptSpec]:
    """Prompt language -> the shipped exams' prompt in it; a language two exams declare must read the same."""
    found: dict[str, PromptSpec] = {}
    for task in MCQ.tasks:
        for language, prompt in task.prompts.items():
            if found.setdefault(language, prompt) != prompt:
                raise NlueError(
                    f"the shipped exams declare different {language!r} prompts ({task.task_file} and another "
                    "exam's task file); MCQ_PROMPTS holds one per language, so they must read the same"
                )
    return MappingProxyType(found)


MCQ_PROMPTS: Mapping[str, PromptSpec] = _exam_prompts()
"""Prompt language (en, ne, ur) -> the exam prompt: a read-only view of the shipped exams' task files."""


# ------------------------------------------------------------------ Table 4 of the paper, as printed
TABLE4_COLUMNS: tuple[str, ...] = ("STEM", "Humanities", "Social Sciences", "Profession", "Other", "All")


@dataclass(frozen=True)
class ExamPaperRow:
    """One model's row of Table 4: accuracy (%) per domain and overall, and Inv% as printed ("<0.1" kept)."""

    model: str
    group: str
    en: tuple[float, ...]
    en_invalid: str
    ur: tuple[float, ...]
    ur_invalid: str

    def as_record(self) -> dict[str, object]:
        """A flat record for a leaderboard: ``en_STEM`` ... ``ur_All``, ``en_inv`` and ``ur_inv`` (text)."""
        out: dict[str, object] = {"model": self.model, "group": self.group}
        for prompt, values, invalid in (("en", self.en, self.en_invalid), ("ur", self.ur, self.ur_invalid)):
            out.update({f"{prompt}_{column}": value for column, value in zip(TABLE4_COLUMNS, values, strict=True)})
            out[f"{prompt}_inv"] = invalid
        return out


def _row(group: str, model: str, cells: str) -> ExamPaperRow:
    parts = cells.split("|")
    if len(parts) != 14:
        raise ValueError(f"Table 4 row {model!r} has {len(parts)} cells, expected 14")
    return ExamPaperRow(
        model, group, tuple(map(float, parts[0:6])), parts[6], tuple(map(float, parts[7:13])), parts[13]
    )


_BIG, _SMALL, _PROP, _URDU = "open-source >25B", "open-source <=25B", "proprietary", "Urdu-specific"
URDUMMLU_TABLE4: tuple[ExamPaperRow, ...] = (
    _row(_BIG, "DeepSeek-V4-Flash", "97.49|68.71|90.05|89.85|86.44|82.41|0.1|97.57|67.32|88.95|89.44|84.88|81.42|0.3"),
    _row(_BIG, "Gemma-4-26B-A4B-IT", "85.92|57.43|73.83|75.49|70.55|69.23|<0.1|87.21|57.73|75.41|77.82|71.79|70.23|<0.1"),
    _row(_BIG, "Gemma-4-31B-IT", "93.33|63.62|81.70|83.69|79.49|76.38|<0.1|93.86|63.25|82.06|84.10|78.39|76.39|<0.1"),
    _row(_BIG, "LLaMA-3.3-70B", "81.32|56.30|75.45|76.51|73.77|68.56|0|78.39|56.10|73.43|71.28|71.65|67.00|<0.1"),
    _row(_BIG, "Qwen3.6-27B", "90.46|55.95|73.19|74.77|69.60|69.22|0|91.12|55.71|74.55|74.46|70.55|69.70|0"),
    _row(_BIG, "Qwen3.6-35B-A3B", "88.77|56.81|73.52|75.49|69.82|69.39|0|96.32|58.12|84.43|84.50|77.99|75.46|0.4"),
    _row(_BIG, "LLaMA-4-Scout-17B-16E", "84.14|57.03|71.20|74.15|69.52|67.82|0|85.59|56.55|72.49|72.62|69.01|68.20|<0.1"),
    _row(_BIG, "LLaMA-4-Maverick-17B-128E",
         "91.98|63.27|80.11|81.64|80.66|75.47|<0.1|92.38|63.25|81.30|79.59|80.81|75.83|<0.1"),
    _row(_SMALL, "BLOOMZ-1.1B", "23.52|27.21|24.39|26.06|25.63|25.52|0.5|24.53|25.83|25.34|23.49|24.47|25.27|<0.1"),
    _row(_SMALL, "BLOOMZ-1.7B", "28.94|27.70|33.33|37.17|31.43|30.19|2.5|28.74|28.76|33.84|32.60|27.51|30.57|24.8"),
    _row(_SMALL, "BLOOMZ-3B", "27.89|30.25|33.26|32.34|28.39|30.68|6.5|26.56|27.70|30.35|32.64|26.75|28.62|74.2"),
    _row(_SMALL, "BLOOMZ-7B", "27.75|27.81|33.56|31.83|28.11|29.73|11.2|29.24|30.88|33.35|33.45|30.73|31.36|34.6"),
    _row(_SMALL, "Gemma-2-9B-IT", "67.08|47.21|58.40|60.00|54.58|55.28|0|69.02|48.08|60.53|62.15|55.82|56.80|0"),
    _row(_SMALL, "Gemma-3-4B-IT", "49.97|37.87|47.68|47.79|45.57|43.93|0|51.79|38.27|48.69|50.15|46.23|44.88|0"),
    _row(_SMALL, "LLaMA-3.2-3B", "37.12|26.78|38.06|36.00|35.60|32.98|0|37.24|29.32|39.97|38.36|38.02|34.85|0"),
    _row(_SMALL, "LLaMA-3.1-8B", "46.96|36.38|49.66|48.51|44.54|43.30|0|46.49|37.61|49.85|49.54|44.98|43.84|0"),
    _row(_SMALL, "Ministral-3-3B", "55.04|43.69|48.99|49.08|47.91|47.90|<0.1|57.25|43.07|52.07|52.26|48.86|49.16|<0.1"),
    _row(_SMALL, "Ministral-3-8B", "67.81|45.27|58.99|59.59|54.43|54.77|0|71.37|45.74|62.74|61.54|57.00|56.99|0"),
    _row(_SMALL, "Phi-4-mini", "37.07|28.85|38.10|40.41|32.67|33.85|<0.1|37.08|28.70|38.97|38.67|35.85|34.15|<0.1"),
    _row(_SMALL, "Phi-3.5-mini", "33.76|22.89|30.90|32.21|28.28|28.03|0|33.83|27.25|31.75|34.22|30.57|30.31|0.4"),
    _row(_SMALL, "Qwen3-4B-Instruct-2507", "68.61|42.33|51.48|52.62|47.84|50.84|0|68.75|43.00|53.30|53.23|47.69|51.70|0"),
    _row(_SMALL, "Qwen3-8B", "70.70|39.21|53.99|56.62|50.18|50.97|0|74.37|30.87|56.54|57.48|49.38|48.97|0.5"),
    _row(_PROP, "Claude-Haiku-4.5", "90.49|58.57|75.86|75.90|74.14|71.40|0.1|91.96|59.31|77.06|78.26|74.29|72.45|<0.1"),
    _row(_PROP, "Claude-Sonnet-4.6", "96.34|72.69|87.36|87.18|86.01|82.91|0|96.26|72.69|87.53|87.18|85.86|82.94|0"),
    _row(_PROP, "Gemini-3.1-Flash-Lite",
         "96.85|74.20|90.01|90.26|86.08|84.56|<0.1|97.09|74.38|90.10|90.36|85.57|84.68|<0.1"),
    _row(_PROP, "Gemini-3.5-Flash", "97.75|84.98|92.15|92.10|91.43|90.20|0.1|97.81|85.31|92.14|91.38|91.72|90.34|<0.1"),
    _row(_PROP, "GPT-5.4-mini", "88.34|62.82|77.52|79.08|75.24|73.43|0|88.25|62.35|78.45|79.59|75.09|73.51|0"),
    _row(_PROP, "GPT-5.4", "95.13|69.29|86.35|85.85|84.10|80.81|0|97.40|74.82|89.37|87.08|83.74|84.53|0.4"),
    _row(_URDU, "Qalb-1.0-8B", "38.18|29.99|37.68|40.31|39.56|34.77|0|36.26|32.72|37.78|39.34|42.55|35.52|11.3"),
    _row(_URDU, "Alif-1.0-8B", "41.09|25.74|41.40|39.87|41.04|34.72|0.6|33.27|29.00|36.26|37.67|42.93|32.68|12.6"),
)  # fmt: skip


# Few-shot runs (facts §8): Table 5's body is missing from the paper's text, which quotes only the mean gain
# over zero-shot (accuracy points) of its four models at 1, 3 and 5 shots, per prompt language (en, native).
FEWSHOT_MODELS: tuple[str, ...] = ("LLaMA-3.1-8B", "Gemma-3-4B-IT", "Qwen3-8B", "Qwen3-4B-Instruct-2507")
FEWSHOT_MEAN_GAINS: Mapping[str, Mapping[int, float]] = MappingProxyType(
    {
        "en": MappingProxyType({1: 1.15, 3: 2.20, 5: 2.67}),
        "native": MappingProxyType({1: 1.50, 3: 2.35, 5: 2.28}),
    }
)


def micro_overall(domain_scores: tuple[float, ...]) -> float:
    """The item-weighted mean of the five domain scores with the paper's final domain counts (its "All")."""
    total = sum(URDUMMLU_DOMAIN_COUNTS.values())
    pairs = zip(TABLE4_COLUMNS[:5], domain_scores[:5], strict=True)
    return sum(score * URDUMMLU_DOMAIN_COUNTS[domain] for domain, score in pairs) / total


def format_invalid_rate(rate: float) -> str:
    """Inv% the paper's way: one decimal, "<0.1" for a rate above 0 that rounds to 0.0, "0" for none."""
    percent = 100.0 * rate
    if percent == 0:
        return "0"
    return "<0.1" if percent < 0.05 else f"{percent:.1f}"


def denominator_flags() -> list[dict[str, object]]:
    """Table 4 cells whose overall accuracy exceeds what is possible if invalid outputs counted as wrong.

    Such a cell is evidence that the paper's accuracy is over parseable outputs (ambiguity 12.1);
    kept as printed, flagged here.
    """
    flags = []
    for row in URDUMMLU_TABLE4:
        for prompt, values, invalid in (("en", row.en, row.en_invalid), ("ur", row.ur, row.ur_invalid)):
            ceiling = 100.0 - (0.0 if invalid.startswith("<") else float(invalid))
            if values[-1] > ceiling:
                flags.append({"model": row.model, "prompt": prompt, "overall": values[-1], "inv": invalid,
                              "explanation": f"overall {values[-1]:.2f}% exceeds {ceiling:.1f}%, the most possible "
                              f"with {invalid}% invalid outputs counted as wrong"})  # fmt: skip
    return flags
