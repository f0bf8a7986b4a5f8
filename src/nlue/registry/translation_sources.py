"""The English source formats that NLUE's classification tasks were translated from, as data.

One :class:`SourceFormat` per raw release a task can be translated from: the file type,
the columns (named by a header, or listed here for headerless files), which source
column fills each registry field, which column holds the label and how raw label values
map to the registry's labels, and which columns identify a row. The translation readers
(:mod:`nlue.translate.readers`) apply these declarations; nothing outside the registry
spells a task's name.

The quirks handled are declared, not coded per task: GLUE's TSVs are read without
quote processing (MRPC, QQP and SST-2 hold unbalanced ``"`` characters that a CSV reader
would take as quoting), CoLA's and XGLUE's files have no header, MNLI/SNLI mark items
without a gold label with ``-`` (dropped, not rejected), and SuperGLUE's WSC gives a
pronoun span that is replaced by the candidate to make CR's second sentence.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

DROP = "drop"  # a label value naming rows left out on purpose (counted, not rejected)


def _map(**pairs: str) -> MappingProxyType[str, str]:
    return MappingProxyType(dict(pairs))


@dataclass(frozen=True)
class SpanSubstitution:
    """Build ``into`` by replacing, in the text of ``text``, the words at ``index`` (the span
    ``span``) with ``candidate`` (dotted names read nested JSON objects)."""

    text: str
    index: str
    span: str
    candidate: str
    into: str


@dataclass(frozen=True)
class SourceFormat:
    """One raw English release of a task.

    ``fields`` maps each registry input field to its source column; ``label_column`` holds
    the label, and ``labels`` maps raw values to registry label names (or :data:`DROP`);
    values it does not list go to the task's kind (label ids, names, scores).
    """

    name: str
    description: str
    file_type: Literal["tsv", "jsonl"]
    fields: Mapping[str, str]
    label_column: str
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    columns: tuple[str, ...] = ()  # the column names of a headerless file, in order
    id_columns: tuple[str, ...] = ()  # empty: a row is identified by file and row number
    substitution: SpanSubstitution | None = None

    @property
    def has_header(self) -> bool:
        return not self.columns

    @property
    def needed_columns(self) -> tuple[str, ...]:
        """Columns a file must have (dotted JSON paths count by their first part)."""
        names = [*self.fields.values(), self.label_column, *self.id_columns]
        if self.substitution is not None:
            sub = self.substitution
            names += [sub.text, sub.index, sub.span, sub.candidate]
        return tuple(dict.fromkeys(name.split(".")[0] for name in names))


_SST2 = SourceFormat(
    name="glue-sst2",
    description="GLUE SST-2 TSV: header `sentence label` (0 negative, 1 positive)",
    file_type="tsv",
    fields=_map(text="sentence"),
    label_column="label",
)
_COLA = SourceFormat(
    name="glue-cola",
    description="GLUE CoLA TSV without header: source, label (0/1), original mark, sentence",
    file_type="tsv",
    columns=("source", "label", "original_mark", "sentence"),
    fields=_map(text="sentence"),
    label_column="label",
)
_WINOGRANDE = SourceFormat(
    name="winogrande-jsonl",
    description="WinoGrande JSONL: qID, sentence (blank `_`), option1, option2, answer (1 or 2)",
    file_type="jsonl",
    fields=_map(sentence="sentence", option1="option1", option2="option2"),
    label_column="answer",
    id_columns=("qID",),
)
_QQP = SourceFormat(
    name="glue-qqp",
    description="GLUE QQP TSV: id, qid1, qid2, question1, question2, is_duplicate",
    file_type="tsv",
    fields=_map(question1="question1", question2="question2"),
    label_column="is_duplicate",
    id_columns=("id",),
)
_MRPC = SourceFormat(
    name="glue-mrpc",
    description="GLUE/MSR MRPC TSV: Quality, #1 ID, #2 ID, #1 String, #2 String (quotes are text)",
    file_type="tsv",
    fields=_map(sentence1="#1 String", sentence2="#2 String"),
    label_column="Quality",
    id_columns=("#1 ID", "#2 ID"),
)
_STSB = SourceFormat(
    name="glue-stsb",
    description="GLUE STS-B TSV: index, genre, filename, year, old_index, source1, source2, sentence1, sentence2, score",
    file_type="tsv",
    fields=_map(sentence1="sentence1", sentence2="sentence2"),
    label_column="score",
    id_columns=("index",),
)
_QADSM = SourceFormat(
    name="xglue-qadsm",
    description="XGLUE QADSM TSV without header: query, ad title, ad description, label (Good/Bad)",
    file_type="tsv",
    columns=("query", "ad_title", "ad_description", "label"),
    fields=_map(query="query", ad_title="ad_title", ad_description="ad_description"),
    label_column="label",
    labels=_map(Good="relevant", Bad="irrelevant"),
)
_MNLI = SourceFormat(
    name="glue-mnli",
    description="GLUE MNLI or SNLI 1.0 TSV: sentence1, sentence2, gold_label (`-`: no gold label, dropped)",
    file_type="tsv",
    fields=_map(premise="sentence1", hypothesis="sentence2"),
    label_column="gold_label",
    labels=_map(**{"-": DROP}),
    id_columns=("pairID",),
)
_QNLI = SourceFormat(
    name="glue-qnli",
    description="GLUE QNLI TSV: index, question, sentence, label (entailment/not_entailment)",
    file_type="tsv",
    fields=_map(question="question", sentence="sentence"),
    label_column="label",
    id_columns=("index",),
)
_RTE = SourceFormat(
    name="glue-rte",
    description="GLUE RTE TSV: index, sentence1, sentence2, label (entailment/not_entailment)",
    file_type="tsv",
    fields=_map(sentence1="sentence1", sentence2="sentence2"),
    label_column="label",
    id_columns=("index",),
)
_WNLI = SourceFormat(
    name="glue-wnli",
    description="GLUE WNLI TSV: index, sentence1, sentence2 (pronoun replaced), label (1 correct, 0 not)",
    file_type="tsv",
    fields=_map(sentence1="sentence1", sentence2="sentence2"),
    label_column="label",
    id_columns=("index",),
)
_WSC = SourceFormat(
    name="superglue-wsc",
    description="SuperGLUE WSC JSONL: text, target {span1_text, span2_text, span2_index}, label (true/false), idx",
    file_type="jsonl",
    fields=_map(sentence1="text"),
    label_column="label",
    labels=_map(**{"True": "correct", "False": "incorrect", "true": "correct", "false": "incorrect"}),
    id_columns=("idx",),
    substitution=SpanSubstitution(
        text="text",
        index="target.span2_index",
        span="target.span2_text",
        candidate="target.span1_text",
        into="sentence2",
    ),
)

# Task -> its English sources, the one tried first when a file fits several.
TRANSLATION_SOURCES: Mapping[str, tuple[SourceFormat, ...]] = MappingProxyType(
    {
        "sa": (_SST2,),
        "cola": (_COLA,),
        "wg": (_WINOGRANDE,),
        "qqp": (_QQP,),
        "mrpc": (_MRPC,),
        "stsb": (_STSB,),
        "qadsm": (_QADSM,),
        "mnli": (_MNLI,),
        "qnli": (_QNLI,),
        "rte": (_RTE,),
        "cr": (_WNLI, _WSC),
    }
)


def source_formats(task_name: str) -> tuple[SourceFormat, ...]:
    """The declared English sources of a task; an empty tuple when it is not translated from one."""
    return TRANSLATION_SOURCES.get(task_name, ())
