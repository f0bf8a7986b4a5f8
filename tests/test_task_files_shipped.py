"""The shipped tasks, declared as task files, are exactly the tasks the Python declarations were (issue 30, item 4).

``tests/data/registry_snapshot.json`` holds every field of every shipped task as the Python
registry declared it before the move (see ``tests/registry_snapshot.py``). The tasks loaded
from their task files must match it field by field, type by type and in order; the sample
builds made from the snapshot's tasks and from the loaded ones must be byte-identical, and
so must every prompt a language model is given.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import yaml

from nlue.data.build import build_repo
from nlue.data.discover import task_sources_from_folder
from nlue.data.report import BuildOptions
from nlue.data.sample import sample_data_dir
from nlue.registry import benchmarks
from nlue.registry.spec import TaskSpec
from nlue.registry.task_file.load import SHIPPED_DIR, check_file, load_task_file
from nlue.registry.task_file.schema import schema_problems
from nlue.registry.tasks import TASKS, registered_task_files

from .prompt_snapshot import PROMPT_SNAPSHOT, prompt_snapshot, python_prompts
from .registry_snapshot import SNAPSHOT, canonical, registry_snapshot, revive

EXPECTED = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
PROMPTS = json.loads(PROMPT_SNAPSHOT.read_text(encoding="utf-8"))
# Declared changes of class, nothing else: neDIOM's primary-metric note was a subclass's override
# (nlue.registry.nediom.IdiomSpec); a task file declares it as data (TaskSpec.primary_metric_note).
CLASS_NOW = {"nediom": "TaskSpec"}


@dataclass(frozen=True)
class _IdiomSpecBefore(TaskSpec):
    """The class neDIOM was declared with before issue 30, as it was: its primary note overridden."""

    @property
    def primary_note(self) -> str:
        return EXPECTED["tasks"]["nediom"]["properties"]["primary_note"]

    @property
    def primary_is_paper_defined(self) -> bool:
        return True


def _old_tasks() -> dict[str, TaskSpec]:
    """The snapshot's tasks as Python values (the classes they had then)."""
    tasks = {}
    for name, entry in EXPECTED["tasks"].items():
        fields = {key: revive(value) for key, value in entry["fields"].items()}
        if entry["class"] == "IdiomSpec":
            tasks[name] = _IdiomSpecBefore(**fields)
        else:
            from nlue.registry.mcq import ExamSpec

            tasks[name] = (ExamSpec if entry["class"] == "ExamSpec" else TaskSpec)(**fields)
    return tasks


def test_every_shipped_task_has_every_field_it_had() -> None:
    """Issue 30, item 4: each field (value, type, order), each derived property, the benchmarks and the lists."""
    fields_of = {name: list(entry["fields"]) for name, entry in EXPECTED["tasks"].items()}
    now = registry_snapshot(fields_of)
    for name, entry in EXPECTED["tasks"].items():
        assert now["tasks"][name]["class"] == CLASS_NOW.get(name, entry["class"]), name
        now["tasks"][name]["class"] = entry["class"]
    assert list(now["tasks"]) == list(EXPECTED["tasks"])
    for name in EXPECTED["tasks"]:
        for part in ("fields", "properties"):
            for key, value in EXPECTED["tasks"][name][part].items():
                assert now["tasks"][name][part][key] == value, f"{name}.{key}"
    assert now == EXPECTED


def test_the_snapshot_revives_to_equal_tasks() -> None:
    """The comparison above is not vacuous: the snapshot revives into tasks equal to the Python ones."""
    old = _old_tasks()
    for name, task in TASKS.items():
        fields = EXPECTED["tasks"][name]["fields"]
        assert {k: canonical(getattr(old[name], k)) for k in fields} == {k: canonical(getattr(task, k)) for k in fields}


def _digests(root: Path) -> dict[str, str]:
    """Every file a build wrote (Parquet shards, card, report, rejects), by content."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _build(out: Path, name: str, configs: list[str] | None) -> dict[str, str]:
    options = BuildOptions(name=name, is_sample=True, license="apache-2.0", show_progress=False)
    build_repo(task_sources_from_folder(sample_data_dir(), configs), out, options)
    return _digests(out)


@pytest.mark.parametrize(
    ("name", "configs"), [("nlue", None), ("mcq", ["mcq_ne", "mcq_ur"]), ("nediom", ["nediom"])], ids=str
)
def test_sample_builds_are_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, configs: list[str] | None
) -> None:
    """Issue 30, item 4: the same Parquet files, card and report from the snapshot's tasks and the loaded ones."""
    now = _build(tmp_path / "now", name, configs)
    for task_name, task in _old_tasks().items():
        monkeypatch.setitem(benchmarks._TASKS, task_name, task)
    before = _build(tmp_path / "before", name, configs)
    assert before == now and any(path.endswith(".parquet") for path in now)


