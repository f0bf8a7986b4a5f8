"""Bad input and faults on a served Space: refused with a message and a 4xx, never a traceback or a 500.

One Space on loopback, as a deployment would run it: tiny classifiers, a tiny causal LM and a
dataset folder built with only some of NLUE's configs (no ``sa``). The ``classify`` route is
called as scripts call it (one POST, JSON answer); the page's events as Gradio's REST clients
call them (POST, then the event stream).
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
gr = pytest.importorskip("gradio")
httpx = pytest.importorskip("httpx")

from nlue.space.inference import InputError, validate_inputs  # noqa: E402

NEPALI = "आजको खाना एकदमै मीठो थियो।"
DATASET_CONFIGS = ("cola", "mnli")  # what the Space's dataset folder holds: sa is not among them
BAD_REQUEST = 400


@pytest.fixture(scope="module")
def space(tmp_path_factory: pytest.TempPathFactory, one_torch_thread: None) -> Iterator[tuple[str, Any, Any]]:
    from nlue.data.build import build_repo
    from nlue.data.discover import task_sources_from_folder
    from nlue.data.report import BuildOptions
    from nlue.data.sample import sample_data_dir
    from nlue.lm.tiny import save_tiny_causal_lm
    from nlue.space.demo_models import build_demo_models
    from nlue.space.serve import launch
    from nlue.space.service import SpaceService
    from nlue.space.settings import SpaceSettings
    from nlue.space.ui import build_demo

    root = tmp_path_factory.mktemp("space-refusals")
    models = build_demo_models(root / "models", tasks=("sa", "mnli"), encoder=False)
    save_tiny_causal_lm(models / "tiny-gpt2", "gpt2")
    options = BuildOptions(is_sample=True, license="apache-2.0", show_progress=False)
    build_repo(task_sources_from_folder(sample_data_dir(), list(DATASET_CONFIGS)), root / "data", options)
    settings = SpaceSettings(models=models, results_dir=root / "results", dataset=str(root / "data" / "nlue"))
    service = SpaceService(settings)
    demo = build_demo(settings, service)
    launch(settings, demo=demo, host="127.0.0.1", port=_free_port(), block=False, quiet=True)
    try:
        yield demo.local_url, demo, service
    finally:
        demo.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _classify(url: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
    """One POST to the ``classify`` route: the HTTP status and the JSON answer."""
    with httpx.Client(timeout=60) as http:
        if raw is not None:
            answer = http.post(
                f"{url}gradio_api/run/classify", content=raw, headers={"Content-Type": "application/json"}
            )
        else:
            answer = http.post(f"{url}gradio_api/run/classify", json=body)
    return answer.status_code, answer.json()


def _rest_call(url: str, api_name: str, data: list[Any]) -> tuple[str, Any]:
    """A page event through Gradio's REST route (POST, then the event stream): ``(kind, data)`` of its last event."""
    with httpx.Client(timeout=120) as http:
        posted = http.post(f"{url}gradio_api/call/{api_name}", json={"data": data})
        posted.raise_for_status()
        stream = http.get(f"{url}gradio_api/call/{api_name}/{posted.json()['event_id']}").text
    kind, _, payload = stream.split("event: ")[-1].partition("\n")
    return kind.strip(), json.loads(payload.removeprefix("data:").strip() or "null")


