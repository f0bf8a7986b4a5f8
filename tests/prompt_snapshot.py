"""Every prompt the shipped tasks give a language model, for fixed items: proof that moving the prompts changes none.

``tests/data/prompt_snapshot.json`` was written from the prompts kept in Python, before they
moved into the shipped task files (issue 30, item 4). Each entry is one prompt exactly as the
code that runs the model builds it, captured where the model receives it:

* NLUE by generation: the requests ``run_nlue_generation`` sends (the log-likelihood prompt, the
  answer line, or for STS-B the number line, before the cue), English and Nepali, 0 and 2 shots;
* NLUE by log-likelihood: the contexts and continuations ``nlue llm nlue`` scores, 0 and 2 shots;
* the exams: what ``nlue llm mcq --show-prompt`` prints, both prompt languages, 0, 1 and 3 shots,
  chat messages and plain text, and the log-likelihood contexts with letters and with option texts;
* neDIOM: the zero-shot contexts and label words scored, and the generation prompts, for each of
  the eight input variants in English and Nepali.

Beside them (``python``) it keeps the prompt words that other modules import by name
(:func:`python_prompts`), so that what those names hold after the move can be compared too.

Rewrite it only when a prompt is meant to change:
``PYTHONPATH=src python -m tests.prompt_snapshot --write`` (it builds the sample into a temporary folder).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

PROMPT_SNAPSHOT = Path(__file__).resolve().parent / "data" / "prompt_snapshot.json"
LANGUAGES = ("en", "ne")
NLUE_SHOTS = (0, 2)
EXAM_SHOTS = (0, 1, 3)


class Recorder:
    """A model that keeps every request it is sent and answers nothing useful (the prompts are what count)."""

    name = "recorder"

    def __init__(self) -> None:
        self.generations: list[Any] = []
        self.loglikelihoods: list[Any] = []

    def describe(self) -> Any:
        from nlue.lm.description import Capabilities, ModelDescription

        return ModelDescription("recorder", "recorder", "recorder", Capabilities(generate=True, chat=True))

    def generate(self, requests: Sequence[Any]) -> list[Any]:
        from nlue.lm.base import Generation

        self.generations += list(requests)
        return [Generation("?", None, 1, "stop") for _ in requests]

    def loglikelihood(self, requests: Sequence[Any]) -> list[Any]:
        from nlue.lm.base import Loglikelihood

        self.loglikelihoods += list(requests)
        return [Loglikelihood(-float(i % 7), False) for i, _ in enumerate(requests)]


def _request_text(request: Any) -> str:
    if request.messages is None:
        return f"[prompt]\n{request.prompt}\n[stop] {list(request.stop)!r}"
    return "\n".join(f"[{m.role}]\n{m.content}" for m in request.messages)


def _loglik_text(requests: Sequence[Any]) -> str:
    contexts = list(dict.fromkeys(r.context for r in requests))
    return "\n".join(
        f"[context]\n{context}\n[continuations] {[r.continuation for r in requests if r.context == context]!r}"
        for context in contexts
    )


def _nlue(dataset: Path, out: dict[str, str]) -> None:
    from nlue.evals.llm.nlue_generate import run_nlue_generation
    from nlue.evals.llm.nlue_llm import demonstrations, render_prompt, task_data
    from nlue.registry.tasks import TASKS

    tasks = [task for task in TASKS.values() if task.benchmark == "nlue" and task.prompts]
    with tempfile.TemporaryDirectory() as results:
        for task in tasks:
            for language in LANGUAGES:
                for shots in NLUE_SHOTS:
                    model = Recorder()
                    run_nlue_generation(model, str(dataset), [task], language, shots, Path(results),
                                        f"r-{task.name}-{language}-{shots}", chat=False, bootstrap_resamples=0,
                                        limit=1)  # fmt: skip
                    [request] = model.generations
                    out[f"nlue/generate/{task.name}/{language}/{shots}shot"] = _request_text(request)
                    if not task.kind.has_classes:
                        continue
                    test, pool, _ = task_data(str(dataset), task, shots, 1)
                    _, words = task.kind.llm_template(task, language)
                    context = demonstrations(task, pool, language, shots, 42) + render_prompt(task, test[0], language)
                    out[f"nlue/loglik/{task.name}/{language}/{shots}shot"] = f"{context}\n[words] {list(words)!r}"


def _exams(dataset: Path, out: dict[str, str]) -> None:
    from nlue.cli import main

    def show(*args: str) -> str:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = main(["llm", "mcq", "--model", "unused", "--dataset", str(dataset), "--show-prompt",
                         "--prompt-language", "both", "-q", *args])  # fmt: skip
        if code != 0:
            raise RuntimeError(f"nlue llm mcq --show-prompt {' '.join(args)} exited {code}")
        return printed.getvalue()

    for task in ("mcq_ne", "mcq_ur"):
        for shots in EXAM_SHOTS:
            for chat in ("--chat", "--no-chat"):
                key = f"mcq/generate/{task}/{shots}shot/{chat.strip('-')}"
                out[key] = show("--task", task, "--shots", str(shots), chat)
            for choices in ("letters", "texts"):
                key = f"mcq/loglik/{task}/{shots}shot/{choices}"
                out[key] = show("--task", task, "--shots", str(shots), "--mode", "loglik", "--choices", choices)


def _nediom(dataset: Path, out: dict[str, str]) -> None:
    import datasets

    from nlue.idioms.zero_shot import LabelGenerator, LabelScorer
    from nlue.registry.kinds.idiomaticity import VARIANTS
    from nlue.registry.tasks import TASKS

    task = TASKS["nediom"]
    items = list(datasets.load_dataset(str(dataset), task.name, split="test"))[:1]
    for language in LANGUAGES:
        for variant in VARIANTS:
            model = Recorder()
            LabelScorer(model).scores(items, variant, language)  # type: ignore[arg-type]
            out[f"nediom/loglik/{language}/{variant.number}"] = _loglik_text(model.loglikelihoods)
            prompts, _, words = LabelGenerator(model, chat=False, max_new_tokens=8).answers(items, variant, language)  # type: ignore[arg-type]
            out[f"nediom/generate/{language}/{variant.number}"] = f"{prompts[0]}\n[words] {list(words)!r}"


@contextlib.contextmanager
def _each_config_read_once() -> Iterator[None]:
    """``nlue.data.access.load_task`` remembering what it read: the runs read one config many times, and only
    the prompts are compared (the datasets are not written to while this lasts)."""
    from nlue.data import access

    read = access.load_task
    seen: dict[tuple[str, str], Any] = {}

    def load_task(dataset: Any, task: Any, *args: Any, **kwargs: Any) -> Any:
        key = (str(dataset), task.name if hasattr(task, "name") else str(task))
        if args or kwargs:
            return read(dataset, task, *args, **kwargs)
        if key not in seen:
            seen[key] = read(dataset, task)
        return seen[key]

    with mock.patch.object(access, "load_task", load_task):
        yield


def prompt_snapshot(nlue_dataset: Path, exam_dataset: Path, nediom_dataset: Path) -> dict[str, str]:
    """Every prompt of the module docstring, by a key naming where it comes from."""
    out: dict[str, str] = {}
    with _each_config_read_once():
        _nlue(nlue_dataset, out)
        _exams(exam_dataset, out)
    _nediom(nediom_dataset, out)
    return out


def python_prompts() -> dict[str, Any]:
    """The prompt words other modules import by name, as :func:`registry_snapshot.canonical` writes them: the
    answer and number lines a prompt without its own gets, the exams' prompts by language, neDIOM's."""
    from nlue.registry.label_prompts import ANSWER_LINES, NUMBER_LINES
    from nlue.registry.mcq import MCQ_PROMPTS
    from nlue.registry.nediom import NEDIOM_PROMPTS

    from .registry_snapshot import canonical

    return {
        "ANSWER_LINES": canonical(ANSWER_LINES),
        "NUMBER_LINES": canonical(NUMBER_LINES),
        "MCQ_PROMPTS": canonical(MCQ_PROMPTS),
        "NEDIOM_PROMPTS": canonical(NEDIOM_PROMPTS),
    }


def _build_samples(root: Path) -> tuple[Path, Path, Path]:
    """The embedded sample built as the test session's fixtures build it (tests/conftest.py)."""
    from nlue.data.build import build_repo
    from nlue.data.discover import task_sources_from_folder
    from nlue.data.report import BuildOptions
    from nlue.data.sample import sample_data_dir

    def build(name: str | None, configs: list[str] | None) -> Path:
        options = BuildOptions(is_sample=True, license="apache-2.0", show_progress=False,
                               **({"name": name} if name else {}))  # fmt: skip
        return build_repo(
            task_sources_from_folder(sample_data_dir(), configs), root / (name or "nlue"), options
        ).repo_dir

    return build(None, None), build("mcq", ["mcq_ne", "mcq_ur"]), build("nediom", ["nediom"])


def write_snapshot() -> None:
    with tempfile.TemporaryDirectory() as root:
        prompts = prompt_snapshot(*_build_samples(Path(root)))
    snapshot = {"rendered": prompts, "python": python_prompts()}
    PROMPT_SNAPSHOT.write_text(json.dumps(snapshot, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(prompts)} prompts to {PROMPT_SNAPSHOT}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: PYTHONPATH=src python -m tests.prompt_snapshot --write")
    write_snapshot()
