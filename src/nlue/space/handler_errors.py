"""What a visitor or an API client sees when a Space handler fails; the Space keeps serving either way.

The page's handlers are wrapped by :func:`visitor_errors` (pop-ups: a warning for input to
fix, an error for a refusal, a short apology for anything unexpected, logged with its
traceback); the API-only ``classify`` by :func:`api_errors` (Gradio's JSON error answer
with the message, no HTML) when Gradio serves it, and :func:`http_refusal` picks the HTTP
status and message when the Space's own route does (:mod:`nlue.space.http_api`).
"""

from __future__ import annotations

import functools
import html
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import gradio as gr

from nlue.boards import text
from nlue.errors import NlueError
from nlue.space.batching import BatcherBusy
from nlue.space.inference import InputError
from nlue.space.models import ModelNotAllowed

logger = logging.getLogger(__name__)


def _guarded(handler: Callable[..., Any], refused: Callable[[Exception], Any]) -> Callable[..., Any]:
    """``handler`` with its failures passed to ``refused`` (which returns a stand-in or raises); a coroutine
    handler stays a coroutine, so that Gradio still runs it on the event loop."""
    if inspect.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await handler(*args, **kwargs)
            except Exception as exc:
                return refused(exc)

        return run_async

    @functools.wraps(handler)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except Exception as exc:
            return refused(exc)

    return run


def _unexpected(handler: Callable[..., Any]) -> gr.Error:
    """What any caller gets for a failure that is not a refusal: logged with its traceback, a short apology."""
    logger.exception("unexpected error in %s", getattr(handler, "__name__", handler))
    return gr.Error(text.UNEXPECTED, print_exception=False)


def visitor_errors(handler: Callable[..., Any], outputs: int = 1) -> Callable[..., Any]:
    """Report a handler's failures to the visitor, and keep serving.

    Input to fix (too long, empty, no blank): a warning pop-up, outputs left as they were.
    A refusal or a model that will not load: an error pop-up. Anything else is logged with
    its traceback and the visitor gets a short apology, never the traceback. Pop-ups render
    HTML, so messages (which may quote a visitor's text) are escaped.
    """

    def refused(exc: Exception) -> Any:  # called inside the except clause: the traceback is still at hand
        if isinstance(exc, gr.Error):
            raise exc
        if isinstance(exc, InputError):
            gr.Warning(html.escape(str(exc), quote=False), title="Please check the input")
            return gr.skip() if outputs == 1 else tuple(gr.skip() for _ in range(outputs))
        if isinstance(exc, NlueError):
            logger.info("refused a request: %s", exc)
            raise gr.Error(html.escape(str(exc), quote=False), title="Cannot do that", print_exception=False) from None
        raise _unexpected(handler) from None

    return _guarded(handler, refused)


def api_errors(handler: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """:func:`visitor_errors` for an API-only coroutine: every refusal is an error with its message.

    No pop-ups and no HTML: the caller is a program, which gets Gradio's JSON error answer.
    """

    def refused(exc: Exception) -> Any:
        if isinstance(exc, gr.Error):
            raise exc
        if isinstance(exc, NlueError):
            logger.info("refused an API request: %s", exc)
            raise gr.Error(str(exc), print_exception=False) from None
        raise _unexpected(handler) from None

    return _guarded(handler, refused)


BAD_REQUEST = 400
SERVER_ERROR = 500
UNAVAILABLE = 503


def http_refusal(exc: Exception, where: str = "classify") -> tuple[int, str]:
    """The HTTP status and message for a failed API request, logged as its kind deserves.

    The caller's input (a text, a task or a model not on the list): 400, logged in one line.
    A model with too many requests waiting: 503, worth trying again shortly. Any other
    :class:`~nlue.errors.NlueError` (a listed model that will not load, a head that does not
    fit its task) is the Space's own fault, not the caller's: 500 with its message. Anything
    else is a fault of ours or of a library: 500 with a short apology, logged with its traceback.
    """
    if isinstance(exc, BatcherBusy):
        logger.info("busy: %s", exc)
        return UNAVAILABLE, str(exc)
    if isinstance(exc, InputError | ModelNotAllowed):
        logger.info("refused an API request: %s", exc)
        return BAD_REQUEST, str(exc)
    if isinstance(exc, NlueError):
        logger.error("%s failed: %s", where, exc)  # a load failure was logged with its traceback where it happened
        return SERVER_ERROR, str(exc)
    logger.error("unexpected error in %s", where, exc_info=exc)
    return SERVER_ERROR, text.UNEXPECTED
