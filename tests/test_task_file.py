"""Task files (issue 30, item 1): a user's task declared in YAML loads, registers and builds; a bad file gets
every problem reported at once; `nlue tasks new` starts a valid file for every kind."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from nlue.cli import main
from nlue.data.build import build_repo
from nlue.data.mapping import FieldMapping
from nlue.data.report import BuildOptions, TaskSources
from nlue.errors import NlueError
from nlue.registry.kinds import KINDS
from nlue.registry.profiles import LANGUAGE_PROFILES
from nlue.registry.task_file.checks import FORMATS
from nlue.registry.task_file.load import SHIPPED_DIR, check_file, load_task_file
from nlue.registry.task_file.problems import TaskFileError, key_path
from nlue.registry.task_file.schema import task_file_schema
from nlue.registry.tasks import TASKS, get_task, registered_task_files

# Our own Urdu sentences (a review each): (text, -1 negative / 0 neutral / 1 positive).
URDU_ROWS = [
    ("یہ کتاب بہت دلچسپ ہے۔", 1), ("سروس بہت سست اور خراب تھی۔", -1), ("دکان صبح نو بجے کھلتی ہے۔", 0),
    ("کھانا مزیدار تھا اور عملہ خوش اخلاق تھا۔", 1), ("یہ جوتے دو دن میں ٹوٹ گئے۔", -1), ("پارسل منگل کو پہنچا۔", 0),
    ("میں اس فون سے بہت خوش ہوں۔", 1), ("فلم بورنگ تھی، وقت ضائع ہوا۔", -1), ("یہ قمیض نیلے رنگ کی ہے۔", 0),
    ("ہوٹل کا کمرہ صاف اور آرام دہ تھا۔", 1), ("بیٹری ایک گھنٹے میں ختم ہو جاتی ہے۔", -1), ("بس ہر گھنٹے چلتی ہے۔", 0),
]  # fmt: skip
URDU_TASK = """\
name: ur_sentiment
title: Urdu review sentiment
description: Decide whether a short Urdu review is negative, neutral or positive.
languages: [ur]
kind: classification
category: single sentence
inputs:
  fields: [text]
label_field: label
labels: [negative, neutral, positive]
prompts:
  en:
    instruction: Is the opinion in this review negative, neutral or positive?
    field_labels: {text: Review}
    answer_cue: "Answer:"
    label_words: [negative, neutral, positive]
  ur:
    instruction: اس تبصرے میں رائے منفی ہے، غیر جانبدار ہے یا مثبت؟
    field_labels: {text: تبصرہ}
    answer_cue: "جواب:"
    label_words: [منفی, غیرجانبدار, مثبت]
    answer_line: {template: "صرف ان میں سے ایک لفظ لکھیں: {words}۔", separator: "، "}
data:
  train: {path: data/train.csv, columns: {text: review, label: sentiment}, labels: {"-1": negative, "0": neutral, "1": positive}}
  test: {path: data/test.csv, columns: {text: review, label: sentiment}, labels: {"-1": negative, "0": neutral, "1": positive}}
license: cc-by-4.0
sizes: {train: 9, test: 3, total: 12}
domains: [product and service reviews]
sources: [written by the nlue developers for this test]
"""


@pytest.fixture
def urdu_task(tmp_path: Path) -> Path:
    """The Urdu task file and its two CSV files, laid out as a user would."""
    (tmp_path / "data").mkdir()
    for name, rows in (("train", URDU_ROWS[:9]), ("test", URDU_ROWS[9:])):
        with open(tmp_path / "data" / f"{name}.csv", "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["review", "sentiment"])
            writer.writerows(rows)
    path = tmp_path / "ur_sentiment.yaml"
    path.write_text(URDU_TASK, encoding="utf-8")
    return path


def test_a_task_in_a_language_nlue_does_not_ship_loads_registers_and_builds(urdu_task: Path, tmp_path: Path) -> None:
    """Issue 30, item 1: an Urdu three-class task file becomes a task like the shipped ones, for one block."""
    task = load_task_file(urdu_task)
    assert (task.name, task.problem_type, task.label_names) == (
        "ur_sentiment", "classification", ("negative", "neutral", "positive"),
    )  # fmt: skip
    assert task.languages == ("ur",) and task.profile == "urdu" and task.license == "cc-by-4.0"
    assert task.benchmark == "ur_sentiment" and task.citation == "" and task.paper_results == {}
    assert task.metrics == ("accuracy", "macro_f1") and task.primary_metric == "macro_f1"
    assert task.data["train"].path == str((tmp_path / "data" / "train.csv").resolve())
    assert task.data["train"].format == "csv" and task.data["test"].labels["-1"] == "negative"
    template, words = task.kind.llm_template(task, "ur")
    assert words == ("منفی", "غیرجانبدار", "مثبت") and template.endswith("تبصرہ: {{ text }}\nجواب:")
    assert task.answer_line("ur").render(words) == "صرف ان میں سے ایک لفظ لکھیں: منفی، غیرجانبدار، مثبت۔"
    assert task.answer_line("en").template.startswith("Reply with exactly one")  # the shipped line, by default
    assert "ur_sentiment" not in TASKS
    with registered_task_files([urdu_task]) as tasks:
        assert tasks == (task,) and get_task("ur_sentiment") == task
        sources = {split: [Path(str(source.path))] for split, source in task.data.items()}
        mapping = FieldMapping(task.data["train"].columns, task.data["train"].labels)
        options = BuildOptions(name="ur_sentiment", license="cc-by-4.0", show_progress=False)
        result = build_repo([TaskSources(get_task("ur_sentiment"), sources, mapping)], tmp_path / "out", options)
        report = json.loads((result.repo_dir.parent / "ur_sentiment.report.json").read_text(encoding="utf-8"))
        assert sum(split["kept"] for split in report["configs"]["ur_sentiment"]["splits"].values()) == 12
    assert "ur_sentiment" not in TASKS  # registered for the block only


BAD_TASK = """\
name: Bad-Name
version: 1.0
title: Broken sentiment
description: A file with many mistakes.
languages: [urdu]
profile: arabic
kind: classification
inputs:
  fields: [text]
  second: [context]
