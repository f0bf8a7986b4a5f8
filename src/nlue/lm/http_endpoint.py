"""What an ``--endpoint`` URL holds: where to connect, the credentials in it, and the form of it that may be kept.

* ``http://user:password@host/v1``: the user name and password go as HTTP basic auth (the
  ``Authorization`` header, in place of an API key), which is what a reverse proxy in front of a
  server asks for; a URL with credentials worked this way before (httpx does it), and refusing it
  would leave such a server out of reach. The API key of ``--api-key-env`` is then not sent.
* a query (``?api_key=...``, ``?api-version=...``): sent with every request as query parameters (the
  openai client, given it in the base URL, glues the request's path after the query).
* everything stored or shown - results files, journals, log lines, messages - holds
  :func:`nlue.text.safe.public_url` of it: no user name or password, query values named like secrets
  as ``***``. What the server needs is used only to connect.

And the API key: read from the variable the user names, and said before the first request when it is
missing where one is likely needed (:func:`read_api_key`).
"""

from __future__ import annotations

import base64
import ipaddress
import logging
import os
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from nlue.errors import NlueError
from nlue.lm.spec import DEFAULT_API_KEY_ENV
from nlue.text.safe import REDACTED, public_url

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Endpoint:
    """An ``--endpoint`` URL taken apart; only :attr:`public` may be stored or shown."""

    url: str  # where to connect: scheme, host, port and path, nothing else
    public: str  # what results, journals and logs hold
    host: str
    query: dict[str, str] = field(default_factory=dict)  # sent with every request
    headers: dict[str, str] = field(default_factory=dict)  # basic auth from the URL's user name and password
    secrets: tuple[str, ...] = ()  # what no answer, message or file may show

    @property
    def basic_auth(self) -> bool:
        return "Authorization" in self.headers

    @property
    def local(self) -> bool:
        """On this machine or a private network: a server of one's own, which often needs no key."""
        if self.host.lower() in ("localhost", "localhost.localdomain") or self.host.endswith(".localhost"):
            return True
        try:
            address = ipaddress.ip_address(self.host)
        except ValueError:  # a name: it may be anywhere
            return False
        return address.is_loopback or address.is_private or address.is_link_local


def parse_endpoint(url: str) -> Endpoint:
    """``url`` taken apart; an error that shows no credential when it is not an http(s) URL with a host."""
    shown = public_url(url) or ""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        raise NlueError(f"--endpoint {shown!r} is not a URL ({exc}); expected e.g. http://127.0.0.1:8000/v1") from exc
    if parts.scheme not in ("http", "https") or not host:
        raise NlueError(f"--endpoint must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000/v1; "
                        f"got {shown!r}")  # fmt: skip
    netloc = parts.netloc.rpartition("@")[2]
    path = parts.path.rstrip("/")
    public = public_url(urlunsplit((parts.scheme, netloc, path, parts.query, ""))) or ""
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    shown_query = dict(parse_qsl(urlsplit(public).query, keep_blank_values=True))
    secrets = [value for name, value in query.items() if shown_query.get(name) == REDACTED and value]
    headers: dict[str, str] = {}
    if parts.username is not None or parts.password is not None:
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        headers["Authorization"] = f"Basic {token}"
        secrets += [password, token]
    connect = urlunsplit((parts.scheme, netloc, path, "", ""))
    return Endpoint(connect, public, host, query, headers, tuple(s for s in secrets if s))


def read_api_key(variable: str, endpoint: Endpoint) -> str | None:
    """The key in ``$variable``, or None; said before the first request, as a warning where one is likely needed.

    A variable named with ``--api-key-env`` that is unset is a warning (the user meant to send a key);
    so is no key for a server that is neither on this machine nor on a private network (hosted APIs
    refuse requests without one). The default variable unset for a server of one's own is fine.
    """
    key = os.environ.get(variable) or None
    if endpoint.basic_auth:
        if key and variable != DEFAULT_API_KEY_ENV:
            logger.warning("the user name and password in --endpoint go as HTTP basic auth; the key in $%s is not "
                           "sent", variable)  # fmt: skip
        return key
    if key:
        return key
    if variable != DEFAULT_API_KEY_ENV:
        logger.warning("$%s (named by --api-key-env) is not set or empty: requests to %s go without an API key, "
                       "and a server that needs one refuses them (HTTP 401)", variable, endpoint.public)  # fmt: skip
    elif not endpoint.local:
        logger.warning("no API key in $%s for %s, a server neither on this machine nor on a private network: "
                       "hosted APIs refuse requests without one (HTTP 401). Set it, or name the variable that "
                       "holds the key with --api-key-env", variable, endpoint.public)  # fmt: skip
    else:
        logger.info("no API key in $%s; sending a placeholder (fine for a server of your own)", variable)
    return None
