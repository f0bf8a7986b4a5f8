"""The Space's micro-batching: concurrent "Try a model" requests share forward passes, and each keeps its own answer.

Three levels: the batcher alone (order, limits, errors), the service with real tiny
classifiers (batched answers equal one-by-one answers), and the page served by Gradio on
loopback (a burst of REST calls, one of them refused, each answered on its own).
"""

from __future__ import annotations

import inspect
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from nlue.errors import NlueError
from nlue.space.batching import GATHER_SHARE, MAX_GATHER_SECONDS, MicroBatcher

NEPALI = [
    "आजको खाना एकदमै मीठो थियो।",
    "यो फिल्म हेर्दा समय खेर गयो।",
    "पसलेले राम्रो व्यवहार गरे।",
    "बस ढिलो आयो र भीड पनि धेरै थियो।",
    "नयाँ पुस्तक पढ्न रमाइलो लाग्यो।",
    "होटलको कोठा फोहोर थियो।",
]


WORDS = " ".join(NEPALI).split()
TOLERANCE = 2e-8  # batched vs alone differ by ~1e-9 (padding changes the matmul shapes, not the maths)


def _words(start: int, count: int) -> str:
    return " ".join(WORDS[(start + k) % len(WORDS)] for k in range(count))


def _wait_until(condition: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the requests to queue up")
        time.sleep(0.005)


def _outcome(work: Callable[[], Any], into: list[Any], index: int) -> None:
    try:
        into[index] = work()
    except Exception as exc:  # the test inspects what each request got, errors included
        into[index] = exc


def burst(batcher: MicroBatcher, hold: Any, calls: list[Callable[[], Any]], queued: int | None = None) -> list[Any]:
    """What each of ``calls`` got when they arrive together at a busy model.

    The first call runs alone and is held at ``hold`` (a lock the test owns, or an event it
    sets) inside its batch, as behind a long forward pass; the others are started once that
    batch is in flight, and ``hold`` is let go only when ``queued`` of them (default: all)
    wait in the batcher. So the batches that follow are known: the waiting items, oldest
    first, in runs of at most ``max_batch_size``.
    """
    results: list[Any] = [None] * len(calls)
    threads = [threading.Thread(target=_outcome, args=(call, results, i)) for i, call in enumerate(calls)]
    releases = hold.release if hasattr(hold, "release") else hold.set
    if hasattr(hold, "acquire"):
        hold.acquire()
    try:
        threads[0].start()
        _wait_until(lambda: batcher.busy and batcher.waiting == 0)  # the first batch took its one item
        for thread in threads[1:]:
            thread.start()
        _wait_until(lambda: batcher.waiting == (len(calls) - 1 if queued is None else queued))
    finally:
        releases()
    for thread in threads:
        thread.join(timeout=120)
    return results


def _batch_size(details: str) -> int:
    return int(details.split("batch of ")[1]) if "batch of" in details else 1


class Recorded:
    """A batch function that records each batch, holds the first at a gate, and fails on a negative item."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.gate = threading.Event()

    def __call__(self, items: list[int]) -> list[int]:
        if not self.batches:
            self.gate.wait(timeout=60)
        self.batches.append(list(items))
        if any(item < 0 for item in items):
            raise ValueError(f"item {min(items)} is negative")
        return [item * 10 for item in items]


# --- the batcher alone ----------------------------------------------------------------------


def _submitting(batcher: MicroBatcher, items: list[int]) -> list[Callable[[], Any]]:
    return [lambda item=item: batcher.submit(item) for item in items]


def test_a_lone_request_runs_at_once_and_alone() -> None:
    run = Recorded()
    run.gate.set()
    batcher = MicroBatcher(run, max_batch_size=8)
    answer = batcher.submit(7)
    assert (answer.value, answer.batch_size, run.batches) == (70, 1, [[7]])
    assert not batcher.busy and batcher.waiting == 0


def test_concurrent_requests_share_a_batch_and_each_gets_its_own_result() -> None:
    run = Recorded()
    batcher = MicroBatcher(run, max_batch_size=8)
    items = [3, 1, 4, 5, 9, 2]
    results = burst(batcher, run.gate, _submitting(batcher, items))
    assert [r.value for r in results] == [10 * item for item in items]  # each request its own answer
    assert sorted(len(b) for b in run.batches) == [1, 5]  # the five that waited ran together
    assert sorted(r.batch_size for r in results) == [1, 5, 5, 5, 5, 5]
    assert (batcher.stats.batches, batcher.stats.items, batcher.stats.largest) == (2, 6, 5)


def test_batches_take_the_oldest_first_and_never_exceed_the_maximum() -> None:
    run = Recorded()
    batcher = MicroBatcher(run, max_batch_size=4)
    items = list(range(100, 110))
    calls = _submitting(batcher, items)
    results: list[Any] = [None] * len(calls)
    threads = [threading.Thread(target=_outcome, args=(call, results, i)) for i, call in enumerate(calls)]
    threads[0].start()
    _wait_until(lambda: batcher.busy and batcher.waiting == 0)
    for index, thread in enumerate(threads[1:], start=1):  # one by one, so that arrival order is known
        thread.start()
        _wait_until(lambda index=index: batcher.waiting == index)
    run.gate.set()
    for thread in threads:
        thread.join(timeout=60)
    assert run.batches == [[100], [101, 102, 103, 104], [105, 106, 107, 108], [109]]
    assert [r.value for r in results] == [10 * item for item in items]
    assert [r.batch_size for r in results] == [1, 4, 4, 4, 4, 4, 4, 4, 4, 1]


def test_an_error_reaches_only_the_request_that_caused_it() -> None:
    run = Recorded()
    batcher = MicroBatcher(run, max_batch_size=8)
    results = burst(batcher, run.gate, _submitting(batcher, [1, 2, -3, 4]))
    assert isinstance(results[2], ValueError) and "item -3 is negative" in str(results[2])
    assert sorted(r.value for i, r in enumerate(results) if i != 2) == [10, 20, 40]
    # The failed batch of three ran again item by item; only the bad item failed the second time.
    assert run.batches[0] == [1] and sorted(run.batches[1]) == [-3, 2, 4]
    assert sorted(run.batches[2:]) == [[-3], [2], [4]]
    assert batcher.stats.retried_alone == 1 and not batcher.busy


def test_a_batch_function_that_miscounts_fails_every_request_loudly() -> None:
    batcher: MicroBatcher[int, int] = MicroBatcher(lambda items: [], max_batch_size=4, name="broken")
    with pytest.raises(NlueError, match="broken: the batch function returned 0 results for 1 items"):
        batcher.submit(1)
    with pytest.raises(NlueError, match="max_batch_size must be at least 1"):
        MicroBatcher(lambda items: items, max_batch_size=0)


def test_every_batch_runs_on_the_batchers_one_thread_which_stops_when_idle() -> None:
    threads: list[threading.Thread] = []

    def run(items: list[int]) -> list[int]:
        threads.append(threading.current_thread())
        time.sleep(0.01)  # long enough for requests to pile up behind a batch
        return items

    batcher = MicroBatcher(run, max_batch_size=3, idle_seconds=0.2)
    callers = [threading.Thread(target=batcher.submit, args=(i,)) for i in range(12)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(timeout=30)
    assert batcher.stats.items == 12 and batcher.stats.batches < 12  # some requests shared a batch
    assert len(set(threads)) == 1 and threads[0] not in callers
    _wait_until(lambda: batcher._worker is None)  # idle: the worker has gone
    assert batcher.submit(5).value == 5 and threads[-1] is not threads[0]  # and a new one serves the next request


def test_under_load_the_next_batch_waits_a_moment_to_fill_and_a_lone_request_never_waits() -> None:
    run = Recorded()
    run.gate.set()
    batcher = MicroBatcher(lambda items: (time.sleep(0.5), run(items))[1], max_batch_size=4)
    assert batcher.submit(1).batch_size == 1 and batcher._window == 0  # alone: no waiting next time either
    burst(batcher, threading.Event(), _submitting(batcher, [2, 3, 4]))  # 2 alone, then 3 and 4 together
    assert batcher._window == pytest.approx(min(MAX_GATHER_SECONDS, GATHER_SHARE * 0.5), rel=0.2)
    # Two visitors a few milliseconds apart, as when answers have just gone out: one batch, not two.
    results = [None, None]
    first = threading.Thread(target=_outcome, args=(lambda: batcher.submit(5), results, 0))
    first.start()
    time.sleep(0.005)
    _outcome(lambda: batcher.submit(6), results, 1)
    first.join(timeout=30)
    assert [r.batch_size for r in results] == [2, 2] and run.batches[-1] == [5, 6]


def test_awaiting_requests_hold_no_thread_and_share_batches_with_threaded_ones() -> None:
    import asyncio

    run = Recorded()
    batcher = MicroBatcher(run, max_batch_size=8)
    threaded: list[Any] = [None]
    first = threading.Thread(target=_outcome, args=(lambda: batcher.submit(1), threaded, 0))
    first.start()
    _wait_until(lambda: batcher.busy and batcher.waiting == 0)  # held at the gate, as behind a forward pass

    async def visitors() -> list[Any]:
        tasks = [asyncio.ensure_future(batcher.submit_async(item)) for item in range(2, 32)]
        while batcher.waiting < 30:  # all 30 wait on this one event-loop thread
            await asyncio.sleep(0.005)
        waiting_threads = threading.active_count()
        run.gate.set()
        return [waiting_threads, *(await asyncio.gather(*tasks))]

    before = threading.active_count()
    waiting_threads, *answers = asyncio.run(visitors())
    first.join(timeout=30)
    assert waiting_threads == before  # no thread per waiting request
    assert [a.value for a in answers] == [10 * item for item in range(2, 32)]
    assert run.batches[0] == [1] and [len(b) for b in run.batches[1:]] == [8, 8, 8, 6]
    assert threaded[0].value == 10


def test_a_waiter_that_gave_up_and_whose_event_loop_closed_does_not_stop_the_worker() -> None:
    import asyncio

    run = Recorded()
    batcher = MicroBatcher(run, max_batch_size=8)

    async def impatient() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(batcher.submit_async(1), timeout=0.05)

    asyncio.run(impatient())  # gave up while its item was held at the gate; its loop is closed now
    run.gate.set()
    after: list[Any] = [None]
    caller = threading.Thread(target=_outcome, args=(lambda: batcher.submit(2), after, 0), daemon=True)
    caller.start()
    caller.join(timeout=30)
    assert not caller.is_alive(), "the worker died answering the orphan; the next request waits forever"
    assert after[0].value == 20 and run.batches[0] == [1]


def test_a_full_waiting_line_refuses_new_requests_at_once_and_recovers() -> None:
    import asyncio

    from nlue.space.batching import BatcherBusy

    run = Recorded()
    batcher = MicroBatcher(run, max_batch_size=2, name="models/sa on sa", max_waiting=3)
    results = burst(batcher, run.gate, _submitting(batcher, [1, 2, 3, 4]), queued=3)
    assert [r.value for r in results] == [10, 20, 30, 40]
    held = threading.Event()
    batcher._run_batch = lambda items: (held.wait(timeout=60), [10 * i for i in items])[1]
    callers = [threading.Thread(target=batcher.submit, args=(i,)) for i in range(4)]
    for caller in callers:
        caller.start()
        time.sleep(0.01)
    _wait_until(lambda: batcher.busy and batcher.waiting == 3)
    with pytest.raises(BatcherBusy, match="models/sa on sa is busy: 3 requests are waiting already"):
        batcher.submit(9)
    with pytest.raises(BatcherBusy):
        asyncio.run(batcher.submit_async(9))
    held.set()
    for caller in callers:
        caller.join(timeout=30)
    assert batcher.submit(5).value == 50  # the line has room again
    with pytest.raises(NlueError, match="max_waiting must be at least 1"):
        MicroBatcher(run, max_waiting=0)


def test_openmp_is_asked_to_let_idle_cores_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from nlue.space.batching import OPENMP_WAIT_POLICY, let_idle_cores_sleep

    monkeypatch.delenv(OPENMP_WAIT_POLICY, raising=False)
    monkeypatch.setitem(sys.modules, "torch", object())
    assert let_idle_cores_sleep() is False  # too late once torch is loaded: nothing is changed
    assert OPENMP_WAIT_POLICY not in os.environ
    monkeypatch.delitem(sys.modules, "torch")
    assert let_idle_cores_sleep() is True
    assert os.environ[OPENMP_WAIT_POLICY] == "PASSIVE"
    monkeypatch.setenv(OPENMP_WAIT_POLICY, "ACTIVE")  # an operator's own choice is kept
    assert let_idle_cores_sleep() is True and os.environ[OPENMP_WAIT_POLICY] == "ACTIVE"


# --- the service, with real tiny classifiers --------------------------------------------------


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, one_torch_thread: None) -> Any:
    pytest.importorskip("transformers")
    from nlue.space.demo_models import build_demo_models
    from nlue.space.service import SpaceService
    from nlue.space.settings import SpaceSettings

    root = tmp_path_factory.mktemp("space-batching")
    models = build_demo_models(root / "models", tasks=("sa", "mnli", "stsb"), encoder=False)
    return SpaceService(SpaceSettings(models=models, results_dir=root / "results", max_batch_size=4))


def _model(service: Any, task: str) -> tuple[Any, MicroBatcher, Any]:
    from nlue.registry.tasks import TASKS

    entry = service.catalog.require(f"models/{task}", "classifier", TASKS[task].name)
    return service._get_model(entry), service.batcher(entry, TASKS[task].name), TASKS[task]


def _told_apart(loaded: Any, spec: Any, fields: int, count: int = 6) -> tuple[list[list[str]], list[dict]]:
    """``count`` inputs of different lengths whose answers, predicted alone, are far apart, and those answers.

    The tiny random models answer nearly alike whatever the input (two inputs can differ by
    1e-8), so inputs are picked whose answers differ by far more than the tolerance: a request
    handed another's answer then fails the comparison.
    """
    from nlue.space.inference import predict_example, validate_inputs

    rows: list[list[str]] = []
    answers: list[dict] = []
    for n in range(2, 40):  # lengths differ, so batches pad the shorter items
        row = [_words(5 * n, n), _words(3 * n + 1, 40 - n)][:fields] + [""] * (3 - fields)
        answer = predict_example(loaded, spec, validate_inputs(spec, row, 1000))
        if all(max(abs(answer[k] - other[k]) for k in answer) > 10 * TOLERANCE for other in answers):
            rows.append(row)
            answers.append(answer)
        if len(rows) == count:
            return rows, answers
    raise AssertionError("the tiny model answers too many inputs alike to tell them apart")


def _assert_each_got_its_own(shown: list[dict[str, float]], expected: list[dict[str, float]]) -> None:
    """``shown[i]`` is ``expected[i]`` up to float rounding (and so no other item's answer)."""
    for got, want in zip(shown, expected, strict=True):
        assert list(got) == list(want)
        assert list(got.values()) == pytest.approx(list(want.values()), abs=TOLERANCE)


@pytest.mark.parametrize("task", ["sa", "mnli"])
def test_batched_answers_equal_one_by_one_answers(service: Any, task: str) -> None:
    loaded, batcher, spec = _model(service, task)
    rows, alone = _told_apart(loaded, spec, len(spec.input_fields))
    calls = [lambda row=row: service.predict(task, f"models/{task}", *row) for row in rows]
    results = burst(batcher, loaded.lock, calls)
    assert not [r for r in results if isinstance(r, Exception)]
    _assert_each_got_its_own([output for output, _ in results], alone)
    # One alone, then the five that waited: four (the maximum), then the last one.
    assert sorted(_batch_size(details) for _, details in results) == [1, 1, 4, 4, 4, 4]


def test_the_pages_coroutine_answers_as_the_threaded_call_does(service: Any) -> None:
    import asyncio

    fields = [NEPALI[0], NEPALI[1], ""]
    threaded, _ = service.predict("mnli", "models/mnli", *fields)
    awaited, awaited_details = asyncio.run(service.predict_async("mnli", "models/mnli", *fields))
    assert list(awaited) == list(threaded) and list(awaited.values()) == pytest.approx(list(threaded.values()))
    assert awaited_details.startswith("`models/mnli` · mnli · ")
    with pytest.raises(NlueError, match="not a classifier this Space offers"):
        asyncio.run(service.predict_async("mnli", "/etc/passwd", *fields))


def test_a_bad_request_in_a_burst_fails_alone(service: Any) -> None:
    from nlue.space.inference import InputError
    from nlue.space.models import ModelNotAllowed

    loaded, batcher, _ = _model(service, "sa")
    calls = [
        lambda: service.predict("sa", "models/sa", NEPALI[0], "", ""),
        lambda: service.predict("sa", "models/sa", NEPALI[1], "", ""),
        lambda: service.predict("sa", "models/sa", "क" * 5000, "", ""),
        lambda: service.predict("sa", "models/mnli", NEPALI[2], "", ""),
        lambda: service.predict("sa", "models/sa", NEPALI[3], "", ""),
    ]
    results = burst(batcher, loaded.lock, calls, queued=2)  # the two refused never reach the batcher
    assert isinstance(results[2], InputError) and "accepts up to 1,000" in str(results[2])
    assert isinstance(results[3], ModelNotAllowed)
    for index in (0, 1, 4):
        output, details = results[index]
        assert set(output) == {"negative", "positive"} and "models/sa" in details
    assert sorted(_batch_size(results[i][1]) for i in (0, 1, 4)) == [1, 2, 2]


# --- through Gradio --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def space(service: Any) -> Iterator[tuple[str, Any]]:
    gr = pytest.importorskip("gradio")
    from nlue.space.serve import launch
    from nlue.space.ui import build_demo

    demo = build_demo(service.settings, service)
    assert isinstance(demo, gr.Blocks)
    launch(service.settings, demo=demo, host="127.0.0.1", port=_free_port(), block=False, quiet=True)
    try:
        yield demo.local_url, demo
    finally:
        demo.close()


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _rest_predict(url: str, session: str, fields: list[str], model: str = "models/sa") -> tuple[str, Any]:
    """One REST call (POST, then read the event stream): ``("complete", data)`` or ``("error", message)``."""
    import httpx

    with httpx.Client(timeout=60) as http:
        body = {"data": ["sa", model, *fields], "session_hash": session}
        posted = http.post(f"{url}gradio_api/call/predict", json=body)
        posted.raise_for_status()
        stream = http.get(f"{url}gradio_api/call/predict/{posted.json()['event_id']}").text
    event = stream.split("event: ")[-1]
    kind, _, data = event.partition("\n")
    return kind.strip(), json.loads(data.removeprefix("data:").strip() or "null")


def test_the_space_serves_a_burst_in_batches_with_an_answer_per_request(space: tuple[str, Any], service: Any) -> None:
    url, _ = space
    loaded, batcher, spec = _model(service, "sa")
    rows, expected = _told_apart(loaded, spec, len(spec.input_fields))
    calls = [lambda i=i: _rest_predict(url, f"visitor-{i}", rows[i]) for i in range(len(rows))]
    calls.append(lambda: _rest_predict(url, "intruder", [NEPALI[0], "", ""], model="/etc/passwd"))
    results = burst(batcher, loaded.lock, calls, queued=len(rows) - 1)
    refused = results[-1]
    assert refused[0] == "error" and "not a classifier this Space offers" in json.dumps(refused[1])
    assert all(kind == "complete" for kind, _ in results[:-1]), results
    labels = [data[0]["confidences"] for _, data in results[:-1]]
    shown = [
        {c["label"]: c["confidence"] for c in sorted(label, key=lambda c: spec.label_names.index(c["label"]))}
        for label in labels
    ]
    _assert_each_got_its_own(shown, expected)  # each visitor got the answer to their own text
    assert sorted(_batch_size(data[1]) for _, data in results[:-1]) == [1, 1, 4, 4, 4, 4]


def _classify(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    """One call of the Space's ``classify`` API: the HTTP status and the JSON answer."""
    import httpx

    with httpx.Client(timeout=60) as http:
        answer = http.post(f"{url}gradio_api/run/classify", json=body)
    return answer.status_code, answer.json()


def test_the_classify_api_answers_in_one_request_with_the_pages_checks_and_batches(
    space: tuple[str, Any], service: Any
) -> None:
    url, demo = space
    events = {fn.api_name: fn for fn in demo.fns.values() if fn.api_name}
    classify = events["classify"]
    assert classify.queue is False and classify.preprocess is False  # no queue, no component on the page
    assert {type(block).__name__ for block in classify.inputs} == {"Api"}
    loaded, batcher, spec = _model(service, "sa")
    rows, expected = _told_apart(loaded, spec, len(spec.input_fields))
    calls = [
        lambda i=i: _classify(url, {"data": ["sa", "models/sa", rows[i]], "session_hash": f"script-{i}"})
        for i in range(len(rows))
    ]
    calls.append(lambda: _classify(url, {"data": ["sa", "/etc/passwd", [NEPALI[0]]]}))
    calls.append(lambda: _classify(url, {"data": ["sa", "models/sa", ["क" * 5000]]}))
    results = burst(batcher, loaded.lock, calls, queued=len(rows) - 1)
    assert all(status == 200 for status, _ in results[: len(rows)]), results
    answers = [data["data"][0] for _, data in results[: len(rows)]]
    _assert_each_got_its_own([a["probabilities"] for a in answers], expected)
    assert [a["label"] for a in answers] == [max(e, key=e.__getitem__) for e in expected]
    assert sorted(a["batch_size"] for a in answers) == [1, 1, 4, 4, 4, 4]
    assert {a["model"] for a in answers} == {"models/sa"} and {a["task"] for a in answers} == {"sa"}
    (refused, why), (too_long, told) = results[len(rows) :]
    assert refused >= 400 and "not a classifier this Space offers" in why["error"]
    assert too_long >= 400 and "accepts up to 1,000" in told["error"]
    for fields, told in (
        ("आज", "must be a list of texts"),
        ([NEPALI[0], NEPALI[1]], "sa takes 1 field(s) (Text); got 2 texts"),
    ):
        status, data = _classify(url, {"data": ["sa", "models/sa", fields]})
        assert status >= 400 and told in data["error"], data  # a string would have been read letter by letter
    # stsb: the score, clipped to the task's range as on the page, and what the model said.
    status, data = _classify(url, {"data": ["stsb", "models/stsb", NEPALI[:2]]})
    score = data["data"][0]
    assert status == 200 and score["range"] == [0, 5] and 0 <= score["score"] <= 5
    assert score["score"] == min(max(score["model_score"], 0), 5)


def test_the_page_gives_predictions_a_wide_pool_and_gmet_a_narrow_one(space: tuple[str, Any], service: Any) -> None:
    _, demo = space
    settings = service.settings
    events = {fn.api_name: fn for fn in demo.fns.values() if fn.api_name}
    assert events["predict"].concurrency_limit == settings.predict_concurrency == 2 * settings.max_batch_size
    assert events["fill_blank"].concurrency_limit == settings.model_concurrency
    assert events["predict"].concurrency_id != events["fill_blank"].concurrency_id
    assert events["predict"].preprocess is False and events["predict"].batch is False
    assert inspect.iscoroutinefunction(events["predict"].fn)  # waits for its batch on the event loop, no thread
    assert demo._queue.max_size == settings.queue_size
    assert demo._queue.live_updates is False  # queue positions on a timer, not per started job
    assert demo._queue.ANALYTICS_MAX_EVENTS <= 1000  # Gradio's monitoring records stay small
    assert demo.max_threads >= settings.predict_concurrency + settings.model_concurrency


def test_batch_size_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from nlue.space.settings import SpaceSettings

    monkeypatch.setenv("NLUE_SPACE_MAX_BATCH", "16")
    settings = SpaceSettings.from_env(models=tmp_path)
    assert settings.max_batch_size == 16 and settings.predict_concurrency == 32
    monkeypatch.setenv("NLUE_SPACE_MAX_BATCH", "0")
    with pytest.raises(NlueError, match="max_batch_size must be at least 1"):
        SpaceSettings.from_env(models=tmp_path)


def test_limits_are_sized_from_the_machine_unless_the_environment_says_otherwise(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from nlue.space.settings import Machine, SpaceSettings

    for name in ("NLUE_SPACE_MAX_BATCH", "NLUE_SPACE_QUEUE_SIZE", "NLUE_SPACE_CONCURRENCY"):
        monkeypatch.delenv(name, raising=False)
    small = SpaceSettings.from_env(models=tmp_path, machine=Machine(cores=2, gpu=False))
    assert (small.max_batch_size, small.predict_concurrency, small.queue_size) == (8, 16, 256)
    assert (small.model_concurrency, small.data_concurrency) == (2, 4)
    assert small == SpaceSettings(models=tmp_path, results_dir=small.results_dir)  # the class defaults: 2 CPU cores
    big = SpaceSettings.from_env(models=tmp_path, machine=Machine(cores=16, gpu=False))
    assert (big.max_batch_size, big.data_concurrency, big.queue_size) == (8, 16, 256)
    gpu = SpaceSettings.from_env(models=tmp_path, machine=Machine(cores=8, gpu=True))
    assert (gpu.max_batch_size, gpu.predict_concurrency, gpu.queue_size, gpu.model_concurrency) == (32, 64, 1024, 4)
    monkeypatch.setenv("NLUE_SPACE_MAX_BATCH", "4")  # the queue follows the batch size the operator chose...
    assert SpaceSettings.from_env(models=tmp_path, machine=Machine(2, True)).queue_size == 128
    monkeypatch.setenv("NLUE_SPACE_QUEUE_SIZE", "50")  # ...unless set as well
    assert SpaceSettings.from_env(models=tmp_path, machine=Machine(2, True)).queue_size == 50
    found = Machine.detect()
    assert 1 <= found.cores <= (os.cpu_count() or 1) and isinstance(found.gpu, bool)
