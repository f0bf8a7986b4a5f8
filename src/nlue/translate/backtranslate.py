"""Back-translation: a seeded sample of the Nepali rows taken back to English by a second system, scored.

The paper back-translated a 1% sample with a different system and compared it with the
English by BLEU. Here the sample is drawn as the review sample is (seeded, the share or at
least ``min_rows`` rows), every text field is translated back on its own, and sacrebleu
scores the back-translations against the English source: corpus BLEU and chrF over all
fields, per field, and each text's own chrF, so that the worst rows can be looked at.
chrF is the more telling of the two for short segments (BLEU of one short sentence is
mostly zero). A high score says meaning survived the round trip; it cannot say the Nepali
is natural, which is the review's job.

The second system is a local translation model (Nepali to English) or a model behind an
OpenAI-compatible server, asked for the English of one text per request; the answers of
both are kept in the answer cache, so an interrupted run resumes.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from nlue.data.translation_layout import RUN_REPORT, backtranslation_dir
from nlue.errors import NlueError
from nlue.lm.base import ChatMessage, GenerationRequest, LanguageModel
from nlue.registry.spec import TaskSpec
from nlue.strict_json import dumps_lines
from nlue.translate.output import write_atomic, write_report
from nlue.translate.prompts import item_fields

DEFAULT_SHARE = 0.01
DEFAULT_MIN_ROWS = 20
_WORST_SHOWN = 10
BACK_PROMPT = (
    "Translate this Nepali text into English. Keep its meaning exactly. "
    "Answer with the English translation only.\n\n{text}"
)


def engine_back_translator(lm: LanguageModel, max_new_tokens: int = 512) -> Callable[[Sequence[str]], list[str]]:
    """Each text as one chat request to ``lm``; failed requests come back empty (and score zero)."""

    def translate(texts: Sequence[str]) -> list[str]:
        requests = [
            GenerationRequest(
                messages=(ChatMessage("user", BACK_PROMPT.format(text=t)),), max_new_tokens=max_new_tokens
            )
            for t in texts
        ]
        return [g.text.strip() if g.finish_reason != "error" else "" for g in lm.generate(requests)]

    return translate


def backtranslate(
    task: TaskSpec,
    output: Path,
    work: Path,
    translate: Callable[[Sequence[str]], list[str]],
    system: str,
    share: float = DEFAULT_SHARE,
    min_rows: int = DEFAULT_MIN_ROWS,
    seed: int = 42,
) -> dict[str, Any]:
    """Back-translate a seeded sample of ``output`` with ``translate``; write and return the scores."""
    import sacrebleu

    if not 0 < share <= 1 or min_rows < 1:
        raise NlueError(f"the sample share must be in (0, 1] and at least one row drawn (got {share}, {min_rows})")
    if not output.is_file():
        raise NlueError(f"{output}: no translated rows; run nlue translate first")
    rows = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not rows:
        raise NlueError(f"{output}: holds no rows to back-translate")
    count = min(len(rows), max(min_rows, math.ceil(share * len(rows))))
    chosen = [rows[i] for i in sorted(random.Random(seed).sample(range(len(rows)), count))]
    fields = item_fields(task)
    segments = [(row, name) for row in chosen for name in fields]
    back = translate([row[name] for row, name in segments])
    if len(back) != len(segments):
        raise RuntimeError(f"{system} returned {len(back)} translations for {len(segments)} texts")
    english = [row["provenance"]["source_text"][name] for row, name in segments]
    scored = []
    for (row, name), hypothesis, reference in zip(segments, back, english, strict=True):
        chrf = sacrebleu.sentence_chrf(hypothesis, [reference]).score
        scored.append({"source_id": row["provenance"]["source_id"], "field": name, "english": reference,
                       "nepali": row[name], "back": hypothesis, "chrf": round(chrf, 2)})  # fmt: skip

    def corpus(items: list[dict[str, Any]]) -> dict[str, float]:
        hypotheses, references = [i["back"] for i in items], [[i["english"] for i in items]]
        return {
            "bleu": round(sacrebleu.corpus_bleu(hypotheses, references).score, 2),
            "chrf": round(sacrebleu.corpus_chrf(hypotheses, references).score, 2),
            "texts": len(items),
        }

    folder = backtranslation_dir(work)
    write_atomic(folder / "rows.jsonl", [dumps_lines(scored, where=str(folder / "rows.jsonl"))])
    report = {
        "system": system,
        "rows": count,
        "of_rows": len(rows),
        "seed": seed,
        "scores": corpus(scored),
        "by_field": {name: corpus([s for s in scored if s["field"] == name]) for name in fields},
        "worst": sorted(scored, key=lambda s: s["chrf"])[:_WORST_SHOWN],
        "sacrebleu": sacrebleu.__version__,
        "note": "BLEU and chrF of the back-translation against the English source (sacrebleu defaults)",
    }
    write_report(folder / RUN_REPORT, report)
    return report
