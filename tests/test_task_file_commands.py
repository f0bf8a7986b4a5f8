"""Issue 30, item 2: a task file is taken by every command, before its options are parsed, and a build carries it.

The tasks are nlue's strangers (tests/user_tasks.py): an Urdu review-sentiment task and a Nepali
five-topic news task, each a task file beside its own data files. Every command is run as a user runs
it (``nlue.cli.main``); between commands the registry holds only the shipped tasks again.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from nlue.cli import main
from nlue.registry.task_file.load import check_file, load_file
from nlue.registry.tasks import BENCHMARKS, TASKS
from tests.user_task_files import DROPPED, TOPICS, topic_rows, write_ne_topic, write_ur_sentiment

SHIPPED = 15
ENV_VARIABLE = "NLUE_TASK_FILES"


@pytest.fixture(scope="module")
def task_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("user-tasks")
    return {"ur_sentiment": write_ur_sentiment(folder), "ne_topic": write_ne_topic(folder)}


@pytest.fixture(scope="module")
def builds(task_files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each task built from the data its file declares: `nlue build --task-file FILE --out DIR`."""
    out = tmp_path_factory.mktemp("user-builds")
    for path in task_files.values():
        assert main(["build", "--task-file", str(path), "--out", str(out), "-q"]) == 0
    return {name: out / name for name in task_files}


@pytest.fixture(autouse=True)
def _registry_is_the_shipped_one_again() -> None:
    yield
    assert len(TASKS) == SHIPPED and set(BENCHMARKS) == {"nlue", "mcq", "nediom"}


def test_the_command_line_and_the_environment_are_read_in_every_spelling(tmp_path: Path) -> None:
    """Issue 30, item 2: --task-file and --task_file, with a space or '=', repeated; datasets and names too."""
    from nlue.registry.task_file.activate import activated_task_files, scan_command_line

    argv = ["baseline", "--task-file", "a.yaml", "--task_file=b.yaml", "--dataset", "build/x", "--tasks", "sa",
            "ne_topic,rte", "--release=me/y", "--task_file", "c", "--", "--task-file", "not-an-option.yaml"]  # fmt: skip
    scanned = scan_command_line(argv)
    assert scanned.task_files == ("a.yaml", "b.yaml", "c")
    assert scanned.datasets == ("build/x", "me/y") and scanned.names == ("sa", "ne_topic", "rte")
    assert scan_command_line(["sweep", "r.yaml", "--dataset", "ne_topic=build/ne_topic"]).datasets == (
        "build/ne_topic",
    )
    first, second = write_ur_sentiment(tmp_path / "one"), write_ne_topic(tmp_path / "two")
    with activated_task_files(environ={ENV_VARIABLE: f"{first}{os.pathsep}{os.pathsep}{second.parent}"}) as tasks:
        assert [t.name for t in tasks] == ["ur_sentiment", "ne_topic"] and "ne_topic" in TASKS


