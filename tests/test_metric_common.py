"""Every evaluate module under metrics/: it loads by path, its doctests pass, its Space files are complete."""

from __future__ import annotations

import doctest
import importlib
import inspect
import os
import re
from contextlib import contextmanager
from pathlib import Path
from unittest.mock import patch

import evaluate
import pytest
import yaml
from evaluate.loading import evaluation_module_factory, import_main_class

from nlue.registry.paper import PAPER_CITATION
from nlue.registry.tasks import TASK_NAMES
from nlue.scores import METRIC_MODULES, metric_path

METRICS_DIR = Path(__file__).resolve().parents[1] / "metrics"
MODULE_DIRS = sorted(p for p in METRICS_DIR.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
MODULE_NAMES = [p.name for p in MODULE_DIRS]
CARD_SECTIONS = ("Description", "How to use", "Inputs", "Output values", "Examples", "Limitations", "Citation")
_real_load = evaluate.load


@contextmanager
def local_modules():
    """Make evaluate.load("<name>") in the doctests load metrics/<name> instead of asking the Hub."""

    def load_local(name: str, *args, **kwargs):
        return _real_load(str(METRICS_DIR / name), *args, **kwargs)

    with patch("evaluate.load", side_effect=load_local):
        yield


def test_every_folder_is_a_listed_module():
    assert sorted(METRIC_MODULES) == MODULE_NAMES


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_doctests_pass(name):
    module_path = evaluation_module_factory(str(METRICS_DIR / name)).module_path
    script = importlib.import_module(module_path)
    metric_class = import_main_class(module_path)
    # Like evaluate's own metrics: every argument of _compute is named, none hides in **kwargs.
    parameters = inspect.signature(metric_class._compute).parameters.values()
    assert all(p.kind != p.VAR_KEYWORD for p in parameters)
    with local_modules():
        results = doctest.testmod(script, raise_on_error=False, verbose=False)
    assert results.failed == 0
    assert results.attempted > 1


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_space_files(name):
    folder = METRICS_DIR / name
    card = (folder / "README.md").read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", card, flags=re.DOTALL)
    assert match, "card must open with a YAML header between --- lines"
    header = yaml.safe_load(match.group(1))
    for key in ("title", "emoji", "colorFrom", "colorTo", "description"):
        assert header.get(key), f"card header lacks {key}"
    assert header["sdk"] == "gradio"
    assert str(header["sdk_version"]) == "6.31.0"
    assert header["app_file"] == "app.py"
    assert header["pinned"] is False
    assert {"evaluate", "metric"} <= set(header["tags"])
    headings = re.findall(r"^## (.+)$", card, flags=re.MULTILINE)
    assert [h for h in headings if h in CARD_SECTIONS] == list(CARD_SECTIONS)
    assert PAPER_CITATION in card

    requirements = (folder / "requirements.txt").read_text(encoding="utf-8").splitlines()
    required = {re.split(r"[\[<>=]", line)[0].strip() for line in requirements if line and not line.startswith("#")}
    assert {"nlue", "evaluate"} <= required

    app = (folder / "app.py").read_text(encoding="utf-8")
    assert "import evaluate" in app
    assert "launch_gradio_widget(" in app
    assert f'"{name}.py"' in app


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_one_import_per_line(name):
    # evaluate reads a script's imports with a regex that misreads `import a, b`.
    script = (METRICS_DIR / name / f"{name}.py").read_text(encoding="utf-8")
    assert not re.search(r"^import [^\n#]*,", script, flags=re.MULTILINE)


# Minimal inputs per (module, config), to check that each card documents every key the module returns.
_SAMPLES = {
    ("nlue", "qnli"): {"predictions": [0, 1, 1], "references": [0, 1, 0]},
    ("nlue", "stsb"): {"predictions": [0.5, 2.0, 4.0], "references": [1.0, 2.5, 3.5]},
    ("nlue", "gmet"): {"predictions": ["क", "ख"], "references": [["क"], ["ग"]], "categories": ["Family", "House"]},
    ("gmet_combined", None): {"predictions": ["क", "ख"], "references": [1, 0], "categories": ["Family", "House"]},
    ("macro_f1", None): {"predictions": [0, 1, 1], "references": [0, 1, 0]},
    ("r_squared", None): {"predictions": [0.5, 2.0, 4.0], "references": [1.0, 2.5, 3.5]},
}


@pytest.mark.parametrize(("name", "config"), list(_SAMPLES))
def test_card_documents_every_output(name, config):
    metric = _real_load(str(METRICS_DIR / name), config)
    results = metric.compute(**_SAMPLES[name, config], bootstrap_resamples=20)
    card = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    outputs = card.split("## Output values", 1)[1].split("\n## ", 1)[0]
    for key, value in results.items():
        assert type(value) in (float, dict), f"{key} is a {type(value).__name__}, not a plain float"
        if not key.endswith(("_ci_low", "_ci_high")):
            assert f"`{key}`" in outputs, f"card of {name} does not document output {key!r}"
    assert any(key.endswith("_ci_low") for key in results)


def test_nlue_module_configs():
    for task in TASK_NAMES:
        assert _real_load(str(METRICS_DIR / "nlue"), task).config_name == task
    with pytest.raises(ValueError, match="expected one of: sa, cola"):
        _real_load(str(METRICS_DIR / "nlue"), "squad")
    with pytest.raises(ValueError, match="needs a task as config name"):
        _real_load(str(METRICS_DIR / "nlue"))
    with pytest.raises(ValueError, match="classification task: sa, cola"):
        _real_load(str(METRICS_DIR / "macro_f1"), "stsb")


def test_bare_name_resolves_inside_metrics_dir(monkeypatch):
    monkeypatch.chdir(METRICS_DIR)
    gmet = evaluate.load("gmet_combined")
    assert gmet.compute(predictions=["क"], references=[["क"]], categories=["Family"])["combined"] == 1.0
    qnli = evaluate.load("nlue", "qnli")
    assert qnli.compute(predictions=[0, 1], references=[0, 1]) == {"accuracy": 1.0, "macro_f1": 1.0}


def test_metric_path_loads_from_anywhere(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert os.path.isdir(metric_path("r_squared"))
    r2 = evaluate.load(metric_path("r_squared"))
    assert r2.compute(predictions=[1.0, 2.0], references=[1.0, 2.0]) == {"r2": 1.0}
    with pytest.raises(ValueError, match="unknown NLUE metric module 'bleu'"):
        metric_path("bleu")


def test_metric_path_without_source_tree(monkeypatch, tmp_path):
    import nlue.scores.metric_modules as metric_modules

    monkeypatch.setattr(metric_modules, "_METRICS_DIR", tmp_path / "metrics")
    with pytest.raises(FileNotFoundError, match="ship with the nlue source tree"):
        metric_modules.metric_path("nlue")


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_card_examples_run(name):
    """The `>>>` examples of each card run against the local module, so the card cannot drift from the code."""
    card = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", card, flags=re.DOTALL) if ">>>" in b]
    assert blocks, f"card of {name} has no runnable example"

    def load_published(path: str, *args, **kwargs):
        # The cards show the Hub id "<org>/<name>"; here it maps to the folder of the same name.
        return _real_load(str(METRICS_DIR / path.split("/")[-1]), *args, **kwargs)

    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {"evaluate": evaluate}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    with patch("evaluate.load", side_effect=load_published):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
