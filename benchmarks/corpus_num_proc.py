"""Idiom mining on 1 and 2 processes: sentences per second, the speed-up and peak memory on a generated corpus.

Generates a corpus of Nepali-like text from our own small vocabulary (written for this script; a fixed seed,
so the same bytes every run) into a temporary folder: documents of 1-6 sentences separated by blank lines,
at least 1,000,000 sentences by default, with an idiom in an inflected form in about 2% of the sentences
and look-alike first words in many more (so that, as in web text, a good share of documents holds an
idiom's first word and is split into sentences). Then runs, each in a child process,

    nlue idioms mine --idioms IDIOMS --corpus CORPUS --out OUT -q --num-proc N      for each N asked

and prints the wall time, sentences per second, the speed-up over one process, the CPU seconds of the
command's own process and of its whole process tree (the command, the fork server and the workers: each
process's last sample, every 50 ms), and the peak resident memory of that tree (summed, sampled every
half second with readme_llm_commands' PeakMemory; needs psutil), and checks that every run wrote the same
bytes. The CPU seconds do not depend on what else the machine runs, as the wall time does: the command's
own CPU is the part no worker can take over.

References printed beside the figures: the ideal speed-up (the processes run, at most the usable cores),
the reading floor (one process only reading and splitting the corpus into documents: with one process the
command does it itself; with more, each worker reads and cuts its own blocks of the file), the time the
command's process takes to place the blocks' borders (all it reads itself with N > 1), and the goal of issue 31, item 5: memory bounded by the chunks in flight, not by the corpus: under 200 MiB per
process (the command; with N workers also the forkserver: (2 + N) x 200 MiB), and about the same peak on
a corpus a quarter the size (``--also-sentences``).

    python benchmarks/corpus_num_proc.py                         # 1,000,000 sentences, 1 and 2 processes
    python benchmarks/corpus_num_proc.py --sentences 200000 --num-proc 1 2 4
"""

from __future__ import annotations

import argparse
import filecmp
import os
import platform
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from readme_llm_commands import PeakMemory  # the same sampler of a process tree's memory

ROOT = Path(__file__).resolve().parents[1]
SEED = 31
IDIOM_SHARE = 0.02
# The command, the forkserver and each worker hold the imported libraries (`import nlue` loads datasets and
# pandas: ~145 MiB; the workers share the forkserver's pages, which a sum of resident sizes counts once per
# process) plus at most two chunks in flight per worker (a few MiB of text): nothing grows with the corpus.
MEMORY_GOAL_PER_PROCESS = 200 * 2**20

# Our own sample vocabulary: no sentence is taken from a paper or a corpus.
SUBJECTS = ("राम", "सीता", "गाउँका मानिस", "हाम्रो टोली", "नयाँ शिक्षक", "पसलको साहु", "सानो भाइ", "जेठी दिदी",
            "वडाध्यक्ष", "किसानहरू", "विद्यार्थीहरू", "हजुरआमा", "बजारका व्यापारी", "नगरपालिका", "ड्राइभर दाइ")  # fmt: skip
PLACES = ("काठमाडौँमा", "पोखरामा", "खेतमा", "बजारमा", "विद्यालयमा", "खोलाको किनारमा", "डाँडामाथि", "घरमा",
          "कार्यालयमा", "बसपार्कमा", "जङ्गलमा", "मेलामा")  # fmt: skip
TIMES = ("आज", "हिजो बेलुका", "भोलि बिहान", "गएको हप्ता", "हरेक दिन", "कहिलेकाहीँ", "चाडपर्वमा", "वर्षायाममा")
OBJECTS = ("धान", "तरकारी", "किताब", "पानी", "चिठी", "नयाँ घर", "बाटो", "पुल", "मकै", "दूध", "औषधि", "फलफूल")
VERBS = ("ल्याए", "बेचे", "पढे", "बनाए", "खोजे", "बाँडे", "किने", "सफा गरे", "हेरे", "रोपे", "पठाए", "भेटे")
ENDINGS = ("।", "।", "।", "?", "!", "।")
# Sentences that start like an idiom without being one: the first word is found, the second letter differs.
LOOK_ALIKES = ("हात धुनु राम्रो बानी हो।", "नाक र कान जाँच गराए।", "सातो पटक फोन गरे।", "डाँडो पारि गाउँ छ।",
               "मुख बन्द गरेर बसे।", "आँखा जाँच शिविर लाग्यो।", "कान सफा गर्न सिकाए।", "पेट दुखेर अस्पताल गए।")  # fmt: skip