def test_every_problem_of_every_task_file_is_reported_and_nothing_is_registered(
    task_files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30, item 2: a bad file, a missing file and a good one: exit 2 naming both problems, before parsing."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: Bad-Name\ntitle: x\ndescription: x\nlanguages: [ur]\nkind: classification\n", "utf-8")
    argv = ["baseline", "--task-file", str(task_files["ur_sentiment"]), "--task-file", str(bad),
            "--task-file", str(tmp_path / "missing.yaml"), "--tasks", "ur_sentiment"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("nlue baseline: error: ") and "usage:" not in err  # refused before the parser ran
    assert f"{bad}:1: name: " in err and "label_field: missing" in err
    assert f"{tmp_path / 'missing.yaml'}: (top): no such task file or folder" in err
    monkeypatch.setenv(ENV_VARIABLE, str(tmp_path / "gone.yaml"))
    assert main(["tasks"]) == 2
    assert f"gone.yaml: (top): named by {ENV_VARIABLE}, but there is no such file" in capsys.readouterr().err


def test_a_task_file_builds_with_its_declared_data_and_the_repo_carries_it(builds: dict[str, Path]) -> None:
    """Issue 30, item 2: `nlue build --task-file` reads each split with its own maps; the file goes with the data."""
    import datasets

    repo = builds["ne_topic"]
    carried = repo / "tasks" / "ne_topic.yaml"
    declared = yaml.safe_load(carried.read_text(encoding="utf-8"))
    assert "data" not in declared and declared["benchmark"] == "ne_topic" and declared["license"] == "cc-by-sa-4.0"
    assert check_file(carried) == []
    report = json.loads((repo.parent / "ne_topic.report.json").read_text(encoding="utf-8"))
    assert report["task_files"] == ["tasks/ne_topic.yaml"]
    splits = report["configs"]["ne_topic"]["splits"]
    assert splits["train"]["dropped_by_label_map"] == {DROPPED[1]: 1} and report["rejects"] == 0
    data = datasets.load_dataset(str(repo), "ne_topic")  # the carried file does not get in a load's way
    assert data["test"].features["label"].names == list(TOPICS)
    assert [(row["text"], TOPICS[row["label"]]) for row in data["test"]] == topic_rows("test")
    assert data["train"].num_rows + data["validation"].num_rows == len(topic_rows("train"))


def test_the_card_says_what_the_task_file_declares(builds: dict[str, Path]) -> None:
    """Issue 30, item 2: a user task's card: its language, licence, citation, description; declared, not a paper's."""
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(builds["ne_topic"] / "README.md")
    assert card.data.language == ["ne"] and card.data.license == "cc-by-sa-4.0"
    assert card.data.pretty_name == "Nepali news topics"
    text = card.text
    assert "Tell which of five topics a short Nepali news headline is about." in text
    assert "@misc{ne_topic_tests," in text and "user-declared task" in text
    assert "- `tasks/ne_topic.yaml`" in text and "Metrics (declared)" in text
    assert "NLUE gathers twelve" not in text and "(paper)" not in text and "the paper's" not in text
    urdu = DatasetCard.load(builds["ur_sentiment"] / "README.md")
    assert urdu.data.language == ["ur"] and urdu.data.license == "cc-by-4.0"
    assert "No citation is declared in the task file(s)." in urdu.text and "`urdu` language profile" in urdu.text


def test_a_source_folder_wins_for_the_splits_it_holds(task_files: dict[str, Path], tmp_path: Path) -> None:
    """Issue 30, item 2: --source's <task>/<split> file replaces that split; the declared files give the others."""
    import datasets

    source = tmp_path / "raw" / "ne_topic"
    source.mkdir(parents=True)
    rows = [{"text": "नयाँ शैक्षिक क्यालेन्डर सार्वजनिक भयो।", "label": "education"},
            {"text": "भोलि बिहान हुस्सु लाग्ने अनुमान छ।", "label": "weather"}]  # fmt: skip
    (source / "test.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    argv = ["build", "--task-file", str(task_files["ne_topic"]), "--source", str(source.parent), "--out",
            str(tmp_path / "out"), "--name", "topics", "-q"]  # fmt: skip
    assert main(argv) == 0
    data = datasets.load_dataset(str(tmp_path / "out" / "topics"), "ne_topic")
    assert data["test"]["text"] == [r["text"] for r in rows]
    assert data["train"].num_rows + data["validation"].num_rows == len(topic_rows("train"))


def test_a_hub_split_offline_is_a_clear_error_and_nothing_is_written(
    task_files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, item 2: a split declared on the Hub is fetched online; offline, the error names it and what to do."""
    folder = task_files["ne_topic"].parent
    text = task_files["ne_topic"].read_text(encoding="utf-8")
    hub = text.replace(
        "    path: data/news_test.jsonl\n", "    hub: someone/nepali-news\n    config: headlines\n    split: test\n"
    )
    path = folder / "ne_topic_hub.yaml"
    path.write_text(hub.replace("name: ne_topic\n", "name: ne_topic_hub\n"), encoding="utf-8")
    assert main(["build", "--task-file", str(path), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert (
        "task 'ne_topic_hub': its test split comes from the Hub dataset someone/nepali-news (config headlines)" in err
    )
    assert "declare it as data: test: {path: FILE}" in err
    assert not (tmp_path / "out" / "ne_topic_hub").exists()


def test_a_benchmark_files_tasks_are_carried_with_its_header(task_files: dict[str, Path], tmp_path: Path) -> None:
    """Issue 30, item 2: two tasks of one benchmark file build into one repo that carries both and the header."""
    folder = tmp_path / "bench"
    shutil.copytree(task_files["ne_topic"].parent, folder)
    inline = (folder / "ne_topic.yaml").read_text(encoding="utf-8").replace("name: ne_topic", "name: ne_topic_copy")
    indented = "\n".join(("  - " if i == 0 else "    ") + line for i, line in enumerate(inline.splitlines()))
    bench = folder / "news.yaml"
    bench.write_text("benchmark: {name: ne_news, title: Nepali news tasks}\ntasks:\n  - ne_topic.yaml\n"
                     f"{indented}\n", encoding="utf-8")  # fmt: skip
    assert main(["build", "--task-file", str(bench), "--out", str(tmp_path / "out"), "-q"]) == 0
    carried = tmp_path / "out" / "ne_news" / "tasks"
    assert sorted(p.name for p in carried.iterdir()) == [
        "benchmark-ne_news.yaml",
        "ne_topic.yaml",
        "ne_topic_copy.yaml",
    ]
    loaded = load_file(carried / "benchmark-ne_news.yaml")
    assert loaded.benchmark.title == "Nepali news tasks" and [t.name for t in loaded.tasks] == ["ne_topic",
                                                                                              "ne_topic_copy"]  # fmt: skip


def test_a_built_dataset_is_enough_to_know_its_task(
    builds: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, item 2: `nlue baseline --dataset REPO --tasks ne_topic`, with no --task-file: the repo carries it."""
    results = tmp_path / "results"
    argv = ["baseline", "--dataset", str(builds["ne_topic"]), "--tasks", "ne_topic", "--results-dir", str(results),
            "--bootstrap", "0", "-q"]  # fmt: skip
    assert main(argv) == 0
    result = json.loads((results / "baseline__tfidf" / "ne_topic.json").read_text(encoding="utf-8"))
    assert result["task"] == "ne_topic" and result["dataset"]["is_sample"] is False
    assert (results / "baseline__tfidf" / "ne_topic.predictions.jsonl").read_text(encoding="utf-8").count("\n") == 10
    capsys.readouterr()
    assert main(["baseline", "--tasks", "ne_topic", "--results-dir", str(results)]) == 2  # neither file nor dataset
    assert "a task of your own: --task-file FILE" in capsys.readouterr().err
    assert main(["baseline", "--dataset", str(builds["ne_topic"]), "--tasks", "sa", "--results-dir", str(results)]) == 2
    assert f"{builds['ne_topic']} has no config 'sa'; its configs: ne_topic" in capsys.readouterr().err


def test_the_environment_names_task_files_for_every_command(
    task_files: dict[str, Path], builds: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Issue 30, item 2: NLUE_TASK_FILES, as the Space and scripts set it; and a dataset without its file."""
    bare = tmp_path / "bare"
    shutil.copytree(builds["ur_sentiment"], bare)
    shutil.rmtree(bare / "tasks")  # a copy that does not carry the file: the environment names it
    monkeypatch.setenv(ENV_VARIABLE, str(task_files["ur_sentiment"]))
    argv = ["baseline", "--dataset", str(bare), "--tasks", "ur_sentiment", "--results-dir", str(tmp_path / "r"), "-q"]
    assert main(argv) == 0
    assert main(["tasks"]) == 0 and "ur_sentiment" in capsys.readouterr().out


def test_a_hub_datasets_task_file_is_fetched_and_offline_the_user_is_told(
    builds: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, caplog
) -> None:
    """Issue 30, item 2: for a Hub id, tasks/<name>.yaml of each task asked for is fetched (here from a stand-in for
    huggingface_hub's download, as no test reaches the Hub); offline, a warning says to pass --task-file."""
    argv = ["export", "lm-eval", "--dataset", "me/ne_topic", "--tasks", "ne_topic", "--out", str(tmp_path / "x")]
    assert main(argv) == 2  # offline, nothing cached: the task stays unknown, and the user is told why
    assert "the dataset me/ne_topic may carry its task file (tasks/ne_topic.yaml)" in caplog.text
    assert "Pass the task file: --task-file FILE" in caplog.text
    assert "'ne_topic' is not a task this command takes" in capsys.readouterr().err
    asked = []

    def download(repo_id: str, filename: str, repo_type: str | None = None, **_: object) -> str:
        asked.append((repo_id, filename, repo_type))
        return str(builds["ne_topic"] / filename)

    monkeypatch.setattr("huggingface_hub.hf_hub_download", download)
    assert main(argv) == 0
    assert asked == [("me/ne_topic", "tasks/ne_topic.yaml", "dataset")]
    exported = yaml.safe_load((tmp_path / "x" / "nlue_ne_topic_ne.yaml").read_text(encoding="utf-8"))
    assert exported["dataset_path"] == "me/ne_topic" and exported["doc_to_choice"][0] == "राजनीति"
    # A reader that names no task (the Space, given a dataset): every file the repo lists under tasks/.
    from nlue.registry.task_file.activate import activated_task_files

    listing = ["README.md", "ne_topic/test-00000-of-00001.parquet", "tasks/ne_topic.yaml"]
    monkeypatch.setattr("huggingface_hub.HfApi.list_repo_files", lambda self, repo_id, repo_type=None: listing)
    with activated_task_files(datasets=["me/ne_topic"]) as known:
        assert [task.name for task in known] == ["ne_topic"] and TASKS["ne_topic"].license == "cc-by-sa-4.0"


def test_push_checks_the_task_files_a_build_carries_before_anything_is_sent(
    builds: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, item 2 (leftover 4): `nlue push --dry-run` of a build whose carried task files were edited since
    (or broken) refuses with every problem of every file, exit 2, before it plans or shows anything; a sound build
    says its carried files were checked, and lm-eval's note knows the carried task."""
    good = ["push", str(builds["ne_topic"]), "--repo-id", "me/ne_topic", "--dry-run"]
    assert main(good) == 0
    out = capsys.readouterr().out
    assert "task files carried (tasks/): 1, each checked" in out and "lm-evaluation-harness runs ne_topic" in out
    repo = tmp_path / "ne_topic"
    shutil.copytree(builds["ne_topic"], repo)
    carried = repo / "tasks" / "ne_topic.yaml"
    text = carried.read_text(encoding="utf-8")
    carried.write_text(text.replace("kind: classification", "kind: clasification"), encoding="utf-8")
    (repo / "tasks" / "another.yaml").write_text("name: Another\nkind: classification\n", encoding="utf-8")
    assert main(["push", str(repo), "--repo-id", "me/ne_topic", "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before the plan is shown
    err = captured.err
    assert f"{repo / 'tasks' / 'ne_topic.yaml'}:" in err and 'kind: got "clasification"' in err
    assert f"{repo / 'tasks' / 'another.yaml'}:1: name: " in err and "label_field: missing" in err
    assert err.count("\n  ") == len(check_file(carried)) + len(check_file(repo / "tasks" / "another.yaml"))
