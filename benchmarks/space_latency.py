"""How the Space holds up under concurrent visitors: requests/s through Gradio against direct Python calls.

Starts the Space (``spaces/nlue/app.py``) in a child process on loopback with a classifier
built here with random weights (``--size``: ``tiny``, 4 layers of width 32; ``small``, 4 of
width 256; ``base``, BERT-base's 12 of width 768), nothing downloaded, and measures:

* **direct, sequential**: ``SpaceService.predict`` one call after another in this process:
  one forward pass per request, no HTTP, no queue;
* **direct, batched**: ``--clients`` threads calling the same ``SpaceService.predict`` at
  once, so requests are micro-batched exactly as in the Space (``nlue.space.batching``,
  ``--max-batch``): the reference the Space is held to, run before and again after the
  Space's runs, and the two taken together ("both");
* **Space via gradio_client**: ``--clients`` threads, each with its own
  ``gradio_client.Client``, each sending ``--requests`` predictions to ``/predict``;
* **Space via REST (queue)**: the same through Gradio's REST API with plain httpx (POST, then
  read the event stream), which leaves out gradio_client's own costs;
* **Space via classify API**: the Space's ``classify`` endpoint, one POST per prediction with
  the JSON answer in the response; not queued, same checks and micro-batches, as a script
  would call it;
* **classify via gradio_client**: ``gradio_client`` on the same endpoint (it joins Gradio's
  queue protocol whatever the endpoint, so this shows what a gradio_client user gets there);
* **soak** (``--soak-seconds``, 0 to skip): ``--soak-clients`` visitors sending predictions
  back to back for that long through the queue, then through ``classify`` (``--soak-route``),
  with the Space process's memory sampled.

Each row: requests, errors, p50/p95/p99/mean latency, requests/s, the mean batch size the
requests ran in (each answer says it), for the Space rows the ratio of its requests/s to
the direct batched rate (goal: at least 0.8 at 8 clients, 0 errors), and the CPU time per
request of the Space process and of the visitors. The visitors run on the same machine as
the Space and take CPU from it; the load average before and after is printed, since other
work on the machine skews every figure.

Gradio costs the Space process a few milliseconds of CPU per request whatever the model
(HTTP, queue, event stream, pre- and postprocessing). A base-size model costs far more
than that, so the Space can come close to the direct rate; a tiny one costs less, so
Gradio's share decides the rate and the ratio stays low.

    python benchmarks/space_latency.py                                    # base: 8 clients x 50, two 60 s soaks of 64
    python benchmarks/space_latency.py --size tiny --soak-seconds 0       # Gradio's own cost dominates
    python benchmarks/space_latency.py --clients 4 --requests 20 --model-dir build/models --task sa
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "spaces" / "nlue" / "app.py"
STARTUP_TIMEOUT_S = 180.0
GOAL_RATIO = 0.8
SIZES = {
    "small": {"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 1024},
    "base": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072},
}
BATCH_NOTE = re.compile(r"batch of (\d+)")


@dataclass
class Figures:
    """What one way of calling the model gave: latencies of the successful calls, errors, wall time."""

    latencies: list[float] = field(default_factory=list)
    batch_sizes: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    wall: float = 0.0
    rss_mib: list[float] = field(default_factory=list)
    server_cpu: float = float("nan")  # CPU seconds the Space process used during the run
    client_cpu: float = float("nan")  # CPU seconds this process (the visitors) used during the run

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.wall if self.wall else 0.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def build_model(root: Path, task_name: str, size: str) -> Path:
    """``root/<task>/``: a BERT classifier of ``size`` with random weights and a sample-trained tokenizer."""
    if size == "tiny":
        from nlue.space.demo_models import build_demo_models

        return build_demo_models(root, tasks=(task_name,), encoder=False)
    import torch
    from transformers import AutoModelForSequenceClassification

    from nlue.lm.modeling import classifier_config_kwargs
    from nlue.lm.tiny import tiny_config, train_tokenizer
    from nlue.registry.tasks import get_task

    tokenizer = train_tokenizer("bert", vocab_size=4000)
    config = tiny_config("bert", len(tokenizer), tokenizer, **classifier_config_kwargs(get_task(task_name)))
    for key, value in {**SIZES[size], "max_position_embeddings": 512}.items():
        setattr(config, key, value)
    torch.manual_seed(0)
    AutoModelForSequenceClassification.from_config(config).save_pretrained(root / task_name)
    tokenizer.save_pretrained(root / task_name)
    return root


def sentences(task_name: str, count: int) -> list[list[str]]:
    """Input fields of ``count`` items of the embedded sample (cycled), as the form's text boxes hold them."""
    from nlue.data.access import load_task
    from nlue.registry.tasks import get_task
    from nlue.space.inference import max_fields

    boxes = max_fields()
    task = get_task(task_name)
    rows = [row for split in load_task(None, task).values() for row in split]
    fields = [[str(row[f]) for f in task.input_fields] for row in rows]
    return [(fields[i % len(fields)] + [""] * boxes)[:boxes] for i in range(count)]