def test_prompts_are_identical() -> None:
    """Issue 30, item 4: every log-likelihood prompt template and its label words, per task and language."""
    old = _old_tasks()
    compared = 0
    for name, task in TASKS.items():
        for language in old[name].prompts:
            assert task.kind.llm_template(task, language) == old[name].kind.llm_template(old[name], language)
            compared += 1
    # NLUE's ten classification tasks, stsb (by generation) and the two exams, in two languages each
    assert compared == 2 * 11 + 2 + 2


def test_every_generation_prompt_is_identical(sample_build, exam_build, nediom_build) -> None:
    """Issue 30, item 4: every prompt a model is sent (NLUE by generation with its answer or number line and by
    log-likelihood, k-shot included; the exams as `nlue llm mcq --show-prompt` prints them, both prompt languages,
    0-3 shots, chat and plain, and their log-likelihood contexts; neDIOM's eight variants, scored and generated) is
    the one captured from the Python-kept prompts before they moved (tests/prompt_snapshot.py)."""
    expected = PROMPTS["rendered"]
    now = prompt_snapshot(sample_build.repo_dir, exam_build.repo_dir, nediom_build.repo_dir)
    assert list(now) == list(expected)
    for key, prompt in expected.items():
        assert now[key] == prompt, key


def test_the_prompt_names_other_modules_import_hold_what_they_held() -> None:
    """Issue 30, item 4: ANSWER_LINES, NUMBER_LINES, MCQ_PROMPTS and NEDIOM_PROMPTS, now read from task files,
    are the values the Python declarations had (compared as Python values: a class may have a new home)."""
    now = python_prompts()
    for name, value in PROMPTS["python"].items():
        assert revive(now[name]) == revive(value), name
    # Each shipped task's own lines, declared in its file, are the package lines its generation prompts used.
    answer_lines, number_lines = revive(PROMPTS["python"]["ANSWER_LINES"]), revive(PROMPTS["python"]["NUMBER_LINES"])
    declared = 0
    for task in TASKS.values():
        for language in (*task.prompts, *task.idiom_prompts):
            if "answer_line" in task.kind.prompt_keys:
                assert task.answer_lines[language] == answer_lines[language], (task.name, language)
                declared += 1
            if "number_line" in task.kind.prompt_keys:
                assert task.number_lines[language] == number_lines[language], (task.name, language)
                declared += 1
    assert declared == 2 * (10 + 1 + 1)  # NLUE's ten classification tasks, stsb and neDIOM, in English and Nepali


SHIPPED_TASK_FILES = sorted(path for path in SHIPPED_DIR.glob("*/*.yaml") if path.name != "benchmark.yaml")


@pytest.mark.parametrize("path", SHIPPED_TASK_FILES, ids=lambda path: path.stem)
def test_a_copy_of_a_shipped_task_file_validates_and_loads_anywhere(tmp_path: Path, path: Path) -> None:
    """Issue 30, item 4: a shipped task file copied out of the package (as a built dataset carries it), unchanged,
    validates there and declares the very task the registry holds: it leans on nothing kept in the package."""
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    assert [str(problem) for problem in check_file(copy)] == []
    shipped = TASKS[path.stem]
    assert replace(load_task_file(copy), citation=shipped.citation) == shipped
    with registered_task_files([copy]) as tasks:
        assert tasks == (shipped,)
    assert copy.read_bytes() == path.read_bytes()


def test_every_shipped_prompt_is_written_in_its_task_file() -> None:
    """Issue 30, item 4: each shipped task a model is asked declares its prompts in its file, in full (no
    `prompts: shipped`, which no file may say any more), and the registry's prompts are the file's."""
    for path in SHIPPED_TASK_FILES:
        declared = yaml.safe_load(path.read_text(encoding="utf-8")).get("prompts")
        task = TASKS[path.stem]
        if not task.kind.takes_prompts:
            assert declared is None, path.name
            continue
        assert isinstance(declared, dict) and set(declared) == {"en", task.languages[0]}, path.name
        for language, prompt in declared.items():
            if task.prompts:
                assert task.prompts[language].instruction == prompt["instruction"], (path.name, language)
            else:  # neDIOM's, read by its evaluators in their own shape
                assert task.idiom_prompts[language].instruction_with_idiom == prompt["instruction"], path.name
    bare = yaml.safe_load((SHIPPED_DIR / "nlue" / "sa.yaml").read_text(encoding="utf-8"))
    assert [path for path, _ in schema_problems({**bare, "prompts": "shipped"})] == [("prompts",)]