label_field: label
labels: [negative, positive, negative]
primary_metric: pearson
prompts:
  ur:
    instruction: کیا رائے مثبت ہے؟
    field_labels: {text: متن, title: عنوان}
    answer_cue: "جواب:"
    label_words: [منفی, مثبت]
data:
  train: {path: missing.csv, labels: {"1": great}}
  dev: {hub: owner/x}
score_range: [0, 5]
colour: blue
"""
# (line, key path, words the message must hold) of every problem in BAD_TASK.
BAD_PROBLEMS = [
    (1, "name", "lower-case letters"),
    (2, "version", "put quotes around it"),
    (5, "languages[0]", "ISO 639"),
    (6, "profile", "nepali, urdu, plain"),
    (10, "inputs.second[0]", "not one of the input fields"),
    (12, "labels[2]", "listed twice"),
    (13, "primary_metric", "computes accuracy, macro_f1"),
    (17, "prompts.ur.field_labels.title", "not a field this prompt shows"),
    (19, "prompts.ur.label_words", "2 label words for 3 labels"),
    (21, "data.train.path", "no file missing.csv"),
    (21, "data.train.labels.1", "'great' is not a label"),
    (22, "data.dev", "train, validation, test"),
    (23, "score_range", "applies to regression tasks"),
    (24, "colour", "unknown key"),
]


def test_every_problem_of_a_bad_file_is_reported_at_once(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 30, item 1: fourteen problems of nine sorts, each with its file, line, key path and expectation."""
    path = tmp_path / "bad.yaml"
    path.write_text(BAD_TASK, encoding="utf-8")
    problems = check_file(path)
    found = {(p.line, key_path(p.path)) for p in problems}
    for line, key, words in BAD_PROBLEMS:
        assert (line, key) in found, (line, key)
        assert any(words in p.message for p in problems if (p.line, key_path(p.path)) == (line, key)), key
    assert all(p.file == str(path) for p in problems)
    with pytest.raises(TaskFileError) as caught:
        load_task_file(path)
    assert len(caught.value.problems) == len(problems) >= len(BAD_PROBLEMS)
    assert main(["tasks", "validate", str(path)]) == 2
    captured = capsys.readouterr()
    assert f"{path}:19: prompts.ur.label_words: 2 label words for 3 labels" in captured.out
    assert "1 of 1 task file(s) have problems" in captured.err


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("name: a\nkind: [classification\n", 3, "YAML syntax"),
        ("name: a\nname: b\n", 2, "given twice (first on line 1)"),
        ("base: &b {x: 1}\nname: *b\n", 2, "aliases"),
        ("name: !!python/object:os.system x\n", 1, "tag"),
        ("- name: a\n", 1, "expected a mapping"),
    ],
    ids=["syntax", "repeated-key", "alias", "tag", "not-a-mapping"],
)
def test_unsafe_or_broken_yaml_is_named_with_its_line(tmp_path: Path, text: str, line: int, words: str) -> None:
    """Issue 30, item 1: safe_load's types only; a syntax error, a repeated key or an alias names its line."""
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    problems = check_file(path)
    assert any(p.line == line and words in p.message for p in problems), [str(p) for p in problems]


def test_a_file_too_large_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text("name: x\n" + "# padding\n" * 120_000, encoding="utf-8")
    assert "at most" in check_file(path)[0].message


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("language", ["en", "ur", "si"])
def test_new_starts_a_file_that_validates_for_every_kind(tmp_path: Path, kind: str, language: str, capsys) -> None:
    """Issue 30, item 1: `nlue tasks new --kind K` writes a commented file that loads as it stands."""
    out = tmp_path / f"{kind}.yaml"
    assert (
        main(["tasks", "new", "--kind", kind, "--name", f"my_{kind}", "--language", language, "--out", str(out)]) == 0
    )
    assert check_file(out) == [] and "#" in out.read_text(encoding="utf-8")
    task = load_task_file(out)
    assert task.problem_type == kind and task.languages == (language,)
    assert task.profile == {"en": "plain", "ur": "urdu", "si": "plain"}[language]
    assert main(["tasks", "new", "--kind", kind, "--out", str(out)]) == 2  # never overwrites
    assert main(["tasks", "validate", str(out)]) == 0 and capsys.readouterr().out.endswith(": ok\n")


