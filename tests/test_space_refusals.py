"""Bad input on the Space: refused with a message, never a traceback or an internal error.

The checks every text of the page and of the ``classify`` API goes through, without a server.
"""

from __future__ import annotations

import pytest

from nlue.space.inference import InputError, validate_inputs


def test_the_page_refuses_the_same_texts() -> None:
    from nlue.registry.tasks import get_task
    from nlue.space.gmet import check_sentence

    sa = get_task("sa")
    with pytest.raises(InputError, match="Text holds a lone surrogate"):
        validate_inputs(sa, ["\ud800 x"], 100)
    with pytest.raises(InputError, match="Text must be a text"):
        validate_inputs(sa, [{"path": "/etc/passwd"}], 100)  # type: ignore[list-item]
    with pytest.raises(InputError, match="lone surrogate"):
        check_sentence("\udc00 [MASK]", 100)


def test_the_model_list_refuses_a_name_that_is_not_a_text() -> None:
    from nlue.space.models import ModelCatalog, ModelEntry, ModelNotAllowed

    catalog = ModelCatalog([ModelEntry("models/sa", "/nowhere/sa", "classifier", ("sa",))])
    for name in ({"path": "/etc/passwd", "meta": {"_type": "gradio.FileData"}}, ["models/sa"], 7):
        with pytest.raises(ModelNotAllowed, match=r"a text, not a .*; pick one from the list"):
            catalog.require(name, "classifier", "sa")  # type: ignore[arg-type]


def test_what_counts_as_empty_is_what_the_normaliser_removes() -> None:
    from nlue.data.normalize import normalize_text
    from nlue.registry.tasks import get_task

    sa = get_task("sa")
    for blank in ("  \u200b\u200d ", "\u00a0\u2060", "\ufe0f"):  # a variation selector after nothing is removed too
        assert normalize_text(blank) == ""
        with pytest.raises(InputError, match="Text is empty"):
            validate_inputs(sa, [blank], 100)
    # A joiner between Devanagari letters is kept by the normaliser: such a text is not empty.
    assert validate_inputs(sa, [" क\u200dष "], 100) == {"text": "क\u200dष"}
