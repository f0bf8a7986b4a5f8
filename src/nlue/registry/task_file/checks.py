"""What a task file must get right that its JSON Schema cannot say.

Run after the schema on the same content, and safe on content that failed it (a value of
the wrong type is skipped here: the schema has said so). Each check returns the key path
and what was expected; :func:`task_problems` collects all of them, so that a file's every
problem is reported at once. What the kind decides (its fixed fields and labels, the keys
it needs, whether it reads prompts, which splits it has, which metrics it computes) is read
from the kind (:class:`nlue.registry.kinds.TaskKind`), never tested here by name.
"""

from __future__ import annotations

import math
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nlue.registry.kinds import KINDS, TaskKind
from nlue.registry.label_prompts import ANSWER_FIELDS, NUMBER_FIELDS, NUMBER_FIELDS_REQUIRED
from nlue.registry.paper_figures import PAPER_TASKS
from nlue.registry.task_file.problems import Path_
from nlue.registry.wordings import MAIN as MAIN_WORDING

Found = Iterator[tuple[Path_, str]]
FORMATS = {".csv": "csv", ".tsv": "tsv", ".json": "json", ".jsonl": "jsonl", ".parquet": "parquet"}
# Prompt keys beyond instruction, field labels, answer cue and label words: each only where its kind reads it.
OPTIONAL_PROMPT_KEYS = ("instruction_without_idiom", "answer_line", "number_line")
# The generation lines and their placeholders: (key, the fields it may use, those it must use).
LINE_FIELDS = (("answer_line", ANSWER_FIELDS, ANSWER_FIELDS), ("number_line", NUMBER_FIELDS, NUMBER_FIELDS_REQUIRED))
DROP_LABEL = "drop"  # a label map's target that drops the row (as --label-map says it)
# Keys some kind declares (score_range, mask, categories, exam): each only where its kind reads it.
KIND_KEYS = {
    key: tuple(k.name for k in KINDS.values() if key in k.declares) for k in KINDS.values() for key in k.declares
}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def effective_fields(doc: dict[str, Any], kind: TaskKind) -> list[str]:
    """The task's input fields: declared, or the ones its kind fixes."""
    fields = [f for f in _list(_map(doc.get("inputs")).get("fields")) if isinstance(f, str)]
    return fields or list(kind.fixed_fields)


def effective_labels(doc: dict[str, Any], kind: TaskKind) -> list[str]:
    """The task's labels in id order: declared, or the ones its kind fixes."""
    labels = [label for label in _list(doc.get("labels")) if isinstance(label, str)]
    return labels or list(kind.fixed_labels)


def task_problems(doc: dict[str, Any], folder: Path) -> Found:
    """Every semantic problem of one task's declaration (``folder``: where its relative paths start)."""
    kind = KINDS.get(doc.get("kind")) if isinstance(doc.get("kind"), str) else None
    if kind is None:
        return  # the schema names the kinds
    fields, labels = effective_fields(doc, kind), effective_labels(doc, kind)
    yield from _kind_keys(doc, kind)
    yield from _inputs(doc, kind, fields)
    yield from _labels(doc, kind, fields, labels)
    yield from _metrics(doc, kind)
    yield from _prompts(doc, kind, labels)
    yield from _facts(doc, fields, labels)
    yield from _exam(_map(doc.get("exam")))
    yield from _data(doc, kind, labels, folder)


def _kind_keys(doc: dict[str, Any], kind: TaskKind) -> Found:
    for key in kind.declares:
        if key not in doc:
            yield (key,), f"missing; a {kind.name} task declares it"
    for key, kinds in KIND_KEYS.items():
        if key in doc and kind.name not in kinds:
            yield (key,), f"applies to {' and '.join(kinds)} tasks, not to a {kind.name} task; remove it"
    low_high = _list(doc.get("score_range"))
    numbers = len(low_high) == 2 and all(isinstance(x, int | float) for x in low_high)
    if numbers and not (math.isfinite(low_high[0]) and math.isfinite(low_high[1]) and low_high[0] < low_high[1]):
        yield ("score_range",), f"got {low_high}; expected [lowest, highest] with lowest below highest"
    themes = _map(doc.get("categories"))
    seen: dict[str, str] = {}
    for theme, categories in themes.items():
        for i, category in enumerate(_list(categories)):
            if category in seen:
                yield ("categories", theme, i), f"{category!r} is already a category of {seen[category]!r}"
            seen.setdefault(category, theme)