def batch_size_of(details: str) -> int:
    found = BATCH_NOTE.search(details)
    return int(found.group(1)) if found else 1


def percentile(ordered: list[float], share: float) -> float:
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def row(label: str, figures: Figures, reference: float | None = None) -> str:
    if not figures.latencies:
        return f"{label:<30} no successful request ({len(figures.problems)} errors)"
    ordered = sorted(figures.latencies)
    ms = [1000 * v for v in (statistics.median(ordered), percentile(ordered, 0.95), percentile(ordered, 0.99))]
    mean_batch = statistics.fmean(figures.batch_sizes) if figures.batch_sizes else float("nan")
    ratio = f"{figures.rate / reference:>7.2f}" if reference else f"{'':>7}"
    cpu = f"{1000 * figures.server_cpu / len(ordered):>5.1f}/{1000 * figures.client_cpu / len(ordered):<5.1f}"
    return (
        f"{label:<30} {len(ordered):>6} {len(figures.problems):>6} {ms[0]:>8.1f} {ms[1]:>8.1f} {ms[2]:>8.1f} "
        f"{1000 * statistics.fmean(ordered):>8.1f} {figures.rate:>8.1f} {mean_batch:>6.2f} {ratio} {figures.wall:>7.1f}"
        f" {cpu if figures.server_cpu == figures.server_cpu else ''}"
    )


