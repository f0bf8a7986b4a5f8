"""Debian's chromium driven by Playwright, for the tests that look at a page (report, Space).

One place for where the browser is, how it is started, and what happens when it is missing: CI
installs it (scripts/test.sh), so a missing browser fails there; elsewhere the test is skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"  # screenshots to look at (gitignored)
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip


def playwright_api(what: str = "this browser test", *, module_level: bool = False) -> Any:
    """playwright.sync_api, after checking chromium is there: a failure in CI, a skip elsewhere."""
    if not CHROMIUM.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide Debian's chromium at {CHROMIUM} for {what}", pytrace=False)
        pytest.skip(f"{what} needs Debian's chromium at {CHROMIUM}", allow_module_level=module_level)
    return pytest.importorskip("playwright.sync_api", reason=f"{what} needs playwright")


@contextmanager
def chromium_page(width: int, height: int, what: str = "this browser test") -> Iterator[Any]:
    """A fresh page of the given viewport in headless chromium, closed on the way out."""
    sync_api = playwright_api(what)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()