def _inputs(doc: dict[str, Any], kind: TaskKind, fields: list[str]) -> Found:
    inputs = _map(doc.get("inputs"))
    declared = [f for f in _list(inputs.get("fields")) if isinstance(f, str)]
    if kind.fixed_fields and declared and declared != list(kind.fixed_fields):
        yield ("inputs", "fields"), f"a {kind.name} task reads the fields {', '.join(kind.fixed_fields)}"
    if not kind.fixed_fields and "inputs" in doc and not declared:
        yield ("inputs", "fields"), "missing; expected the task's input fields"
    if not fields:
        yield ("inputs",), f"missing; a {kind.name} task names its input fields (inputs: fields: [...])"
    for i, name in enumerate(declared):
        if name in declared[:i]:
            yield ("inputs", "fields", i), f"{name!r} is listed twice"
    for key in ("first", "second", "options"):
        for i, name in enumerate(_list(inputs.get(key))):
            if isinstance(name, str) and name not in fields:
                yield ("inputs", key, i), f"{name!r} is not one of the input fields ({', '.join(fields)})"
    blank_keys = [key for key in ("blank", "blank_field", "options") if key in inputs]
    if blank_keys and len(blank_keys) != 3:
        missing = sorted({"blank", "blank_field", "options"} - set(blank_keys))
        yield ("inputs",), f"a blank task gives blank, blank_field and options together; missing {', '.join(missing)}"
    if blank_keys and any(key in inputs for key in ("first", "second")):
        yield ("inputs",), "give either first/second (texts) or blank/blank_field/options (a blank), not both"
    if isinstance(inputs.get("blank_field"), str) and inputs["blank_field"] not in fields:
        yield ("inputs", "blank_field"), f"{inputs['blank_field']!r} is not one of the input fields"
    for name in _map(doc.get("field_hints")):
        if name not in fields:
            yield ("field_hints", name), f"not an input field; expected one of {', '.join(fields)}"


def _labels(doc: dict[str, Any], kind: TaskKind, fields: list[str], labels: list[str]) -> Found:
    declared = _list(doc.get("labels"))
    for i, label in enumerate(declared):
        if label in declared[:i]:
            yield ("labels", i), f"{label!r} is listed twice; each label once, in id order"
    if kind.fixed_labels and declared and declared != list(kind.fixed_labels):
        yield ("labels",), f"a {kind.name} task has the labels {', '.join(kind.fixed_labels)}, in that order"
    if kind.has_classes and len(labels) < 2:
        yield ("labels",), "expected at least two label names, in id order"
    if not kind.has_classes and not kind.fixed_labels and declared:
        yield ("labels",), f"a {kind.name} task has no label names; remove them"
    label_field = doc.get("label_field")
    if kind.labelled and "label_field" not in doc:
        yield ("label_field",), "missing; expected the field that holds the label"
    if not kind.labelled and "label_field" in doc:
        yield ("label_field",), f"a {kind.name} task has no label field; remove it"
    if isinstance(label_field, str) and label_field in fields:
        yield ("label_field",), f"{label_field!r} is an input field; the label must be a field of its own"
    for raw, target in _map(doc.get("label_values")).items():
        if target not in labels:
            yield ("label_values", str(raw)), f"{target!r} is not a label; expected one of {', '.join(labels)}"
    if "label_values" in doc and not kind.has_classes:
        yield ("label_values",), f"a {kind.name} task has no label names to map values to"


def _metrics(doc: dict[str, Any], kind: TaskKind) -> Found:
    computable = dict.fromkeys((*kind.metrics, kind.primary_metric))
    for i, metric in enumerate(_list(doc.get("metrics"))):
        if metric not in computable:
            yield ("metrics", i), f"{metric!r}: a {kind.name} task computes {', '.join(computable)}"
    primary = doc.get("primary_metric")
    if isinstance(primary, str) and primary not in computable:
        yield ("primary_metric",), f"{primary!r}: a {kind.name} task computes {', '.join(computable)}"


