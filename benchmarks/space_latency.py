"""How the Space holds up under concurrent visitors: latency through Gradio against direct Python calls.

Starts the Space (``spaces/nlue/app.py``) in a child process on loopback, with a tiny
locally built classifier by default, then:

* **through the Space**: ``--clients`` threads, each with its own ``gradio_client.Client``,
  each sending ``--requests`` predictions to the ``/predict`` endpoint (so at most
  ``--clients`` requests are in flight; the Space's queue and per-event concurrency limit
  decide how many run at once); then the same through Gradio's REST API with plain httpx,
  which separates the server's cost from gradio_client's (it polls its event stream);
* **direct**: the same predictions through the same code path in this process
  (``SpaceService.predict``), one after another: the model's own cost, no HTTP, no queue.

Prints p50/p95/mean latency, throughput and the error count of each. Nothing is downloaded.

    python benchmarks/space_latency.py                         # 8 clients x 50 predictions, tiny BERT on sa
    python benchmarks/space_latency.py --clients 4 --requests 20 --model-dir build/models --task sa
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "spaces" / "nlue" / "app.py"
STARTUP_TIMEOUT_S = 180.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def sentences(task_name: str, count: int) -> list[list[str]]:
    """Input fields of ``count`` items of the embedded sample (cycled), as the form's text boxes hold them."""
    from nlue.data.access import load_task
    from nlue.registry.tasks import get_task
    from nlue.space.inference import MAX_FIELDS

    task = get_task(task_name)
    rows = [row for split in load_task(None, task).values() for row in split]
    fields = [[str(row[f]) for f in task.input_fields] for row in rows]
    return [(fields[i % len(fields)] + [""] * MAX_FIELDS)[:MAX_FIELDS] for i in range(count)]


def summary(label: str, latencies: list[float], errors: int, wall: float) -> str:
    if not latencies:
        return f"{label:<28} no successful request ({errors} errors)"
    ordered = sorted(latencies)
    p50 = statistics.median(ordered) * 1000
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000
    mean = statistics.fmean(ordered) * 1000
    return (
        f"{label:<28} {len(latencies):>6} {errors:>6} {p50:>9.1f} {p95:>9.1f} {mean:>9.1f} "
        f"{len(latencies) / wall:>10.1f} {wall:>8.1f}"
    )


