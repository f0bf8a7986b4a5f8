"""A checked task declaration as the registry's :class:`~nlue.registry.spec.TaskSpec`.

Only content that passed the schema and the checks comes here. Every field is passed
explicitly, so that no default meant for NLUE's Python declarations (its citation, the
``nlue`` benchmark) reaches a user's task. Defaults of a task file:

* ``version`` 1.0.0; ``category`` the kind's name; ``hub_task_id`` by the kind's Hub category;
* ``profile`` by the first language (:func:`nlue.registry.profiles.default_profile`);
* ``metrics`` and ``primary_metric`` the kind's; input fields and labels the kind's where it fixes them;
* ``citation`` the benchmark file's; ``benchmark`` the benchmark file's name, else the task's own;
* sizes 0 (unknown), no class balance, domains, sources or paper figures;
* a prompt's generation lines: none stored, so that :meth:`TaskSpec.answer_line` and
  :meth:`TaskSpec.number_line` give the defaults of :mod:`nlue.registry.label_prompts`;
* a prompt's other wordings: none (the main prompt is the only wording).
* for a user's file (not one shipped with the package), a primary-metric note that says the task file chose
  the primary (or left the kind's), never the shipped kinds' notes about a paper the user's task does not have.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

from nlue.registry.kinds import TaskKind, get_kind
from nlue.registry.label_prompts import DEFAULT_SEPARATOR, AnswerLine
from nlue.registry.paper_figures import nlue_paper_figures
from nlue.registry.profiles import default_profile
from nlue.registry.spec import ExamSpec, IdiomPrompt, InputSpec, PromptSpec, PromptWording, SplitSource, TaskSpec
from nlue.registry.task_file.checks import FORMATS, effective_fields, effective_labels

# The Hub's task_ids value a card gets when the task file names none, by the kind's Hub category.
DEFAULT_HUB_TASK_IDS = {
    "text-classification": "multi-class-classification",
    "fill-mask": "slot-filling",
    "multiple-choice": "multiple-choice-qa",
}
_SHAPE_KEYS = ("first", "second", "joiner", "blank", "blank_field", "options")


def _mp(mapping: dict[Any, Any] | None) -> MappingProxyType:
    return MappingProxyType(dict(mapping or {}))


def _strings(values: list[Any] | None) -> tuple[str, ...]:
    return tuple(values or ())


def _input_spec(inputs: dict[str, Any]) -> InputSpec | None:
    """The declared input shape; None when the file gives only the fields (one text, or the first two as a pair)."""
    if not any(key in inputs for key in _SHAPE_KEYS):
        return None
    return InputSpec(
        first=_strings(inputs.get("first")),
        second=_strings(inputs.get("second")),
        joiner=inputs.get("joiner", " "),
        blank=inputs.get("blank"),
        blank_field=inputs.get("blank_field"),
        options=_strings(inputs.get("options")),
    )


def _prompts(doc: dict[str, Any], kind: TaskKind) -> dict[str, MappingProxyType]:
    """The TaskSpec fields a task's prompts fill, by prompt language: ``prompts`` (or, for a kind whose
    evaluators read idiom prompts, ``idiom_prompts``), and the generation lines it writes out."""
    prompts, idioms, lines, numbers, wordings = {}, {}, {}, {}, {}
    for language, prompt in (doc.get("prompts") or {}).items():
        if prompt.get("wordings"):
            wordings[language] = tuple(_wording(w) for w in prompt["wordings"])
        words, labels = _strings(prompt["label_words"]), prompt["field_labels"]
        if "instruction_without_idiom" in kind.prompt_keys:
            idioms[language] = IdiomPrompt(prompt["instruction"], prompt["instruction_without_idiom"],
                                           labels["idiom"], labels["context"], prompt["answer_cue"], words)  # fmt: skip
        else:
            prompts[language] = PromptSpec(prompt["instruction"], _mp(labels), prompt["answer_cue"], words)
        if "answer_line" in prompt:
            line = prompt["answer_line"]
            lines[language] = AnswerLine(line["template"], line.get("separator", DEFAULT_SEPARATOR))
        if "number_line" in prompt:
            numbers[language] = prompt["number_line"]["template"]
    return {"prompts": _mp(prompts), "idiom_prompts": _mp(idioms), "answer_lines": _mp(lines),
            "number_lines": _mp(numbers), "prompt_wordings": _mp(wordings)}  # fmt: skip


def _wording(wording: dict[str, Any]) -> PromptWording:
    """One of a prompt's other wordings (checked content): the keys it gives, the main prompt's for the rest."""
    line = wording.get("answer_line")
    return PromptWording(
        name=wording["name"],
        instruction=wording.get("instruction"),
        instruction_without_idiom=wording.get("instruction_without_idiom"),
        field_labels=_mp(wording.get("field_labels")),
        answer_cue=wording.get("answer_cue"),
        answer_line=AnswerLine(line["template"], line.get("separator", DEFAULT_SEPARATOR)) if line else None,
        number_line=(wording.get("number_line") or {}).get("template"),
    )


def _data(doc: dict[str, Any], folder: Path) -> MappingProxyType:
    out = {}
    for split, source in (doc.get("data") or {}).items():
        path = source.get("path")
        local = (folder / path).resolve() if path else None
        out[split] = SplitSource(
            path=str(local) if local else None,
            format=source.get("format") or (FORMATS.get(local.suffix.lower()) if local else None),
            hub_id=source.get("hub"),
            config=source.get("config"),
            split=source.get("split"),
            revision=source.get("revision"),
            columns=_mp(source.get("columns")),
            labels=_mp({str(k): v for k, v in (source.get("labels") or {}).items()}),
        )
    return MappingProxyType(out)


def declared_primary_note(doc: dict[str, Any], primary: str) -> str:
    """Where a user's task's primary metric comes from: its task file (no paper chose it)."""
    if "primary_metric" in doc:
        return f"{primary}, as the task file declares (an nlue task file, not a paper's choice)"
    return f"{primary}, the {doc['kind']} kind's default, which the task file keeps (not a paper's choice)"


def task_from_declaration(
    doc: dict[str, Any], path: Path, benchmark: str | None = None, citation: str | None = None, shipped: bool = False
) -> TaskSpec:
    """The task ``doc`` declares (checked content), loaded from ``path``; ``benchmark`` and ``citation``
    come from a benchmark file's header; ``shipped``: one of the package's own files."""
    kind = get_kind(doc["kind"])
    labels = tuple(effective_labels(doc, kind))
    class_balance = _mp(doc.get("class_balance"))
    languages = tuple(doc["languages"])
    sizes = doc.get("sizes") or {}
    fields: dict[str, Any] = {
        "name": doc["name"],
        "title": doc["title"],
        "category": doc.get("category", kind.name.replace("_", " ")),
        "problem_type": kind.name,
        "description": doc["description"],
        "input_fields": tuple(effective_fields(doc, kind)),
        "label_field": doc.get("label_field") if kind.labelled else None,
        "label_names": labels if kind.has_classes or kind.fixed_labels else (),
        "metrics": _strings(doc.get("metrics")) or kind.metrics,
        "primary_metric": doc.get("primary_metric", kind.primary_metric),
        "paper_train_size": sizes.get("train"),
        "paper_test_size": sizes.get("test", 0),
        "paper_total_size": sizes.get("total", 0),
        "class_balance": class_balance,
        "domains": _strings(doc.get("domains")),
        "sources": _strings(doc.get("sources")),
        "label_notes": doc.get("label_notes", ""),
        "hub_task_id": doc.get("hub_task_id", DEFAULT_HUB_TASK_IDS.get(kind.hub_task_category, "other")),
        "version": doc.get("version", "1.0.0"),
        "citation": doc.get("citation", citation or ""),
        "benchmark": benchmark or doc.get("benchmark", doc["name"]),
        "inputs": _input_spec(doc.get("inputs") or {}),
        "label_values": _mp({str(raw): labels.index(name) for raw, name in (doc.get("label_values") or {}).items()}),
        "score_range": tuple(float(x) for x in doc["score_range"]) if "score_range" in doc else None,
        "mask": doc.get("mask"),
        "categories": _mp({theme: tuple(cats) for theme, cats in (doc.get("categories") or {}).items()}),
        "field_hints": _mp(doc.get("field_hints")),
        **_prompts(doc, kind),
        "languages": languages,
        "profile": doc.get("profile", default_profile(languages)),
        "license": doc.get("license"),
        "data": _data(doc, path.parent),
        "primary_metric_note": doc.get("primary_metric_note")
        or ("" if shipped else declared_primary_note(doc, doc.get("primary_metric", kind.primary_metric))),
        "primary_from_paper": doc.get("primary_metric_from_paper", None if shipped else False),
        "task_file": str(path),
    }
    if doc.get("paper_figures") == "nlue":
        fields.update(nlue_paper_figures(doc["name"], class_balance, labels))
    exam = doc.get("exam")
    if exam is None:
        return TaskSpec(**fields)
    return ExamSpec(
        **fields,
        language=languages[0],
        subjects=_mp({domain: tuple(subs) for domain, subs in exam["subjects"].items()}),
        levels=tuple(exam["levels"]),
        level_aliases=_mp(exam.get("level_aliases")),
        subject_aliases=_mp(exam.get("subject_aliases")),
        grade_levels=_mp({int(grade): level for grade, level in (exam.get("grade_levels") or {}).items()}),
    )