def _prompts(doc: dict[str, Any], kind: TaskKind, labels: list[str]) -> Found:
    prompts = doc.get("prompts")
    if prompts is not None and not kind.takes_prompts:
        yield ("prompts",), f"a {kind.name} task is not put to a language model with these prompts; remove them"
        return
    wanted = kind.prompt_fields(tuple(effective_fields(doc, kind)))
    for language, prompt in _map(prompts).items():
        prompt = _map(prompt)
        words = _list(prompt.get("label_words"))
        if "label_words" in prompt and len(words) != len(labels):
            yield (
                ("prompts", language, "label_words"),
                (
                    f"{len(words)} label words for {len(labels)} labels; expected one word per label, in label order "
                    f"({', '.join(labels) or 'none: this task has no labels, so []'})"
                ),
            )
        for i, word in enumerate(words):
            if word in words[:i]:
                yield ("prompts", language, "label_words", i), f"{word!r} is used twice; each label needs its own word"
        given = _map(prompt.get("field_labels"))
        if "field_labels" in prompt:
            for name in wanted:
                if name not in given:
                    yield ("prompts", language, "field_labels", name), "missing; expected the label shown before it"
            for name in given:
                if name not in wanted:
                    yield (
                        ("prompts", language, "field_labels", name),
                        (f"not a field this prompt shows; expected {', '.join(wanted)}"),
                    )
        yield from _kind_prompt(prompt, kind, ("prompts", language))
        yield from _wordings(prompt, kind, wanted, ("prompts", language))


def _wordings(prompt: dict[str, Any], kind: TaskKind, wanted: tuple[str, ...], where: Path_) -> Found:
    """A prompt's other wordings: distinct names, fields the prompt shows, only the keys the kind reads, and
    each different from the main prompt (a wording that changes nothing would measure nothing)."""
    seen: list[str] = []
    for i, wording in enumerate(_list(prompt.get("wordings"))):
        wording, at = _map(wording), (*where, "wordings", i)
        name = wording.get("name")
        if name in seen:
            yield (*at, "name"), f"{name!r} names an earlier wording too; each wording needs its own name"
        if name == MAIN_WORDING:
            yield (*at, "name"), f"{MAIN_WORDING} is the prompt itself (the keys above); give this wording its own name"
        if "label_words" in wording:
            yield (*at, "label_words"), "a wording keeps the prompt's label words, so that every wording is scored "
            "against the same words; remove it"
        seen.append(name)
        for field in _map(wording.get("field_labels")):
            if field not in wanted:
                yield (*at, "field_labels", field), f"not a field this prompt shows; expected {', '.join(wanted)}"
        yield from _kind_prompt(wording, kind, at, wording=True)
        keys = [key for key in wording if key != "name"]
        if (
            keys
            and all(wording[key] == prompt.get(key) for key in keys if key != "field_labels")
            and all(_map(prompt.get("field_labels")).get(k) == v for k, v in _map(wording.get("field_labels")).items())
        ):
            yield at, "words the prompt exactly as the main prompt does; a wording changes at least one text"


def _kind_prompt(prompt: dict[str, Any], kind: TaskKind, where: Path_, wording: bool = False) -> Found:
    """The prompt keys the kind reads (and only those), the values it fixes, and the lines' placeholders
    (``wording``: one of a prompt's other wordings, which gives only what it changes)."""
    for key in OPTIONAL_PROMPT_KEYS:
        if key in prompt and key not in kind.prompt_keys:
            takers = [k.name for k in KINDS.values() if key in k.prompt_keys]
            yield (*where, key), f"applies to {' and '.join(takers)} tasks, not to a {kind.name} task; remove it"
    for key in () if wording else kind.required_prompt_keys:
        if key not in prompt:
            yield (*where, key), f"missing; the prompts of {kind.name} tasks give it"
    for key, value in kind.fixed_prompt:
        written = list(value) if isinstance(value, tuple) else value
        if key in prompt and prompt[key] != written:
            shown = ", ".join(value) if isinstance(value, tuple) else value
            yield (*where, key), f"expected {shown}, what a {kind.name} task's parser reads; got {prompt[key]!r}"
    for key, fields, required in LINE_FIELDS:
        template = _map(prompt.get(key)).get("template")
        if isinstance(template, str):
            for problem in _placeholder_problems(template, fields, required):
                yield (*where, key, "template"), problem


