"""trainers/README.md shows the presets exactly as nlue.training.presets defines them."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from nlue.training.preset_docs import presets_markdown_table

README = Path(__file__).resolve().parents[1] / "trainers" / "README.md"


def test_presets_table_in_trainers_readme_matches_code() -> None:
    text = README.read_text(encoding="utf-8")
    start = text.index("<!-- presets-table:start")
    start = text.index("\n", start) + 1
    end = text.index("<!-- presets-table:end -->")
    assert text[start:end].strip() == presets_markdown_table().strip()
