"""The text guards every room uses for what comes from outside (nlue.text.safe)."""

from __future__ import annotations

import csv
import io

from hypothesis import given
from hypothesis import strategies as st

from nlue.text.safe import csv_cell, csv_cell_read, markdown_text, public_url, redact, terminal_safe


def test_public_url_drops_credentials_and_secret_parameters() -> None:
    assert public_url("http://user:secret@host:8000/v1") == "http://host:8000/v1"
    assert public_url("https://h/v1?api_key=abc&model=x") == "https://h/v1?api_key=***&model=x"
    assert public_url("http://[::1]:9/v1") == "http://[::1]:9/v1"
    assert public_url(None) is None


def test_terminal_safe_disarms_ansi_and_osc() -> None:
    shown = terminal_safe("bad\x1b]0;title\x07 \x1b[2J\x9b31m end\nnext\tcol")
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert "\\x1b]0;title" in shown and shown.endswith("end\nnext\tcol")
    assert terminal_safe("x" * 50, limit=10).startswith("x" * 10 + "…")


def test_markdown_text_is_literal() -> None:
    cell = markdown_text("<b>x</b> ![i](http://e/x.png) | y\nz")
    assert "<" not in cell and "![" not in cell and "](" not in cell and "\n" not in cell
    assert "\\|" in cell


def test_redact_replaces_long_secrets_only() -> None:
    assert redact("key sk-12345678 echoed", ["sk-12345678", None, "ab"]) == "key *** echoed"


@given(st.text())
def test_csv_guard_round_trips_and_disarms(text: str) -> None:
    cell = csv_cell(text)
    assert csv_cell_read(cell) == text
    if text[:1] in ("=", "+", "@") and cell != text:
        assert cell.startswith("'")
    buffer = io.StringIO()
    csv.writer(buffer).writerow([cell])
    assert csv_cell_read(next(csv.reader(io.StringIO(buffer.getvalue())))[0]) == text


def test_csv_numbers_stay_numbers() -> None:
    assert csv_cell("-0.25") == "-0.25" and csv_cell(-3) == -3 and csv_cell("+1e5") == "+1e5"
    assert csv_cell('=HYPERLINK("http://x")').startswith("'=")