def _no_traceback(caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> None:
    """Nothing was logged with a traceback, and nothing printed one (Gradio prints its own to stderr)."""
    logged = [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert not logged, [r.getMessage() for r in logged]
    assert "Traceback" not in capfd.readouterr().err


# --- issue 22, item 9: a file object for a model name, a lone surrogate in a text --------------------


@pytest.mark.parametrize(
    "model",
    [
        {"path": "/etc/passwd", "meta": {"_type": "gradio.FileData"}},  # a file object, as gradio_client sends one
        {"path": "/etc/passwd"},
        ["models/sa"],
        7,
    ],
    ids=["gradio-file", "dict", "list", "number"],
)
def test_classify_refuses_a_model_that_is_not_a_name(
    space: tuple[str, Any, Any], model: Any, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    url, _, _ = space
    caplog.set_level(logging.INFO)
    status, answer = _classify(url, {"data": ["sa", model, [NEPALI]]})
    assert status == BAD_REQUEST, answer
    assert "model" in answer["error"] and "pick one from the list" in answer["error"], answer
    _no_traceback(caplog, capfd)


def test_classify_refuses_a_lone_surrogate_in_a_text(
    space: tuple[str, Any, Any], caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    url, _, _ = space
    caplog.set_level(logging.INFO)
    # JSON may escape half of a UTF-16 pair alone; Python decodes it to a str that is no Unicode text.
    for fields in ('["\\ud800 x"]', '["ok \\udfff"]'):
        raw = f'{{"data": ["sa", "models/sa", {fields}]}}'.encode()
        status, answer = _classify(url, raw=raw)
        assert status == BAD_REQUEST, answer
        assert "Text holds a lone surrogate" in answer["error"], answer
    status, answer = _classify(url, raw=b'{"data": ["mnli", "models/mnli", ["\\u0915", "x \\ud83d"]]}')
    assert status == BAD_REQUEST and "Hypothesis holds a lone surrogate" in answer["error"], answer
    _no_traceback(caplog, capfd)


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


# --- issue 22, item 14: a field of spaces and zero-width characters is empty -------------------------


@pytest.mark.parametrize("blank", ["", "   ", "  \u200b\u200d ", "\u2060\ufeff\u00ad", "\u200c\t\n"])
def test_classify_refuses_an_invisible_field_as_it_refuses_an_empty_one(
    space: tuple[str, Any, Any], blank: str, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    url, _, _ = space
    caplog.set_level(logging.INFO)
    status, answer = _classify(url, {"data": ["sa", "models/sa", [blank]]})
    assert status == BAD_REQUEST, answer
    assert answer["error"].startswith("Text is empty"), answer
    status, answer = _classify(url, {"data": ["mnli", "models/mnli", [NEPALI, blank]]})
    assert status == BAD_REQUEST and answer["error"].startswith("Hypothesis is empty"), answer
    _no_traceback(caplog, capfd)


def test_what_counts_as_empty_is_what_the_normaliser_removes() -> None:
    from nlue.registry.tasks import get_task
    from nlue.text.normalize import normalize_text

    sa = get_task("sa")
    for blank in ("  \u200b\u200d ", "\u00a0\u2060", "\ufe0f"):  # a variation selector after nothing is removed too
        assert normalize_text(blank) == ""
        with pytest.raises(InputError, match="Text is empty"):
            validate_inputs(sa, [blank], 100)
    # A joiner between Devanagari letters is kept by the normaliser: such a text is not empty.
    assert validate_inputs(sa, [" क\u200dष "], 100) == {"text": "क\u200dष"}


def test_classify_still_answers_a_good_request(space: tuple[str, Any, Any]) -> None:
    url, _, _ = space
    status, answer = _classify(url, {"data": ["sa", "models/sa", [NEPALI]], "session_hash": "script"})
    assert status == 200, answer
    record = answer["data"][0]
    assert record["task"] == "sa" and record["model"] == "models/sa"
    assert set(record["probabilities"]) == {"negative", "positive"}
    # An empty extra box (the page's form has three) is not an error, also when it holds only invisible characters.
    status, answer = _classify(url, {"data": ["sa", "models/sa", [NEPALI, "", "\u200b "]]})
    assert status == 200, answer


# --- refusals carry a 4xx; faults a 5xx ----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "told"),
    [
        ({"data": ["sa", "/etc/passwd", [NEPALI]]}, "not a classifier this Space offers"),
        ({"data": ["sa", "models/mnli", [NEPALI]]}, "not offered for sa"),
        ({"data": ["no-such-task", "models/sa", [NEPALI]]}, "pick one of the tasks listed"),
        ({"data": [["sa"], "models/sa", [NEPALI]]}, "pick one of the tasks listed"),
        ({"data": ["sa", "models/sa", ["क" * 5000]]}, "accepts up to 1,000"),
        ({"data": ["sa", "models/sa", NEPALI]}, "must be a list of texts"),
        ({"data": ["sa", "models/sa", [NEPALI, NEPALI]]}, "sa takes 1 field(s)"),
        ({"data": ["sa", "models/sa"]}, "task, model and fields"),
        ({"data": "sa"}, "task, model and fields"),
        ([1, 2, 3], "a JSON object"),
    ],
)
def test_refused_requests_get_a_4xx_with_the_reason(
    space: tuple[str, Any, Any],
    body: Any,
    told: str,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    url, _, _ = space
    caplog.set_level(logging.INFO)
    status, answer = _classify(url, body)
    assert status == BAD_REQUEST, answer
    assert told in answer["error"], answer
    _no_traceback(caplog, capfd)


def test_every_address_of_classify_answers_with_the_spaces_own_route(space: tuple[str, Any, Any]) -> None:
    from nlue.space.http_api import CLASSIFY_PATHS

    url, _, _ = space
    with httpx.Client(timeout=60) as http:
        for path in CLASSIFY_PATHS:  # Gradio answers each of these itself when the Space's route is not first
            answer = http.post(url.rstrip("/") + path, json={"data": ["sa", "models/sa", ["\u200b"]]})
            assert answer.status_code == BAD_REQUEST and "Text is empty" in answer.json()["error"], path


def test_the_queued_classify_route_still_runs_and_refuses_with_the_message(space: tuple[str, Any, Any]) -> None:
    url, _, _ = space
    kind, data = _rest_call(url, "classify", ["sa", "models/sa", [NEPALI]])  # as gradio_client calls it
    assert kind == "complete" and data[0]["model"] == "models/sa", data
    kind, data = _rest_call(url, "classify", ["sa", "models/sa", ["  \u200b "]])
    assert kind == "error" and "Text is empty" in json.dumps(data), data


def test_with_a_login_gradio_keeps_the_classify_address(space: tuple[str, Any, Any]) -> None:
    from nlue.space import http_api

    _, _, service = space
    with gr.Blocks() as demo:
        gr.Markdown("a page")
    assert http_api.with_routes(demo, {"show_error": True}) == {"show_error": True}  # nothing registered for it
    http_api.register(demo, service)
    added = http_api.with_routes(demo, {"app_kwargs": {"routes": ["theirs"], "docs_url": None}})["app_kwargs"]
    assert [route.path for route in added["routes"][:-1]] == list(http_api.CLASSIFY_PATHS)
    assert added["routes"][-1] == "theirs" and added["docs_url"] is None  # the operator's own are kept
    # A login is checked in each of Gradio's routes; the Space's own route would let callers past it.
    assert http_api.with_routes(demo, {"auth": ("user", "pass")}) == {"auth": ("user", "pass")}


def test_a_body_that_is_not_json_is_refused(space: tuple[str, Any, Any]) -> None:
    url, _, _ = space
    for raw in (b"{not json", b'{"data": ["sa", "models/sa", ["\xff"]]}', b"[" * 20_000):
        status, answer = _classify(url, raw=raw)
        assert status == BAD_REQUEST and "JSON" in answer["error"], (raw[:20], answer)


def test_a_body_too_large_is_refused_before_it_is_read(space: tuple[str, Any, Any]) -> None:
    url, _, _ = space
    status, answer = _classify(url, {"data": ["sa", "models/sa", ["क" * 1_000_000]]})
    assert status == 413 and "too large: over 40,096 bytes" in answer["error"], answer


def test_a_fault_of_ours_is_a_500_with_an_apology_and_a_logged_traceback(
    space: tuple[str, Any, Any], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from nlue.boards import text

    url, _, service = space

    async def broken(*args: Any) -> None:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(service, "classify", broken)
    caplog.set_level(logging.INFO)
    status, answer = _classify(url, {"data": ["sa", "models/sa", [NEPALI]]})
    assert status == 500 and answer["error"] == text.UNEXPECTED, answer
    assert "a bug of ours" not in json.dumps(answer)  # the visitor never sees our internals
    assert any(r.exc_info and "a bug of ours" in str(r.exc_info[1]) for r in caplog.records)


def test_a_busy_model_is_a_503_not_a_refusal_of_the_input() -> None:
    from nlue.space.batching import BatcherBusy
    from nlue.space.handler_errors import http_refusal
    from nlue.space.models import ModelNotAllowed
    from nlue.space.service import ModelLoadError

    assert http_refusal(BatcherBusy("models/sa on sa is busy")) == (503, "models/sa on sa is busy")
    assert http_refusal(InputError("Text is empty")) == (400, "Text is empty")
    assert http_refusal(ModelNotAllowed("'x' is not a classifier"))[0] == 400
    # A listed model that fails to load is the Space's fault, not the caller's: a 5xx, with the reason.
    assert http_refusal(ModelLoadError("could not load models/sa: no weights")) == (
        500,
        "could not load models/sa: no weights",
    )


# --- issue 22, item 10: "Ask a language model" offers only the dataset's tasks -------------------


def _dropdown_values(demo: Any, elem_id: str) -> list[str]:
    (found,) = [b for b in demo.blocks.values() if getattr(b, "elem_id", None) == elem_id]
    return [value for _, value in found.choices]


def test_the_llm_section_offers_only_the_tasks_the_dataset_has(space: tuple[str, Any, Any]) -> None:
    from nlue.space.llm_try import llm_tasks

    _, demo, service = space
    assert service.data.configs() == DATASET_CONFIGS
    offered = _dropdown_values(demo, "llm-task")
    assert offered == [name for name in llm_tasks() if name in DATASET_CONFIGS] == ["cola", "mnli"]
    # The data browser lists what it can show, and opens on a config the dataset has.
    (config,) = [b for b in demo.blocks.values() if getattr(b, "label", None) == "Config"]
    assert [value for _, value in config.choices] == list(DATASET_CONFIGS) and config.value == "cola"


def test_asking_for_a_task_the_dataset_lacks_is_refused_with_a_message(
    space: tuple[str, Any, Any], caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    from nlue.errors import NlueError

    url, _, service = space
    caplog.set_level(logging.INFO)
    model = service.catalog.causal_lms()[0]
    kind, data = _rest_call(url, "ask_llm", [model, "sa", "ne", 0])
    assert kind == "error", data
    told = json.dumps(data, ensure_ascii=False)
    assert "sa is not in this Space's dataset" in told and "it has cola, mnli" in told, told
    assert "Something went wrong" not in told
    _no_traceback(caplog, capfd)
    with pytest.raises(NlueError, match="sa is not in this Space's dataset"):
        service.example_inputs("sa")  # the Try tab's "Fill with an example" says the same
    for values, told in (
        ([model, "gmet", "ne", 0], "can be asked cola, mnli here; 'gmet' is not one"),
        ([model, {"path": "x"}, "ne", 0], "is not one"),
        ([model, "cola", "xx", 0], "cola prompts come in"),
        ([model, "cola", "ne", "first"], "must be a whole number"),
        ([{"path": "/etc/passwd"}, "cola", "ne", 0], "pick one from the list"),
    ):
        kind, data = _rest_call(url, "ask_llm", values)
        assert kind == "error" and told in json.dumps(data, ensure_ascii=False), (values, data)
    _no_traceback(caplog, capfd)


def test_asking_for_a_task_the_dataset_has_still_answers(space: tuple[str, Any, Any]) -> None:
    url, _, service = space
    model = service.catalog.causal_lms()[0]
    kind, data = _rest_call(url, "ask_llm", [model, "cola", "ne", 0])
    assert kind == "complete", data
    prompt, _raw, parse, verdict = data
    assert "log-likelihood per label" in parse and "cola test item 0" in verdict and prompt


def test_the_sample_data_has_every_config() -> None:
    from nlue.registry.tasks import TASKS
    from nlue.space.data import DataBrowser

    assert DataBrowser(None).configs() == tuple(TASKS)  # nothing is built to answer this