def start_space(models: Path, results: Path, port: int, concurrency: int) -> subprocess.Popen:
    env = {
        **os.environ,
        "NLUE_SPACE_MODELS": str(models),
        "NLUE_SPACE_RESULTS": str(results),
        "NLUE_SPACE_CONCURRENCY": str(concurrency),
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    log = open(results.parent / "space.log", "w", encoding="utf-8")  # noqa: SIM115  (closed with the process)
    return subprocess.Popen([sys.executable, str(APP)], env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_until_up(url: str, process: subprocess.Popen, log: Path) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < STARTUP_TIMEOUT_S:
        if process.poll() is not None:
            raise SystemExit(f"the Space exited with {process.returncode}; its log:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return time.perf_counter() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"the Space did not answer at {url} within {STARTUP_TIMEOUT_S:.0f} s")


def run_visitors(
    call: Callable[[int, list[str]], None], inputs: list[list[str]], clients: int, requests: int
) -> tuple[list[float], int, float, list[str]]:
    """``clients`` threads, each sending ``requests`` calls one after another; latencies of the successful ones."""
    latencies: list[float] = []
    problems: list[str] = []
    lock = threading.Lock()

    def visitor(index: int) -> None:
        for n in range(requests):
            fields = inputs[(index * requests + n) % len(inputs)]
            started = time.perf_counter()
            try:
                call(index, fields)
            except Exception as exc:  # an error is a figure here, not a reason to stop
                with lock:
                    problems.append(f"{type(exc).__name__}: {exc}"[:200])
                continue
            with lock:
                latencies.append(time.perf_counter() - started)

    threads = [threading.Thread(target=visitor, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, len(problems), time.perf_counter() - started, problems


def with_gradio_client(url: str, task: str, model: str) -> Callable[[int, list[str]], None]:
    """Calls through ``gradio_client.Client``, one client (one session) per visitor."""
    from gradio_client import Client

    connections: dict[int, Client] = {}

    def call(index: int, fields: list[str]) -> None:
        if index not in connections:
            connections[index] = Client(url, verbose=False, analytics_enabled=False)
        label, _ = connections[index].predict(task, model, *fields, api_name="/predict")
        if not label:
            raise ValueError("empty prediction")

    return call


def with_rest(url: str, task: str, model: str) -> Callable[[int, list[str]], None]:
    """Calls through Gradio's REST API (POST, then read the event stream), as curl would."""
    connections: dict[int, httpx.Client] = {}

    def call(index: int, fields: list[str]) -> None:
        http = connections.setdefault(index, httpx.Client(timeout=60))
        posted = http.post(f"{url}gradio_api/call/predict", json={"data": [task, model, *fields]})
        posted.raise_for_status()
        with http.stream("GET", f"{url}gradio_api/call/predict/{posted.json()['event_id']}") as stream:
            body = "".join(stream.iter_text())
        if "event: complete" not in body:
            raise ValueError(body.strip()[:150])

    return call


def direct(
    models: Path, results: Path, task: str, model: str, inputs: list[list[str]]
) -> tuple[list[float], int, float]:
    from nlue.space.service import SpaceService
    from nlue.space.settings import SpaceSettings

    service = SpaceService(SpaceSettings(models=models, results_dir=results))
    service.predict(task, model, *inputs[0])  # load once, outside the figures
    latencies, errors = [], 0
    started = time.perf_counter()
    for fields in inputs:
        began = time.perf_counter()
        try:
            service.predict(task, model, *fields)
        except Exception:
            errors += 1
            continue
        latencies.append(time.perf_counter() - began)
    return latencies, errors, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent gradio_client visitors (default: 8)")
    parser.add_argument("--requests", type=int, default=50, help="predictions per client (default: 50)")
    parser.add_argument("--task", default="sa", help="task to predict (default: sa)")
    parser.add_argument(
        "--model-dir", type=Path, help="folder of <task>/ checkpoints (default: a tiny BERT built in a temp folder)"
    )
    parser.add_argument("--concurrency", type=int, default=2, help="the Space's model concurrency limit (default: 2)")
    args = parser.parse_args()
    if args.clients < 1 or args.requests < 1:
        parser.error("--clients and --requests must be at least 1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

    loads = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="nlue-space-bench-") as tmp:
        work = Path(tmp)
        os.environ.setdefault("NLUE_CACHE", str(work / "cache"))
        if args.model_dir:
            models = args.model_dir.resolve()
        else:
            from nlue.space.demo_models import build_demo_models

            models = build_demo_models(work / "models", tasks=(args.task,), encoder=False)
        model = f"{models.name}/{args.task}"
        results = work / "results"
        results.mkdir()
        total = args.clients * args.requests
        inputs = sentences(args.task, total)

        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        process = start_space(models, results, port, args.concurrency)
        figures = {}
        try:
            startup = wait_until_up(url, process, work / "space.log")
            for label, make in (("Space via gradio_client", with_gradio_client), ("Space via REST (httpx)", with_rest)):
                call = make(url, args.task, model)
                for index in range(args.clients):  # open each visitor's session outside the figures
                    call(index, inputs[0])
                figures[label] = run_visitors(call, inputs, args.clients, args.requests)
        finally:
            process.terminate()
            process.wait(timeout=30)
        direct_latencies, direct_errors, direct_wall = direct(models, results, args.task, model, inputs)

    import gradio
    import torch

    print(
        f"Space latency: {args.clients} clients x {args.requests} predictions ({total} in all) of {args.task} "
        f"with {model}; Space model concurrency {args.concurrency}"
    )
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores; python "
        f"{platform.python_version()}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"gradio {gradio.__version__}; Space up in {startup:.1f} s; load average {loads[0]:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after (other work on the machine skews every figure)"
    )
    print(f"{'':<28} {'n':>6} {'errors':>6} {'p50 ms':>9} {'p95 ms':>9} {'mean ms':>9} {'req/s':>10} {'wall s':>8}")
    problems = []
    for label, (latencies, errors, wall, found) in figures.items():
        print(summary(label, latencies, errors, wall))
        problems += found
    print(summary("direct Python, sequential", direct_latencies, direct_errors, direct_wall))
    for problem in sorted(set(problems))[:5]:
        print(f"  error: {problem}")
    return 1 if problems or direct_errors else 0


if __name__ == "__main__":
    sys.exit(main())