def _placeholder_problems(template: str, fields: tuple[str, ...], required: tuple[str, ...]) -> Iterator[str]:
    """What is wrong with a line's ``str.format`` template: a stray brace, a field it cannot fill, one it lacks."""
    try:
        used = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        yield f"{exc}; a brace that is not a placeholder is written twice ({{{{ or }}}})"
        return
    for name in sorted(used - set(fields)):
        yield f"{{{name}}} is not a placeholder here; expected {', '.join('{' + f + '}' for f in fields)}"
    for name in required:
        if name not in used:
            yield f"missing {{{name}}}; expected {', '.join('{' + f + '}' for f in required)} in it"


def _facts(doc: dict[str, Any], fields: list[str], labels: list[str]) -> Found:
    paper = doc.get("paper_figures")
    if isinstance(paper, str) and paper in PAPER_TASKS and doc.get("name") not in PAPER_TASKS[paper]:
        yield ("paper_figures",), f"the {paper} paper reports on {', '.join(sorted(PAPER_TASKS[paper]))}, not this task"
    balance = _map(doc.get("class_balance"))
    for label in balance:
        if label not in labels:
            yield ("class_balance", label), f"not a label; expected one of {', '.join(labels) or 'none'}"
    shares = [v for v in balance.values() if isinstance(v, int | float)]
    if shares and len(shares) == len(balance) and not math.isclose(sum(shares), 1.0, abs_tol=0.02):
        yield ("class_balance",), f"the shares add up to {sum(shares):g}; expected 1 (within 0.02)"
    sizes = _map(doc.get("sizes"))
    parts = [sizes.get(k) for k in ("train", "test", "total")]
    if all(isinstance(p, int) for p in parts) and parts[0] + parts[1] > parts[2] * 1.01 + 1:  # type: ignore[operator]
        yield ("sizes", "total"), f"{parts[2]} is less than train + test ({parts[0]} + {parts[1]})"


def _exam(exam: dict[str, Any]) -> Found:
    levels = [level for level in _list(exam.get("levels")) if isinstance(level, str)]
    subjects = [s for subs in _map(exam.get("subjects")).values() for s in _list(subs)]
    for i, level in enumerate(levels):
        if level in levels[:i]:
            yield ("exam", "levels", i), f"{level!r} is listed twice"
    seen: set[str] = set()
    for domain, subs in _map(exam.get("subjects")).items():
        for i, subject in enumerate(_list(subs)):
            if subject in seen:
                yield ("exam", "subjects", domain, i), f"{subject!r} is a subdomain of another domain too"
            seen.add(subject)
    for key, targets, what in (("level_aliases", levels, "level"), ("subject_aliases", subjects, "subdomain"),
                               ("grade_levels", levels, "level")):  # fmt: skip
        for alias, target in _map(exam.get(key)).items():
            if target not in targets:
                yield ("exam", key, str(alias)), f"{target!r} is not a {what}; expected one of {', '.join(targets)}"


def _data(doc: dict[str, Any], kind: TaskKind, labels: list[str], folder: Path) -> Found:
    for split, source in _map(doc.get("data")).items():
        source = _map(source)
        where = ("data", split)
        if split not in kind.splits:
            yield where, f"a {kind.name} task has the splits {', '.join(kind.splits)}"
        local, hub = "path" in source, "hub" in source
        if local == hub:
            yield where, "expected either path (a local file) or hub (a Hub dataset id), one of them"
        if local and any(key in source for key in ("config", "revision", "split")):
            yield where, "config, split and revision describe a Hub dataset; a local file takes path and format"
        if hub and "format" in source:
            yield (*where, "format"), "a Hub dataset has no format to give; remove it"
        if isinstance(source.get("path"), str):
            yield from _local_file(where, source, folder)
        for raw, target in _map(source.get("labels")).items():
            if not kind.has_classes:
                yield (*where, "labels"), f"a {kind.name} task has no label names to map to"
                break
            if target != DROP_LABEL and target not in labels:
                yield (
                    (*where, "labels", str(raw)),
                    (f"{target!r} is not a label; expected one of {', '.join(labels)}, or {DROP_LABEL}"),
                )


def _local_file(where: Path_, source: dict[str, Any], folder: Path) -> Found:
    relative = Path(source["path"])
    if relative.is_absolute():
        yield (*where, "path"), "expected a path relative to the task file's folder"
        return
    path = (folder / relative).resolve()
    if not path.is_file():
        yield (*where, "path"), f"no file {relative} beside the task file (looked for {path})"
    if "format" not in source and path.suffix.lower() not in FORMATS:
        yield (*where, "format"), f"cannot tell the format from {relative.suffix or 'no suffix'}; give format"