# Idioms (citation form) and inflected uses of each, as the mining rule should find them.
IDIOMS = {
    "हात लाग्नु": ("मेहनतपछि राम्रो कमाइ हात लाग्यो।", "अन्तमा केही हात लागेन।"),
    "नाक खुम्च्याउनु": ("भाउ सुनेर सबैले नाक खुम्च्याए।", "उनी नाक खुम्च्याउँदै हिँडे।"),
    "सातो जानु": ("चितुवा देखेर सबैको सातो गयो!", "आवाज सुनेर मेरो सातो जान्छ।"),
    "डाँडो काट्नु": ("ऋण तिर्न नसकेर ऊ रातारात डाँडो काटेछ।", "साहु आउनुअघि नै डाँडो काटे।"),
    "मुख मिठ्याउनु": ("भोज खाएर सबैले मुख मिठ्याए।", "मिठाइ देखेर केटाकेटी मुख मिठ्याउँछन्।"),
    "आँखा लगाउनु": ("छिमेकीको जग्गामा आँखा लगायो।", "अरूको सम्पत्तिमा आँखा नलगाऊ।"),
    "कान फुकाउनु": ("कसैले उसको कान फुकायो।", "हाकिमको कान फुकाउने मान्छे धेरै छन्।"),
    "पेट पाल्नु": ("सानो जागिरले पेट पाल्यो।", "खेती गरेर परिवारको पेट पाल्छन्।"),
}


def sentence(draw: random.Random) -> str:
    roll = draw.random()
    if roll < IDIOM_SHARE:
        return draw.choice(draw.choice(list(IDIOMS.values())))
    if roll < IDIOM_SHARE + 0.10:
        return draw.choice(LOOK_ALIKES)
    return (f"{draw.choice(TIMES)} {draw.choice(SUBJECTS)}ले {draw.choice(PLACES)} {draw.choice(OBJECTS)} "
            f"{draw.choice(VERBS)}{draw.choice(ENDINGS)}")  # fmt: skip


def write_corpus(folder: Path, sentences: int, seed: int = SEED) -> tuple[Path, Path, int]:
    """The idiom list and the corpus (documents of 1-6 sentences, blank lines between); documents written."""
    draw = random.Random(seed)
    idioms = folder / "idioms.txt"
    idioms.write_text("# generated for benchmarks/corpus_num_proc.py\n" + "\n".join(IDIOMS) + "\n", encoding="utf-8")
    corpus = folder / "corpus.txt"
    written = documents = 0
    with corpus.open("w", encoding="utf-8") as out:
        while written < sentences:
            count = min(draw.randint(1, 6), sentences - written)
            out.write(" ".join(sentence(draw) for _ in range(count)) + "\n\n")
            written += count
            documents += 1
    return idioms, corpus, documents


def reading_floor(corpus: Path) -> float:
    """Seconds for one process to read the corpus into documents and nothing else (in a child, like the runs)."""
    code = ("import sys, time; from nlue.idioms.corpus import open_corpus; t = time.perf_counter(); "
            "n = sum(1 for _ in open_corpus(sys.argv[1]).documents()); print(time.perf_counter() - t)")  # fmt: skip
    return float(subprocess.run([sys.executable, "-c", code, str(corpus)], check=True, capture_output=True,
                                text=True, env=_env()).stdout)  # fmt: skip


def placing_blocks(corpus: Path, num_proc: int) -> float:
    """Seconds for the command's process to place the blocks of the corpus for ``num_proc`` workers (in a child)."""
    code = ("import sys, time; from nlue.idioms.corpus import open_corpus; t = time.perf_counter(); "
            "n = sum(1 for _ in open_corpus(sys.argv[1]).files[0].blocks(int(sys.argv[2]))); "
            "print(time.perf_counter() - t)")  # fmt: skip
    return float(subprocess.run([sys.executable, "-c", code, str(corpus), str(num_proc)], check=True,
                                capture_output=True, text=True, env=_env()).stdout)  # fmt: skip


def _env() -> dict[str, str]:
    src = str(ROOT / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p),
            "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}  # fmt: skip


class TreeCpu:
    """CPU seconds (user and system) of a process and of its whole tree, from each process's last sample."""

    def __init__(self, pid: int) -> None:
        self.pid, self.seen = pid, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def stop(self) -> tuple[float, float]:
        """The command's CPU seconds and the tree's."""
        self._stop.set()
        self._thread.join()
        return self.seen.get(self.pid, 0.0), sum(self.seen.values())

    def _sample(self) -> None:
        import psutil

        while not self._stop.wait(0.05):
            try:
                root = psutil.Process(self.pid)
                tree = [root, *root.children(recursive=True)]
            except psutil.Error:
                continue
            for process in tree:
                try:
                    times = process.cpu_times()
                except psutil.Error:
                    continue
                self.seen[process.pid] = times.user + times.system


