"""Shared fixtures: one build of the embedded sample per test session, small source files."""

from __future__ import annotations

import csv
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

# One thread per process, set before anything imports torch, and inherited by every command a test starts
# (nlue, transformers serve, torchrun, the sweep's cells). The models here are tiny, so a second thread buys
# nothing, while on a busy 2-core machine (the test command runs two workers, other people run theirs) the
# threads of each process spin waiting for each other: measured with 10 requests of 256 new tokens to the
# README's `transformers serve --continuous-batching` at a load average of about 4, the server took 7.7 s of
# CPU with its default threads and 0.9 s with one. A run that sets OMP_NUM_THREADS itself keeps its own value.
os.environ.setdefault("OMP_NUM_THREADS", "1")
if "torch" in sys.modules:  # a plugin imported it before this file: the variable came too late for it
    sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

from nlue.data.build import build_repo
from nlue.data.discover import task_sources_from_folder
from nlue.data.report import BuildOptions, BuildResult
from nlue.data.sample import sample_data_dir

SHARED = Path(__file__).resolve().parents[1].parent / "shared"

# Hypothesis keeps its example database and caches under ./.hypothesis by default, which is the repository
# when pytest runs from it; the docs test fails on anything a run adds there (written late, on another
# thread), so the suite keeps them in the temporary folder instead. HYPOTHESIS_STORAGE_DIRECTORY still wins.
if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "nlue-tests-hypothesis")


# The answer cache (nlue.lm.answer_cache) is shared by every run of a user: the suite never reads or fills the
# user's own (~/.cache/nlue). A folder of the session's stands in for it before anything runs (fixtures of a
# session or module run before the per-test one below), and each test gets a cache of its own, so that no test
# is answered from another's answers. Commands a test starts inherit the variable.
_SESSION_CACHE = tempfile.TemporaryDirectory(prefix="nlue-test-cache-")
os.environ["NLUE_ANSWER_CACHE"] = _SESSION_CACHE.name