def start_space(models: Path, results: Path, port: int, max_batch: int, log: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "NLUE_SPACE_MODELS": str(models),
        "NLUE_SPACE_RESULTS": str(results),
        "NLUE_SPACE_MAX_BATCH": str(max_batch),
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    handle = open(log, "w", encoding="utf-8")  # noqa: SIM115  (closed with the process)
    return subprocess.Popen([sys.executable, str(APP)], env=env, stdout=handle, stderr=subprocess.STDOUT)


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


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    """Resident memory of process ``pid`` (Linux /proc), in MiB; NaN where it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def run_visitors(
    call: Callable[[int, list[str]], str],
    inputs: list[list[str]],
    clients: int,
    requests: int | None = None,
    seconds: float | None = None,
    watch_pid: int | None = None,
) -> Figures:
    """``clients`` threads, each sending calls back to back: ``requests`` each, or for ``seconds``."""
    figures = Figures()
    lock = threading.Lock()
    deadline = time.perf_counter() + (seconds or 0)
    finished = threading.Event()

    def visitor(index: int) -> None:
        n = 0
        while (n < requests) if requests is not None else (time.perf_counter() < deadline):
            fields = inputs[(index * 7919 + n) % len(inputs)]
            n += 1
            started = time.perf_counter()
            try:
                details = call(index, fields)
            except Exception as exc:  # an error is a figure here, not a reason to stop
                with lock:
                    figures.problems.append(f"{type(exc).__name__}: {exc}"[:200])
                continue
            with lock:
                figures.latencies.append(time.perf_counter() - started)
                figures.batch_sizes.append(batch_size_of(details))

    def watch() -> None:
        while watch_pid is not None and not finished.wait(1.0):
            figures.rss_mib.append(rss_mib(watch_pid))
        if watch_pid is not None:
            figures.rss_mib.append(rss_mib(watch_pid))

    threads = [threading.Thread(target=visitor, args=(i,)) for i in range(clients)]
    watcher = threading.Thread(target=watch, daemon=True)
    server_before, client_before = cpu_seconds(watch_pid) if watch_pid else 0.0, time.process_time()
    started = time.perf_counter()
    watcher.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    figures.wall = time.perf_counter() - started
    finished.set()
    watcher.join()  # its last sample is taken before the caller may stop the Space
    figures.client_cpu = time.process_time() - client_before
    if watch_pid:
        figures.server_cpu = cpu_seconds(watch_pid) - server_before
    return figures


def per_visitor(open_client: Callable[[], Any]) -> Callable[[int], Any]:
    """Each visitor's own client, opened at its first call and kept.

    Not ``dict.setdefault``: that would build a client (and its TLS context, ~20 ms of CPU for
    httpx) on every call, a cost that would be charged to the Space since both share the cores.
    """
    clients: dict[int, Any] = {}

    def client(index: int) -> Any:
        if index not in clients:
            clients[index] = open_client()
        return clients[index]

    return client


def open_gradio_client(url: str) -> Any:
    """A ``gradio_client.Client``: one session.

    ``ssl_verify=False`` because gradio_client opens new httpx clients for every call, and each
    loads the CA bundle (about 40 ms of CPU here) unless told not to verify; on plain-HTTP
    loopback there is nothing to verify, and that client-side cost would be charged to the Space.
    """
    from gradio_client import Client

    return Client(url, verbose=False, analytics_enabled=False, ssl_verify=False)


def classify_details(answer: dict[str, Any]) -> str:
    """A ``classify`` answer checked to hold a prediction, as the batch note :func:`batch_size_of` reads."""
    if not (answer.get("label") or "score" in answer):
        raise ValueError(f"no prediction in {answer}")
    return f"batch of {answer['batch_size']}"


def with_gradio_client(url: str, task: str, model: str) -> Callable[[int, list[str]], str]:
    """Calls through ``gradio_client.Client`` on the page's ``predict``, one client (one session) per visitor."""
    client = per_visitor(lambda: open_gradio_client(url))

    def call(index: int, fields: list[str]) -> str:
        label, details = client(index).predict(task, model, *fields, api_name="/predict")
        if not label:
            raise ValueError("empty prediction")
        return details

    return call


def with_gradio_client_classify(url: str, task: str, model: str) -> Callable[[int, list[str]], str]:
    """``gradio_client.Client.predict`` on the ``classify`` endpoint, one client per visitor."""
    client = per_visitor(lambda: open_gradio_client(url))

    def call(index: int, fields: list[str]) -> str:
        return classify_details(client(index).predict(task=task, model=model, fields=fields, api_name="/classify"))

    return call


def with_rest(url: str, task: str, model: str) -> Callable[[int, list[str]], str]:
    """Calls through Gradio's REST API (POST, then read the event stream), as curl would.

    Each visitor sends its own ``session_hash``, as a browser tab does. Without one, Gradio
    makes a new session per call: it renders the config of every block of the page (about
    6 ms on this page, on the server's event loop) and keeps it until its session capacity.
    """
    client = per_visitor(lambda: httpx.Client(timeout=120))

    def call(index: int, fields: list[str]) -> str:
        http = client(index)
        body = {"data": [task, model, *fields], "session_hash": f"bench-{id(client)}-{index}"}
        posted = http.post(f"{url}gradio_api/call/predict", json=body)
        posted.raise_for_status()
        with http.stream("GET", f"{url}gradio_api/call/predict/{posted.json()['event_id']}") as stream:
            body = "".join(stream.iter_text())
        if "event: complete" not in body:
            raise ValueError(body.strip()[:150])
        return body

    return call


def with_one_request(url: str, task: str, model: str) -> Callable[[int, list[str]], str]:
    """Calls to the Space's ``classify`` API (one POST, JSON answer; not queued, same batches), as a script would.

    The Space serves this address with a route of its own (nlue.space.http_api: refusals as 4xx), which
    builds no Gradio session; the ``session_hash`` the README's example sends is accepted and ignored.
    """
    client = per_visitor(lambda: httpx.Client(timeout=120))

    def call(index: int, fields: list[str]) -> str:
        body = {"data": [task, model, fields], "session_hash": f"script-{id(client)}-{index}"}
        posted = client(index).post(f"{url}gradio_api/run/classify", json=body)
        posted.raise_for_status()
        [answer] = posted.json()["data"]
        return classify_details(answer)

    return call


ROUTES: dict[str, Callable[[str, str, str], Callable[[int, list[str]], str]]] = {
    "Space via gradio_client": with_gradio_client,
    "Space via REST (queue)": with_rest,
    "Space via classify API": with_one_request,
    "classify via gradio_client": with_gradio_client_classify,
}
SOAK_ROUTES = {
    "queue": ("Space via REST (queue)",),
    "classify": ("Space via classify API",),
    "both": ("Space via REST (queue)", "Space via classify API"),
}


def direct(
    models: Path, results: Path, task: str, model: str, inputs: list[list[str]], clients: int, max_batch: int
) -> tuple[Figures, Figures]:
    """The same predictions in this process: one after another, then from ``clients`` threads at once."""
    from nlue.space.service import SpaceService
    from nlue.space.settings import SpaceSettings

    service = SpaceService(SpaceSettings(models=models, results_dir=results, max_batch_size=max_batch))
    service.predict(task, model, *inputs[0])  # load once, outside the figures

    def call(index: int, fields: list[str]) -> str:
        return service.predict(task, model, *fields)[1]

    sequential = run_visitors(call, inputs, clients=1, requests=len(inputs))
    batched = run_visitors(call, inputs, clients=clients, requests=len(inputs) // clients)
    return sequential, batched


def merged(first: Figures, second: Figures) -> Figures:
    """Two runs of the same calls as one: the reference measured before and after the Space, so that a change
    in the machine's other load during the Space's runs weighs on both sides alike."""
    return Figures(
        latencies=first.latencies + second.latencies,
        batch_sizes=first.batch_sizes + second.batch_sizes,
        problems=first.problems + second.problems,
        wall=first.wall + second.wall,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=["tiny", "small", "base"], default="base", help="model size (default: base)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent visitors (default: 8)")
    parser.add_argument("--requests", type=int, default=50, help="predictions per visitor (default: 50)")
    parser.add_argument("--soak-clients", type=int, default=64, help="visitors in the soak run (default: 64)")
    parser.add_argument("--soak-seconds", type=float, default=60, help="length of each soak run; 0 skips them")
    parser.add_argument("--soak-route", choices=sorted(SOAK_ROUTES), default="both",
                        help="which way in the soak visitors use (default: both, one soak each)")  # fmt: skip
    parser.add_argument("--task", default="sa", help="task to predict (default: sa)")
    parser.add_argument("--model-dir", type=Path, help="folder of <task>/ checkpoints (default: built here, --size)")
    parser.add_argument("--max-batch", type=int, default=8, help="the Space's NLUE_SPACE_MAX_BATCH (default: 8)")
    args = parser.parse_args()
    if min(args.clients, args.requests, args.soak_clients, args.max_batch) < 1 or args.soak_seconds < 0:
        parser.error("--clients, --requests, --soak-clients and --max-batch must be at least 1; --soak-seconds >= 0")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    from nlue.space.batching import OPENMP_WAIT_POLICY, let_idle_cores_sleep

    let_idle_cores_sleep()  # the direct calls run with the OpenMP setting the Space runs with (before torch loads)

    loads = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="nlue-space-bench-") as tmp:
        work = Path(tmp)
        os.environ.setdefault("NLUE_CACHE", str(work / "cache"))
        models = args.model_dir.resolve() if args.model_dir else build_model(work / "models", args.task, args.size)
        model = f"{models.name}/{args.task}"
        results = work / "results"
        results.mkdir()
        total = args.clients * args.requests
        inputs = sentences(args.task, total)
        sequential, batched = direct(models, results, args.task, model, inputs, args.clients, args.max_batch)

        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        log = work / "space.log"
        process = start_space(models, results, port, args.max_batch, log)
        space: dict[str, Figures] = {}
        idle_rss: dict[str, float] = {}
        try:
            startup = wait_until_up(url, process, log)
            for label, make in ROUTES.items():
                call = make(url, args.task, model)
                for index in range(args.clients):  # open each visitor's session outside the figures
                    call(index, inputs[0])
                space[label] = run_visitors(call, inputs, args.clients, args.requests, watch_pid=process.pid)
            for route in SOAK_ROUTES[args.soak_route] if args.soak_seconds else ():
                label = f"soak: {args.soak_clients} x {args.soak_seconds:.0f} s, {route}"
                idle_rss[label] = rss_mib(process.pid)
                space[label] = run_visitors(
                    ROUTES[route](url, args.task, model),
                    inputs,
                    args.soak_clients,
                    seconds=args.soak_seconds,
                    watch_pid=process.pid,
                )
        finally:
            process.terminate()
            process.wait(timeout=30)
        _, batched_after = direct(models, results, args.task, model, inputs, args.clients, args.max_batch)

    import gradio
    import torch

    print(
        f"Space latency: {args.clients} clients x {args.requests} predictions ({total} in all) of {args.task} "
        f"with {model} ({'from ' + str(args.model_dir) if args.model_dir else args.size + ' BERT, random weights'}); "
        f"micro-batches of up to {args.max_batch}"
    )
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores; python "
        f"{platform.python_version()}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"gradio {gradio.__version__}; {OPENMP_WAIT_POLICY}={os.environ.get(OPENMP_WAIT_POLICY)}; "
        f"Space up in {startup:.1f} s; load average {loads[0]:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after (other work on the machine skews every figure)"
    )
    print(
        f"{'':<30} {'n':>6} {'errors':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'req/s':>8} "
        f"{'batch':>6} {'vs dir.':>7} {'wall s':>7} CPU ms/req: Space/clients"
    )
    print(row("direct, sequential", sequential))
    print(row(f"direct, {args.clients} threads, before", batched))
    print(row(f"direct, {args.clients} threads, after", batched_after))
    reference = merged(batched, batched_after)
    print(row(f"direct, {args.clients} threads, both", reference))
    for label, figures in space.items():
        print(row(label, figures, reference.rate))
    problems = [p for f in (sequential, reference, *space.values()) for p in f.problems]
    for label, figures in space.items():
        if label.startswith("soak") and figures.rss_mib:
            samples = figures.rss_mib
            quarters = " / ".join(f"{samples[min(len(samples) - 1, q * len(samples) // 4)]:.0f}" for q in (1, 2, 3))
            print(
                f"{label}: Space memory {idle_rss[label]:.0f} MiB before; {quarters} MiB at 1/4, 1/2, 3/4 of the run; "
                f"{samples[-1]:.0f} MiB at the end, {max(samples):.0f} MiB peak (sampled each second); "
                f"{len(figures.problems)} errors"
            )
    for label in ROUTES:
        ratio = space[label].rate / reference.rate if reference.rate else 0.0
        verdict = "met" if ratio >= GOAL_RATIO and not space[label].problems else "NOT met"
        print(f"goal {label}: requests/s >= {GOAL_RATIO}x direct batched, 0 errors: {ratio:.3f}x, {verdict}")
    for problem in sorted(set(problems))[:5]:
        print(f"  error: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