def mine(idioms: Path, corpus: Path, out: Path, num_proc: int) -> tuple[float, int, str, tuple[float, float]]:
    """Wall seconds, the process tree's peak memory, the command's summary line and the CPU seconds of the
    command and of its tree for one run."""
    argv = [sys.executable, "-m", "nlue.cli", "idioms", "mine", "--idioms", str(idioms), "--corpus", str(corpus),
            "--out", str(out), "-q", "--num-proc", str(num_proc)]  # fmt: skip
    started = time.perf_counter()
    with PeakMemory() as memory:
        child = subprocess.Popen(argv, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        memory.pids.append(child.pid)
        cpu = TreeCpu(child.pid)
        printed, errors = child.communicate()
    wall = time.perf_counter() - started
    if child.returncode != 0:
        raise SystemExit(f"nlue idioms mine --num-proc {num_proc} exited {child.returncode}:\n{errors}")
    return wall, memory.peak, printed.strip(), cpu.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=1_000_000, help="sentences in the corpus (%(default)s)")
    parser.add_argument("--num-proc", type=int, nargs="+", default=[1, 2], help="process counts (%(default)s)")
    parser.add_argument("--also-sentences", type=int, default=250_000,
                        help="a smaller corpus mined with the most processes, to show memory does not grow with it "
                        "(%(default)s; 0: skip)")  # fmt: skip
    args = parser.parse_args()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs ({usable} usable), "
          f"Python {platform.python_version()}; load average {os.getloadavg()[0]:.1f} before")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="nlue-corpus-") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        idioms, corpus, documents = write_corpus(folder, args.sentences)
        size = corpus.stat().st_size
        print(f"corpus: {args.sentences:,} sentences in {documents:,} documents, {size / 2**20:.0f} MiB, "
              f"{len(IDIOMS)} idioms, seed {SEED} (generated in {time.perf_counter() - started:.1f} s)")  # fmt: skip
        floor = reading_floor(corpus)
        placing = placing_blocks(corpus, max(args.num_proc))
        print(f"reference: reading alone (one process) {floor:.1f} s = {args.sentences / floor:,.0f} sentences/s; "
              f"placing the blocks (the command's own reading with N > 1) {placing:.2f} s\n")  # fmt: skip
        print(f"{'processes':>9} {'seconds':>8} {'sentences/s':>12} {'speed-up':>9} {'ideal':>6} "
              f"{'CPU s: command / all':>21} {'peak memory':>12} {'goal':>10} {'load':>5}  same bytes")  # fmt: skip
        first: tuple[float, Path] | None = None
        for num_proc in args.num_proc:
            out = folder / f"out-{num_proc}"
            wall, peak, summary, (own_cpu, all_cpu) = mine(idioms, corpus, out, num_proc)
            if first is None:
                first = (wall, out)
                print(f"  ({summary.replace(str(out), 'OUT')})")
            same = all(filecmp.cmp(first[1] / name, out / name, shallow=False)
                       for name in ("candidates.jsonl", "mining_report.json"))  # fmt: skip
            goal = processes(num_proc) * MEMORY_GOAL_PER_PROCESS
            print(f"{num_proc:>9} {wall:>8.1f} {args.sentences / wall:>12,.0f} {first[0] / wall:>8.2f}x "
                  f"{min(num_proc, usable):>5}x {own_cpu:>13.1f} / {all_cpu:>4.1f} {peak / 2**20:>8.0f} MiB {goal / 2**20:>6.0f} MiB "
                  f"{os.getloadavg()[0]:>5.1f}  {'yes' if same else 'NO'}")  # fmt: skip
            if not same:
                return 1
        if args.also_sentences:
            (folder / "smaller").mkdir()
            write_corpus(folder / "smaller", args.also_sentences)
            most = max(args.num_proc)
            _, peak, _, _ = mine(idioms, folder / "smaller" / "corpus.txt", folder / "out-smaller", most)
            print(
                f"\nmemory against corpus size, {most} processes: {peak / 2**20:.0f} MiB at {args.also_sentences:,} "
                f"sentences, against the figure above at {args.sentences:,} (bounded by chunks, not the corpus)"
            )
    return 0


def processes(num_proc: int) -> int:
    """The processes of a run: the command; with workers, also the forkserver they are forked from."""
    return 1 if num_proc == 1 else 2 + num_proc


if __name__ == "__main__":
    sys.exit(main())