@pytest.fixture(autouse=True)
def _answer_cache_per_test(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each test's answers in its own cache folder (``$NLUE_ANSWER_CACHE``); the folder, for tests that read it."""
    folder = tmp_path_factory.mktemp("answer-cache")
    monkeypatch.setenv("NLUE_ANSWER_CACHE", str(folder))
    return folder


@pytest.fixture
def answer_cache(_answer_cache_per_test: Path) -> Path:
    """The file of this test's answer cache (which commands use unless told otherwise)."""
    return _answer_cache_per_test / "answers.sqlite"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach the Hub."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.delenv("NLUE_RESULTS_DIR", raising=False)  # a user's own results folder never leaks into a test


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models run fastest on one thread, and the test machine may be shared."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    out = tmp_path_factory.mktemp("sample-build")
    options = BuildOptions(is_sample=True, license="apache-2.0", show_progress=False)
    return build_repo(task_sources_from_folder(sample_data_dir()), out, options)


@pytest.fixture(scope="session")
def exam_build(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """The embedded sample exams (mcq_ne, mcq_ur) built once: their own benchmark, so their own repo."""
    out = tmp_path_factory.mktemp("exam-build")
    options = BuildOptions(name="mcq", is_sample=True, license="apache-2.0", show_progress=False)
    return build_repo(task_sources_from_folder(sample_data_dir(), ["mcq_ne", "mcq_ur"]), out, options)


@pytest.fixture(scope="session")
def nediom_build(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """The embedded neDIOM sample built once: its own benchmark, so its own repo."""
    from nlue.registry.nediom import NEDIOM_TASKS

    task = NEDIOM_TASKS[0]
    out = tmp_path_factory.mktemp("nediom-build")
    options = BuildOptions(name=task.benchmark, is_sample=True, license="apache-2.0", show_progress=False)
    return build_repo(task_sources_from_folder(sample_data_dir(), [task.name]), out, options)


def _write_csv(path: Path, header: list[str], rows: Iterable[Iterable[object]], delimiter: str = ",") -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _write_jsonl(path: Path, records: Iterable[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def write_csv() -> Callable[..., Path]:
    return _write_csv


@pytest.fixture
def write_jsonl() -> Callable[..., Path]:
    return _write_jsonl


# Short Nepali sentences of our own for synthetic sources.
SENTENCES = [
    "आजको खाना एकदमै मीठो थियो।",
    "बस समयमै आइपुगेन।",
    "नयाँ पुस्तक पढ्दा रमाइलो लाग्यो।",
    "बजारमा तरकारी महँगो भयो।",
    "विद्यालयको नतिजा राम्रो आयो।",
    "सडकमा धेरै धुलो उडिरहेको छ।",
    "चलचित्रको कथा कमजोर थियो।",
    "गाउँमा नयाँ पुल बन्यो।",
    "पसलेले राम्रो व्यवहार गरे।",
    "हिजो रातभरि पानी पर्‍यो।",
    "अस्पतालमा लामो लाइन थियो।",
    "खेलमा हाम्रो टोलीले जित्यो।",
]


@pytest.fixture(scope="session")
def transformers_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A real OpenAI-compatible server, `transformers serve` on loopback, with a tiny Llama-style chat model.

    One for the session (a start takes 10-20 s). Plain `transformers serve` answers one request at a
    time and returns no prompt log-probabilities, as users meet it.
    """
    from nlue.lm.serve import transformers_serve as serve
    from nlue.lm.tiny import save_tiny_causal_lm

    root = tmp_path_factory.mktemp("serve")
    model = save_tiny_causal_lm(root / "tiny-llama", "llama")
    with serve(model, root / "serve.log") as (url, _):
        yield url, model


@pytest.fixture(scope="module")
def tiny_lms(tmp_path_factory: pytest.TempPathFactory, one_torch_thread) -> dict[str, Path]:
    """Tiny random GPT-2- and Llama-style causal LMs with their tokenizers, built here (no download)."""
    from nlue.lm.tiny import save_tiny_causal_lm

    root = tmp_path_factory.mktemp("tiny-causal")
    return {family: save_tiny_causal_lm(root / family, family) for family in ("gpt2", "llama")}


@pytest.fixture(scope="session")
def user_task_runs(tmp_path_factory: pytest.TempPathFactory):
    """Three tasks nlue does not ship (tests/user_tasks.py) built from CSV files, with a TF-IDF baseline run and a
    tiny fine-tuned encoder's run of each; the tasks are registered only while the runs are made (issue 30)."""
    from tests.user_tasks import make_user_runs

    return make_user_runs(tmp_path_factory.mktemp("user-tasks"))


# ------------------------------------------------------------------ the order and units of the parallel run
# Under pytest-xdist (`scripts/test.sh` runs `--dist loadscope`), each module is one unit of work, so that its
# module fixtures (a whole sweep, the GPU suite's smoke run, a report's results) are made once, on one worker.
# The docs pages are the exception, one unit each, so that the longest module does not sit on one worker.
# The units known to be long are sent first (with --no-loadscope-reorder), so that no worker starts one when
# the other is nearly done.
SPLIT_MODULES = {"test_docs_commands.py"}
LONG_FIRST = (
    "tests/test_readme_llm_commands.py",
    "tests/test_docs_commands.py::test_every_runnable_block_runs_as_written[guides/llm.md]",
    "tests/test_docs_commands.py::test_every_runnable_block_runs_as_written[guides/own-task.md]",
    "tests/test_sweep.py",
    "tests/test_sweep_shards.py",
    "tests/test_gpu_suite.py",
    "tests/test_docs_commands.py::test_every_runnable_block_runs_as_written[guides/nediom.md]",
    "tests/test_served_benchmarks.py",
    "tests/test_training.py",
    "tests/test_docs_commands.py",
)


def _rank(item: pytest.Item) -> int:
    return next((i for i, prefix in enumerate(LONG_FIRST) if item.nodeid.startswith(prefix)), len(LONG_FIRST))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker collects, and sorts, the same list
        items.sort(key=_rank)  # stable: the rest keep their order


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: without xdist there is nothing to schedule
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadscope`` with :data:`SPLIT_MODULES` split into their tests (the others: one unit per module).

    (``--dist loadgroup`` with xdist_group marks would say the same, but pytest-xdist 3.8 cannot set the group
    on pytest 9's node ids, so every test ran as its own unit.)
    """
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModulesAndSplitPages(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if Path(nodeid.split("::", 1)[0]).name in SPLIT_MODULES:
                return nodeid
            return super()._split_scope(nodeid)

    return ModulesAndSplitPages(config, log)