def test_a_shipped_name_is_refused_unless_it_is_the_shipped_task(tmp_path: Path) -> None:
    """Issue 30, item 1: a user's task cannot take a shipped task's name; the shipped file itself is welcome."""
    with registered_task_files([SHIPPED_DIR / "nlue" / "sa.yaml"]) as tasks:
        assert tasks == (TASKS["sa"],) and len(TASKS) == 15
    with registered_task_files([SHIPPED_DIR / "mcq"]) as tasks:
        assert [t.name for t in tasks] == ["mcq_ne", "mcq_ur"]  # the benchmark file and the files it lists: once
    path = tmp_path / "sa.yaml"
    path.write_text(URDU_TASK.split("data:")[0].replace("name: ur_sentiment", "name: sa"), encoding="utf-8")
    with pytest.raises(NlueError, match="the task name 'sa' is taken"), registered_task_files([path]):
        pass
    assert TASKS["sa"].task_file.endswith("nlue/sa.yaml")


def test_prompts_are_written_out_in_every_file(tmp_path: Path) -> None:
    """Issue 30, item 4: `prompts: shipped` (once the package's own files' way to take prompts kept in Python)
    is refused wherever the file is: every task file, the shipped ones included, writes its prompts out."""
    path = tmp_path / "t.yaml"
    path.write_text(URDU_TASK.split("prompts:")[0] + "prompts: shipped\n", encoding="utf-8")
    [problem] = check_file(path)
    assert problem.path == ("prompts",) and "expected a mapping" in problem.message


def test_the_schema_names_what_the_code_knows() -> None:
    """The published schema's lists are the code's: kinds, profiles, splits, file formats."""
    defs = task_file_schema()["$defs"]
    task = defs["task"]["properties"]
    assert task["kind"]["enum"] == list(KINDS)
    assert task["profile"]["enum"] == list(LANGUAGE_PROFILES)
    assert set(task["data"]["propertyNames"]["enum"]) == {s for k in KINDS.values() for s in k.splits}
    assert defs["split_source"]["properties"]["format"]["enum"] == list(FORMATS.values())
    for kind in KINDS.values():
        assert set(kind.declares) <= set(task), kind.name


def test_every_shipped_task_file_validates() -> None:
    files = sorted(SHIPPED_DIR.glob("*/*.yaml"))
    assert len(files) == 15 + 3  # the tasks and the three benchmark files
    assert [str(problem) for path in files for problem in check_file(path)] == []


def test_the_reference_page_lists_every_key_of_the_schema() -> None:
    """The task-file page is generated from the shipped schema (docs/hooks.py), so it names every key."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_hooks", Path(__file__).resolve().parents[1] / "docs/hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = hooks.task_file_schema_reference()
    defs = task_file_schema()["$defs"]
    for name in ("task", "prompt", "wording", "answer_line", "number_line", "exam", "split_source", "benchmark_file"):
        for key in defs[name]["properties"]:
            assert f"| `{key}` |" in page, (name, key)
    assert '"$schema"' in page  # the schema itself, as shipped


def test_a_users_benchmark_file_and_refusals_register_all_or_nothing(urdu_task: Path, tmp_path: Path) -> None:
    """Issue 30, item 1: a benchmark file lists task files and holds inline tasks; a clash registers nothing."""
    inline = URDU_TASK.split("data:")[0].replace("name: ur_sentiment", "name: ur_sentiment_short")
    bench = tmp_path / "bench.yaml"
    indented = "\n".join(("  - " if i == 0 else "    ") + line for i, line in enumerate(inline.splitlines()))
    bench.write_text(
        "benchmark: {name: urdu_reviews, title: Urdu reviews, citation: '@misc{ours}'}\n"
        f"tasks:\n  - ur_sentiment.yaml\n{indented}\n",
        encoding="utf-8",
    )
    with registered_task_files([tmp_path]) as tasks:  # the folder: the listed file is taken once
        assert [t.name for t in tasks] == ["ur_sentiment", "ur_sentiment_short"]
        assert {t.benchmark for t in tasks} == {"urdu_reviews"} and {t.citation for t in tasks} == {"@misc{ours}"}
    twin = tmp_path / "twin" / "ur_sentiment.yaml"
    twin.parent.mkdir()
    twin.write_text(inline.replace("name: ur_sentiment_short", "name: ur_sentiment"), encoding="utf-8")
    with pytest.raises(NlueError, match="declared by more than one"), registered_task_files([urdu_task, twin]):
        pass
    clash = tmp_path / "clash.yaml"
    clash.write_text(inline.replace("name: ur_sentiment_short", "name: other\nbenchmark: nlue"), encoding="utf-8")
    with pytest.raises(NlueError, match="benchmark name 'nlue' is taken"), registered_task_files([clash]):
        pass
    assert "other" not in TASKS and "ur_sentiment" not in TASKS
