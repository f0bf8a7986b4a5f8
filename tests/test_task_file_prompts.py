"""Prompts in task files for every kind that takes them (issue 30, item 4): the keys each kind reads, the values
it fixes, the generation lines and their placeholders, each problem with its key path; and what a task file
declares is what a model is sent."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nlue.errors import NlueError
from nlue.evals.llm.nlue_generate import run_nlue_generation
from nlue.evals.mcq.prompts import render, show_prompt
from nlue.registry.task_file.load import SHIPPED_DIR, check_file, load_task_file
from nlue.registry.tasks import TASKS

from .prompt_snapshot import Recorder


def _variant(tmp_path: Path, shipped: str, edit) -> Path:
    """A copy of a shipped task file, renamed and edited as ``edit`` says (on the parsed content)."""
    doc = yaml.safe_load((SHIPPED_DIR / shipped).read_text(encoding="utf-8"))
    doc["name"] = f"my_{doc['name']}"
    doc["benchmark"] = "mine"
    doc.pop("paper_figures", None)  # the paper reports on the shipped task, not on a copy of it
    edit(doc)
    path = tmp_path / f"{doc['name']}.yaml"
    path.write_text(yaml.dump(doc, Dumper=_Written, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


class _Written(yaml.SafeDumper):
    """Every value written out: a task file takes no YAML aliases."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def _problems(path: Path) -> list[tuple[str, str]]:
    return [(".".join(map(str, problem.path)), problem.message) for problem in check_file(path)]


def test_every_prompt_problem_of_every_kind_is_named_by_its_key_path(tmp_path: Path) -> None:
    """Issue 30, item 4: an exam's cue and letters (what its parser reads), neDIOM's second instruction and its
    field labels, a line another kind reads, and a line's placeholders are checked, every problem at once."""

    def exam(doc: dict) -> None:
        doc["prompts"]["ne"]["answer_cue"] = "उत्तर:"
        doc["prompts"]["ne"]["label_words"] = ["क", "ख", "ग", "घ"]
        doc["prompts"]["en"]["answer_line"] = {"template": "One of {words}."}

    def idiom(doc: dict) -> None:
        del doc["prompts"]["ne"]["instruction_without_idiom"]
        doc["prompts"]["en"]["field_labels"] = {"idiom": "Idiom", "S2": "Sentence"}
        doc["prompts"]["en"]["answer_line"]["template"] = "Say {word} or {words}."

    def score(doc: dict) -> None:
        doc["prompts"]["en"]["number_line"]["template"] = "From {low} to 5, say {score}."
        doc["prompts"]["ne"]["number_line"]["template"] = "{low} देखि {high} {"
        doc["prompts"]["ne"]["answer_line"] = {"template": "{words}"}

    found = {
        "exam": _problems(_variant(tmp_path, "mcq/mcq_ne.yaml", exam)),
        "idiom": _problems(_variant(tmp_path, "nediom/nediom.yaml", idiom)),
        "score": _problems(_variant(tmp_path, "nlue/stsb.yaml", score)),
    }
    expected = {
        "exam": [
            ("prompts.en.answer_line", "applies to classification and idiomaticity tasks, not to a multiple_choice"),
            ("prompts.ne.answer_cue", "expected Answer key:, what a multiple_choice task's parser reads"),
            ("prompts.ne.label_words", "expected A, B, C, D"),
        ],
        "idiom": [
            ("prompts.en.field_labels.context", "missing"),
            ("prompts.en.field_labels.S2", "expected idiom, context"),
            ("prompts.en.answer_line.template", "{word} is not a placeholder here; expected {words}"),
            ("prompts.ne.instruction_without_idiom", "missing; the prompts of idiomaticity tasks give it"),
        ],
        "score": [
            ("prompts.en.number_line.template", "{score} is not a placeholder here; expected {low}, {high}, {example}"),
            ("prompts.en.number_line.template", "missing {high}"),
            ("prompts.ne.answer_line", "applies to classification and idiomaticity tasks, not to a regression"),
            ("prompts.ne.number_line.template", "a brace that is not a placeholder is written twice"),
        ],
    }
    for name, problems in expected.items():
        assert len(found[name]) == len(problems), (name, found[name])
        for (key, words), (got_key, message) in zip(sorted(problems), sorted(found[name]), strict=True):
            assert (got_key, words in message) == (key, True), (name, got_key, message)


