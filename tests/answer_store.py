"""Reading an answer cache (nlue.lm.answer_cache) in tests: its rows, their count, all it holds as text."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any


def stored(path: Path) -> list[dict[str, Any]]:
    """Every row, oldest first, its JSON columns parsed (through the cache's own bounded reader)."""
    from nlue.lm.answer_cache import AnswerCache

    with AnswerCache(path) as cache:
        return list(cache.entries())


def count_answers(path: Path) -> int:
    """Rows stored so far (0 before the file exists); safe while another process writes."""
    if not path.is_file():
        return 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        return db.execute("SELECT count(*) FROM answers").fetchone()[0]
    except sqlite3.OperationalError:  # created, its table not yet
        return 0
    finally:
        db.close()


def cache_text(path: Path) -> str:
    """All the cache holds, as text: its rows as JSON and the raw bytes of its files (for "never stored" checks)."""
    raw = b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.is_file())
    rows = "\n".join(json.dumps(e, ensure_ascii=False) for e in stored(path)) if path.is_file() else ""
    return rows + "\n" + raw.decode("utf-8", errors="replace")
