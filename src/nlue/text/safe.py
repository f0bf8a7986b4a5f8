"""Text from outside (model outputs, server answers, results files, source rows) made safe for where it is shown.

Each function has one destination: a terminal, a Markdown or HTML page, a spreadsheet cell, a stored
URL. None of them changes what a text *means*: a terminal sees control characters as visible escapes,
a page sees the characters literally, a spreadsheet sees text instead of a formula (and our readers
take the guard off again), a stored URL loses only its credentials.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# ------------------------------------------------------------------ terminals and logs
# C0 controls but tab and newline, DEL, and the C1 block (0x80-0x9f: 0x9b is a one-byte CSI): what a
# terminal acts on instead of showing. ESC starts every ANSI/OSC sequence, so showing it as "\x1b"
# disarms the whole sequence while keeping it readable.
_TERMINAL_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: object, limit: int | None = 2000) -> str:
    """``text`` with every control character a terminal would act on shown as an escape (``\\x1b``).

    ``limit`` cuts very long texts (a server's error page) to that many characters, saying how many
    were left out, so one answer cannot flood a log.
    """
    value = _TERMINAL_CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))
    if limit is not None and len(value) > limit:
        value = f"{value[:limit]}… ({len(value) - limit} more characters)"
    return value


# ------------------------------------------------------------------ Markdown and HTML
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>-])")


def html_text(text: object) -> str:
    """``text`` for an HTML page: ``<``, ``>``, ``&`` and quotes as entities."""
    return html.escape(str(text), quote=True)


# What GitHub-flavoured renderers (marked, the Hub, Gradio) turn into a link without any markup: a URL's
# "://", "www." and an e-mail address's "@". A backslash before ':', '.' or '@' breaks the pattern and
# renders as the character itself (CommonMark escapes any ASCII punctuation).
_AUTOLINK = re.compile(r"(?<=[A-Za-z])(://)|(?i:\b(www)\.)|(@)")


def markdown_text(text: object) -> str:
    """``text`` for a Markdown table cell or line: literal, never markup, raw HTML, a link or an image.

    HTML characters become entities (Markdown renderers pass raw HTML through), Markdown's own
    punctuation is backslash-escaped, what a renderer would link by itself (``http://``, ``www.``,
    ``a@b.c``) is broken up by an escape, and a line break becomes a space (a cell is one line).
    """
    value = " ".join(str(text).splitlines())
    value = _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(value, quote=False))
    return _AUTOLINK.sub(lambda m: "\\://" if m[1] else f"{m[2]}\\." if m[2] else "\\@", value)


def plot_text(text: object) -> str:
    """``text`` for a matplotlib label, title or legend: literal, never mathtext.

    matplotlib reads the text between two ``$`` as TeX math (a name like ``$\\frac`` even fails to
    draw); an escaped ``\\$`` is drawn as a dollar sign.
    """
    return str(text).replace("$", r"\$")


# ------------------------------------------------------------------ spreadsheet cells
# What a spreadsheet reads as the start of a formula (OWASP's list for CSV injection), and the guard
# quote itself so that guarding is reversible: a text that starts with a quote gets one more.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value: object) -> object:
    """A value for a CSV cell we write: a text a spreadsheet would run as a formula gets a leading ``'``.

    Numbers (and texts that are plain numbers, such as ``-0.25``) are written as they are. Read our
    own sheets back through :func:`csv_cell_read`, which takes the guard off, so the text is kept.
    """
    if not isinstance(value, str) or not value.startswith(_FORMULA_START) or _NUMBER.fullmatch(value):
        return value
    return "'" + value


def csv_row(values: Iterable[object]) -> list[object]:
    """:func:`csv_cell` on every value of a row."""
    return [csv_cell(v) for v in values]


def csv_cell_read(value: str) -> str:
    """The text :func:`csv_cell` guarded: one leading ``'`` taken off where the guard put it."""
    if len(value) > 1 and value[0] == "'" and value[1:].startswith(_FORMULA_START) and not _NUMBER.fullmatch(value[1:]):
        return value[1:]
    return value


# ------------------------------------------------------------------ URLs and secrets
_SECRET_QUERY = re.compile(r"(key|token|secret|password|passwd|signature|sig|auth|credential)", re.IGNORECASE)
REDACTED = "***"


def public_url(url: str | None) -> str | None:
    """``url`` without credentials: no ``user:password@`` and no query parameter named like a secret.

    What may be stored in a results file, a journal key, a log line or a run's identity.
    """
    if not url:
        return url
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # not a URL we can take apart: keep nothing that could be a credential
        return re.sub(r"//[^/@]*@", "//", str(url))
    netloc = parts.hostname or ""
    if ":" in netloc:  # an IPv6 address
        netloc = f"[{netloc}]"
    if port is not None:
        netloc += f":{port}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, REDACTED if _SECRET_QUERY.search(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


_URL_IN_TEXT = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`]+")


def public_urls_in(text: str) -> str:
    """``text`` with every URL in it as :func:`public_url` shows it (for log lines and messages).

    Only a URL that could hold a credential (a ``@`` or a query) is rewritten; the others stay as written.
    """

    def shown(match: re.Match[str]) -> str:
        url = match.group()
        return public_url(url) or "" if "@" in url or "?" in url else url

    return _URL_IN_TEXT.sub(shown, text)


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every occurrence of each secret (of 8 characters or more) replaced by ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 8 and secret in text:
            text = text.replace(secret, REDACTED)
    return text