def test_a_prompt_is_refused_where_no_kind_reads_it(tmp_path: Path) -> None:
    """Issue 30, item 4: GMET (mask filling) is scored by masked LMs, never prompted; a prompt there is an error."""

    def prompt(doc: dict) -> None:
        doc["prompts"] = {"en": {"instruction": "Fill it.", "field_labels": {}, "answer_cue": "A:", "label_words": []}}

    [(key, message)] = _problems(_variant(tmp_path, "nlue/gmet.yaml", prompt))
    assert key == "prompts" and "not put to a language model" in message


def test_a_user_tasks_declared_answer_line_is_what_generation_sends(tmp_path: Path, sample_build) -> None:
    """Issue 30, item 4: the answer line a task file declares (here in a language with no default line) is
    the line a generating model is sent, before the cue; the shipped tasks' own lines are read the same way."""
    from nlue.registry.tasks import registered_task_files

    def own_words(doc: dict) -> None:
        doc["name"] = "sa"  # the sample build's config; a renamed copy of the shipped task
        doc["prompts"]["si"] = {**doc["prompts"]["en"], "answer_line": {"template": "Only: {words}!", "separator": "/"}}
        doc["prompts"]["en"]["answer_line"] = {"template": "Pick {words}.", "separator": " or "}

    path = _variant(tmp_path, "nlue/sa.yaml", own_words)
    task = load_task_file(path)
    for language, line in (("en", "Pick negative or positive."), ("si", "Only: negative/positive!")):
        model = Recorder()
        run_nlue_generation(model, str(sample_build.repo_dir), [task], language, 0, tmp_path / "runs", language,
                            chat=False, bootstrap_resamples=0, limit=1)  # fmt: skip
        [request] = model.generations
        assert request.prompt.splitlines()[-2:] == [line, "Answer:"], language
    assert "sa" in TASKS and TASKS["sa"].answer_line("en").separator == ", "
    with pytest.raises(NlueError, match="taken"), registered_task_files([path]):
        pass  # the renamed copy differs from the shipped sa: refused under its name


def test_an_exams_own_prompt_renders_when_the_task_is_given(tmp_path: Path) -> None:
    """Issue 30, item 4: the exam prompts read a task's declared words (`task=`); without a task, the shipped
    exams' words by language, as before."""

    def own_words(doc: dict) -> None:
        doc["prompts"]["ne"]["instruction"] = "तलको प्रश्नको उत्तर दुई पङ्क्तिमा दिनुहोस्।"
        doc["prompts"]["ne"]["field_labels"] = {"subject": "विषय-क्षेत्र", "level": "कक्षा", "question": "सवाल"}

    task = load_task_file(_variant(tmp_path, "mcq/mcq_ne.yaml", own_words))
    item = {
        "id": "x", "question": "२ + २ कति?", "domain": "STEM", "subdomain": "mathematics", "level": "Grade 8",
        "A": "३", "B": "४", "C": "५", "D": "६",
    }  # fmt: skip
    mine = show_prompt(render(item, "ne", chat=True, task=task))
    assert "[system]\nतलको प्रश्नको उत्तर दुई पङ्क्तिमा दिनुहोस्।" in mine and "विषय-क्षेत्र: STEM – mathematics" in mine
    shipped = show_prompt(render(item, "ne", chat=True))
    assert shipped == show_prompt(render(item, "ne", chat=True, task=TASKS["mcq_ne"])) and "विषय: STEM" in shipped
    with pytest.raises(NlueError, match="no exam prompt in 'ur'"):
        render(item, "ur", task=task)


def test_the_default_lines_are_valid_lines(tmp_path: Path) -> None:
    """The default answer and number lines (task_file/prompt_defaults.yaml) pass the checks a declared line gets."""
    from nlue.registry.label_prompts import DEFAULTS_PATH

    defaults = yaml.safe_load(DEFAULTS_PATH.read_text(encoding="utf-8"))

    def with_defaults(doc: dict) -> None:
        for language in ("en", "ne"):
            doc["prompts"][language]["number_line"] = defaults["number_line"][language]

    assert _problems(_variant(tmp_path, "nlue/stsb.yaml", with_defaults)) == []

    def with_answer_defaults(doc: dict) -> None:
        for language in ("en", "ne"):
            doc["prompts"][language]["answer_line"] = defaults["answer_line"][language]

    assert _problems(_variant(tmp_path, "nlue/mnli.yaml", with_answer_defaults)) == []
