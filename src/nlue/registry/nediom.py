"""neDIOM, the Nepali idiom benchmark, as data: its task, citation, the paper's Table 3 and our decisions.

Facts come from the neDIOM paper (Pokharel and Agrawal; digest ``shared/nediom_facts.md``);
descriptions are our own words. One task, ``nediom``, of kind ``idiomaticity``, declared in its task file
(:mod:`nlue.registry.kinds.idiomaticity` decides its fields, row rules, input variants and
card). The paper released no files, URL or licence; the package ships a sample of its own.

Decisions on the facts file's ambiguities (§8), said once here and on the card:

* 5 (which items train): the pool is drawn per label with a seed over whole idioms (no
  idiom in both splits); the 5-shot set is nested in the 10-shot set (:mod:`nlue.idioms.split`).
* 6 (inputs): one space between sentences, the idiom first as its own segment, markers
  never shown (:func:`nlue.registry.kinds.idiomaticity.variant_input`).
* 9 (Table 1's इन्तु न चिन्तु item labelled L): kept as printed here; our sample labels
  its own items by their sense.
* 10 (multi-word prefixes, marker convention): every word but the last in full, the last
  cut to its first letter (:mod:`nlue.text.idiom_prefix`); the span runs from the idiom's first
  word through the inflected form of its last word, and words after it (``सक्छ`` in
  ``काट्न सक्छ``) stay outside. The idiom's own last word stays inside even when it is हुनु:
  Table 1's इन्तु न चिन्तु item leaves ``छन्`` outside, our sample keeps the form of हुनु in.
* 11 (release format): the columns below, a ``position`` field in the paper's ``###``
  form on input, offsets in the built dataset; NA items are not part of it.

The remaining ambiguities (1-4, 7, 8: prompts, verbalisers, fine-tuning details,
checkpoints, missing cells) belong to the evaluators: the prompts and label words are declared
in the task file (:data:`NEDIOM_PROMPTS` below is their view), the scoring rules
:mod:`nlue.idioms.zero_shot` and :mod:`nlue.idioms.few_shot`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from nlue.registry.benchmarks import NEDIOM
from nlue.registry.spec import IdiomPrompt, TaskSpec  # IdiomPrompt: its old home, still importable

PAPER_IDIOMATIC, PAPER_LITERAL = 408, 118
PAPER_POOL_SIZE, PAPER_TEST_SIZE = 20, 506
SHOTS_PER_LABEL: tuple[int, ...] = (5, 10)
DEFAULT_POOL_SEED = 42
# The task, declared in nlue/registry/shipped_tasks/nediom/ (its primary-metric note there too).
NEDIOM_TASKS: tuple[TaskSpec, ...] = NEDIOM.tasks
NEDIOM_CITATION = NEDIOM.citation


# ------------------------------------------------------------------ Table 3 of the paper, as printed (macro-F1)
TABLE3_SETTINGS: tuple[str, ...] = ("zero-shot", "5-shot", "10-shot")
TABLE3_MODELS: tuple[str, ...] = (
    "XLM-R", "BLOOM-560m", "BLOOM-1b1", "BLOOM-3b", "BLOOM-7b", "Llama2-7b", "GPT-3.5",
)  # fmt: skip
# Per context, per model: (ZS with, ZS without, 5 with, 5 without, 10 with, 10 without); None = not run.
_T3 = """
S2|.44 .18 .50 .44 .44 .19|.50 .52 .44 .52 .47 .18|.50 .50 .44 .19 .47 .19|.46 .37 .19 .44 .44 .20|.44 .44 - - - -|.44 .19 - - - -|.50 .47 .47 .51 .52 .50
S1+S2|.44 .44 .23 .47 .44 .46|.29 .35 .18 .47 .33 .44|.48 .51 .46 .44 .18 .19|.38 .34 .46 .45 .20 .20|.19 .32 - - - -|.44 .18 - - - -|.53 .48 .44 .4 .56 .47
S2+S3|.44 .44 .18 .51 .44 .46|.28 .33 .42 .44 .2 .44|.47 .47 .46 .18 .44 .22|.34 .33 .43 .43 .18 .18|.44 .44 - - - -|.17 .44 - - - -|.46 .47 .44 .51 .44 .50
S1+S2+S3|.44 .44 .18 .53 .44 .50|.25 .31 .20 .18 .31 .54|.47 .48 .44 .18 .45 .32|.31 .30 .18 .18 - -|.19 .44 - - - -|- - - - - -|.51 .49 .55 .53 .55 .54
"""


def _table3() -> Mapping[str, Mapping[str, tuple[float | None, ...]]]:
    table: dict[str, Mapping[str, tuple[float | None, ...]]] = {}
    for line in _T3.strip().splitlines():
        context, *cells = line.split("|")
        if len(cells) != len(TABLE3_MODELS):
            raise ValueError(f"Table 3 row {context!r} has {len(cells)} models, expected {len(TABLE3_MODELS)}")
        table[context] = MappingProxyType(
            {
                m: tuple(None if v == "-" else float(v) for v in c.split())
                for m, c in zip(TABLE3_MODELS, cells, strict=True)
            }
        )
    return MappingProxyType(table)


TABLE3: Mapping[str, Mapping[str, tuple[float | None, ...]]] = _table3()
"""Macro-F1 by context, then model: (ZS w/, ZS w/o, 5-shot w/, 5-shot w/o, 10-shot w/, 10-shot w/o)."""


# ------------------------------------------------------------------ zero-shot prompts (ours; the paper gives none)
NEDIOM_PROMPTS: Mapping[str, IdiomPrompt] = NEDIOM.tasks[0].idiom_prompts
"""Zero-shot prompts by language code, as nediom.yaml declares them (a read-only view); the label words
follow the label ids (0 idiomatic, 1 literal)."""
