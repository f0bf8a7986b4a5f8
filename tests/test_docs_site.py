"""The documentation site builds strictly, the README stays a front page, and the pages say what the code does."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAX_README_LINES = 250


def _hooks():
    spec = importlib.util.spec_from_file_location("nlue_docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for command in ("nlue build", "nlue train", "nlue llm nlue", "nlue idioms mine", "nlue translate review export"):
        assert f'id="{command.replace(" ", "-")}"' in cli, command
    assert (tmp_path / "site" / "contributing" / "index.html").is_file()


def test_the_readme_is_a_front_page_whose_links_reach_the_site() -> None:
    assert len(README.splitlines()) <= MAX_README_LINES
    links = re.findall(r"\]\(((?:docs/|CONTRIBUTING)[^)#]*)(?:#[^)]*)?\)", README)
    assert len(links) >= 15
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert missing == []


def test_the_cli_reference_covers_every_sub_command() -> None:
    from nlue.cli import build_parser

    reference = _hooks().cli_reference()
    parser = build_parser()
    commands = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices
    for name in commands:
        assert f"## nlue {name}\n" in reference, name


def test_the_space_tabs_are_documented_in_the_order_the_page_shows_them() -> None:
    tabs = [re.sub(r"^\W+", "", label) for label in _hooks().space_tabs()]
    assert tabs[0] == "Try a model" and "About" in tabs
    page = (ROOT / "docs" / "guides" / "space.md").read_text(encoding="utf-8")
    described = page[page.index("## The tabs") : page.index("## Safety and limits")]
    positions = [described.index(f"**{tab.split(' ')[0]}") for tab in tabs if tab != "Idioms (neDIOM)"]
    assert positions == sorted(positions), "the Space guide lists the tabs in another order than the page"
    for name, text in (("README.md", README), ("spaces/nlue/README.md", (ROOT / "spaces/nlue/README.md").read_text())):
        order = [text.index(tab) for tab in tabs]
        assert order == sorted(order), f"{name} lists the tabs in another order than the page"


def test_the_results_reference_names_every_field_of_a_results_file() -> None:
    from dataclasses import fields

    from nlue.results import RunResult

    reference = _hooks().results_reference()
    for field in fields(RunResult):
        assert f"| `{field.name}` |" in reference, field.name
