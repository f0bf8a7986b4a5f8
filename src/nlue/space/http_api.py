"""The ``classify`` API served by the Space's own HTTP route, so that a refused request gets a 4xx.

Why not Gradio's route: Gradio answers POST /gradio_api/run/<api_name> with HTTP 500 for any
exception its handler raises, ``gr.Error`` included, and a handler can neither raise nor
return anything that sets another status (gradio 6.31.0, ``gradio/routes.py``, the ``predict``
route made in ``App.create_app``: ``except BaseException`` -> ``JSONResponse(content,
status_code=500)``). Before the handler runs it also moves any file object in the body into
its cache, and a file it never received ends there in a 500 with a traceback on stderr.

So the Space serves that address itself: :func:`with_routes` hands a FastAPI route to the app
Gradio builds, through ``launch(app_kwargs=...)`` (documented by Gradio as keyword arguments
for that FastAPI app) and FastAPI's ``routes`` argument (kept from Starlette), so that it comes
ahead of Gradio's own routes, which Starlette tries in order. The address, the request
body (``{"data": [task, model, fields], ...}``) and the answer's ``data`` are what they were;
a refusal is ``{"error": message}`` with 400, or 413 for a body past :func:`body_limit`, or 503
while the model is busy. ``gr.api`` still declares ``classify``: the API page lists it, and the
queued routes (``/gradio_api/call/classify``, ``gradio_client``) run it through Gradio, where an
error reaches the caller in the event stream.
"""

from __future__ import annotations

import json
import time
import weakref
from typing import TYPE_CHECKING, Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from starlette.requests import ClientDisconnect

from nlue.space.handler_errors import BAD_REQUEST, UNAVAILABLE, http_refusal
from nlue.space.inference import InputError, max_fields

if TYPE_CHECKING:
    from nlue.space.service import SpaceService

GRADIO_API = "/gradio_api"  # Gradio's prefix for its API routes (gradio.route_utils.API_PREFIX)
CLASSIFY_PATHS = tuple(f"{GRADIO_API}/{route}/classify{end}" for route in ("run", "api") for end in ("", "/"))
TOO_LARGE = 413
BYTES_PER_CHARACTER = 12  # the most a character takes in JSON: a surrogate pair as two \uXXXX escapes
BODY_OVERHEAD = 4096  # the task, the model name, a session hash and the JSON around them

_routes: weakref.WeakKeyDictionary[Any, list[APIRoute]] = weakref.WeakKeyDictionary()


class BodyTooLarge(InputError):
    """The request body is larger than any request the Space would accept."""


def body_limit(max_chars: int) -> int:
    """The largest body a request the Space could accept may have: every field at its longest, escaped."""
    return max_fields() * max_chars * BYTES_PER_CHARACTER + BODY_OVERHEAD


async def _arguments(request: Request, max_chars: int) -> tuple[Any, Any, Any]:
    """The task, model and fields of a request body, read no further than :func:`body_limit` bytes."""
    limit = body_limit(max_chars)
    body = bytearray()
    async for chunk in request.stream():  # not request.body(): a client could send gigabytes
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge(
                f"the request body is too large: over {limit:,} bytes, more than a request with every field at "
                f"this Space's limit of {max_chars:,} characters takes"
            )
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested past the parser's depth
        raise InputError('the request body must be JSON: {"data": [task, model, [fields...]]}') from None
    if not isinstance(payload, dict):
        raise InputError(f'the request body must be a JSON object, {{"data": [...]}}; got a {type(payload).__name__}')
    data = payload.get("data")
    if not isinstance(data, list) or len(data) != 3:
        raise InputError('"data" must hold three things: the task, model and fields (a list of texts)')
    return data[0], data[1], data[2]


def classify_routes(service: SpaceService) -> list[APIRoute]:
    """POST routes for ``classify`` at Gradio's addresses for it, answering as Gradio's route does on success."""

    async def classify(request: Request) -> Response:
        started = time.perf_counter()
        try:
            record = await service.classify(*await _arguments(request, service.settings.max_chars))
            # Rendered here, inside the try: a value JSON cannot hold (NaN from a broken model) is our fault, logged.
            return JSONResponse({"data": [record], "duration": time.perf_counter() - started})
        except ClientDisconnect:  # gone before its body arrived: nobody reads an answer, nothing to log
            return Response(status_code=BAD_REQUEST)
        except Exception as exc:  # every failure becomes an answer; the Space keeps serving
            status, message = (TOO_LARGE, str(exc)) if isinstance(exc, BodyTooLarge) else http_refusal(exc)
            # A message may quote the caller's input; a lone surrogate there would fail the UTF-8 encoding.
            shown = message.encode("utf-8", "backslashreplace").decode("utf-8")
            headers = {"Retry-After": "1"} if status == UNAVAILABLE else None
            return JSONResponse({"error": shown}, status_code=status, headers=headers)

    return [
        APIRoute(path, classify, methods=["POST"], include_in_schema=False, name=f"nlue_classify_{index}")
        for index, path in enumerate(CLASSIFY_PATHS)
    ]


def register(demo: Any, service: SpaceService) -> None:
    """Remember the routes that serve ``demo``'s ``classify``, for :func:`with_routes` when it is launched."""
    _routes[demo] = classify_routes(service)


def with_routes(demo: Any, launch_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``launch_kwargs`` with ``demo``'s own routes added to ``app_kwargs`` (the operator's routes kept).

    Not with a login (``auth``): Gradio checks it in each of its routes, and this one would let
    callers past it, so Gradio's route serves ``classify`` then, refusals with HTTP 500.
    """
    routes = _routes.get(demo)
    if not routes or launch_kwargs.get("auth") or launch_kwargs.get("auth_dependency"):
        return launch_kwargs
    app_kwargs = dict(launch_kwargs.get("app_kwargs") or {})
    app_kwargs["routes"] = [*routes, *(app_kwargs.get("routes") or [])]
    return {**launch_kwargs, "app_kwargs": app_kwargs}
