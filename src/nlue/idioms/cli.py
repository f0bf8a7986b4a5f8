"""`nlue idioms ...`: mine idiom contexts from a corpus, annotate them, draw the few-shot pool (neDIOM).

    nlue idioms mine --idioms idioms.txt --corpus oscar_ne.txt --out work/
    nlue idioms annotate-export --candidates work/candidates.jsonl --out sheets/ --annotators a1,a2
    nlue idioms annotate-import --candidates work/candidates.jsonl --sheets sheets/a1.csv sheets/a2.csv --out agreed/
    nlue idioms annotate-import ... --adjudication agreed/disagreements.csv   # once the adjudicator filled it in
    nlue idioms split --input agreed/items.jsonl --out sources/nediom
    nlue build --source sources --configs nediom --name nediom --out build
    nlue idioms eval --model bigscience/bloom-560m --dataset build/nediom --setting zero-shot --context all --idiom both
    nlue idioms eval --model FacebookAI/xlm-roberta-base --dataset build/nediom --setting 5-shot 10-shot --seeds 5
    nlue idioms eval --task my_idioms --task-file my_idioms.yaml --dataset build/my_idioms --model ./lm --setting zero-shot

Every command writes its outputs whole or not at all (beside their place, then moved),
and a JSON report beside them. ``split`` writes ``train.jsonl`` (the few-shot pool) and
``test.jsonl``, a config folder ``nlue build --source`` reads. ``eval`` scores a model on the
input variants (:mod:`nlue.idioms.evaluate`) and prints them in the paper's Table 3 shape; ``--task``
names another idiomaticity task (a task file of yours, given by ``--task-file`` or carried by its
``--dataset``), prompted in its own file's words and printed without the paper's rows.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlue.cli_lists import add_name_list
from nlue.cli_support import (
    add_logging_options,
    add_task_file_option,
    run_with_parser,
)
from nlue.data.sources import read_records
from nlue.errors import NlueError
from nlue.evals.llm.prompt_language import PROMPT_LANGUAGE_CHOICES, PROMPT_LANGUAGE_HELP, prompt_languages
from nlue.idioms.annotate import export_sheets, import_annotations, write_disagreements
from nlue.idioms.corpus import open_corpus
from nlue.idioms.evaluate import CONTEXT_CHOICES, DEFAULT_SEEDS, IDIOM_CHOICES, SETTINGS
from nlue.idioms.few_shot import FewShotSettings
from nlue.idioms.mine import CANDIDATES_NAME, REPORT_NAME, mine, read_idioms
from nlue.idioms.split import draw_pool
from nlue.lm.description import MODES
from nlue.lm.factory import AUTO_MODE
from nlue.lm.options import add_model_options
from nlue.pipelines.mcq_cli import write_json
from nlue.process_map import NUM_PROC_HELP, num_proc_arg
from nlue.registry.kinds.idiomaticity import IdiomaticityKind
from nlue.registry.nediom import DEFAULT_POOL_SEED, NEDIOM_TASKS, SHOTS_PER_LABEL
from nlue.registry.wordings import MAIN, WORDING_CHOICES
from nlue.results import OVERWRITE_HELP, RESULTS_DIR_HELP, default_results_dir

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nlue idioms", description=__doc__.split("\n\n")[0])
    add_logging_options(parser, quiet_help="no progress bar; warnings and errors only")
    sub = parser.add_subparsers(dest="action", required=True)
    m = sub.add_parser(
        "mine", help="find idioms in their inflected forms (truncated prefix); write S1/S2/S3 candidates"
    )
    m.add_argument("--idioms", type=Path, required=True, help="one idiom per line, citation form (# comments)")
    m.add_argument(
        "--corpus",
        required=True,
        help="a .txt/.jsonl/.parquet file, a folder of Parquet, a saved dataset, or a Hub dataset id",
    )
    m.add_argument("--out", type=Path, required=True, help=f"folder for {CANDIDATES_NAME} and {REPORT_NAME}")
    m.add_argument("--text-column", default="text", help="the documents' column (JSONL, Parquet, datasets)")
    m.add_argument(
        "--line-documents",
        action="store_true",
        help=".txt: every line is a document (default: documents are separated by blank lines)",
    )
    m.add_argument("--corpus-config", help="a Hub dataset's config, e.g. ne for OSCAR-2201")
    m.add_argument("--corpus-split", default="train", help="a dataset's split (default: %(default)s)")
    m.add_argument(
        "--no-suppletive",
        dest="suppletive",
        action="store_false",
        help="the paper's single first letter for हुनु and जानु too (default: also their suppletive initials छ/थ/भ and ग)",
    )
    m.add_argument("--num-proc", type=num_proc_arg, default=1, metavar="N", help=NUM_PROC_HELP)
    e = sub.add_parser("annotate-export", help="one annotation sheet (CSV) per annotator")
    e.add_argument("--candidates", type=Path, required=True, help=f"the {CANDIDATES_NAME} that mining wrote")
    e.add_argument("--out", type=Path, required=True)
    e.add_argument("--annotators", default="annotator_1,annotator_2", help="two or more names, comma-separated")
    i = sub.add_parser("annotate-import", help="labels I/L/NA and spans from the sheets: kappa, disagreements, items")
    i.add_argument("--candidates", type=Path, required=True)
    i.add_argument("--sheets", nargs="+", type=Path, required=True, help="the annotators' filled sheets (2 or more)")
    i.add_argument("--adjudication", type=Path, help="a filled copy of disagreements.csv (label, position)")
    i.add_argument("--out", type=Path, required=True, help="folder for items.jsonl, disagreements.csv and a report")
    s = sub.add_parser("split", help="draw the few-shot pool (train.jsonl) over whole idioms; the rest is test.jsonl")
    s.add_argument("--input", type=Path, required=True, help="items.jsonl from annotate-import")
    s.add_argument("--out", type=Path, required=True, help="a config folder: <sources>/<config>")
    s.add_argument("--per-label", type=int, default=max(SHOTS_PER_LABEL), help="pool items per label (%(default)s)")
    s.add_argument("--seed", type=int, default=DEFAULT_POOL_SEED)
    v = add_eval_parser(sub)
    for command in (m, e, i, s, v):  # the logging flags after the action's name too
        add_logging_options(command, quiet_help="no progress bar; warnings and errors only")
    return parser  # fmt: skip


def add_eval_parser(sub: Any) -> argparse.ArgumentParser:
    """`nlue idioms eval`: which model, data, settings and variants; how zero-shot asks and few-shot trains."""
    from nlue.registry.tasks import TASKS

    v = sub.add_parser("eval", help="idiomaticity detection over the 8 input variants: zero-shot, 5-shot, 10-shot")
    idiom_tasks = [name for name, task in TASKS.items() if isinstance(task.kind, IdiomaticityKind)]
    v.add_argument("--task", choices=idiom_tasks, default=NEDIOM_TASKS[0].name,
                   help="the idiomaticity task (default %(default)s; yours: name its file with --task-file, or give "
                   "the --dataset its build carries it in)")  # fmt: skip
    add_task_file_option(v)
    v.add_argument(
        "--dataset",
        help="a built neDIOM repo, a Hub id, or a folder of train/test source files "
        "(`nlue idioms split`); default: the embedded SAMPLE",
    )
    add_name_list(v, "--setting", valid=SETTINGS, what="setting", required=True, help="one or more settings")
    add_name_list(v, "--context", valid=CONTEXT_CHOICES, what="context", default=["all"], help="default: all")
    v.add_argument("--idiom", choices=tuple(IDIOM_CHOICES), default="both", help="idiom in the input (%(default)s)")
    v.add_argument(
        "--seeds",
        type=int,
        default=DEFAULT_SEEDS,
        help="few-shot runs per variant (%(default)s), seeds "
        "--seed, --seed+1, ...: same training items, another initialisation and batch order",
    )
    v.add_argument("--seed", type=int, default=DEFAULT_POOL_SEED, help="first training seed; bootstrap seed")
    v.add_argument("--results-dir", type=Path, help=RESULTS_DIR_HELP)
    v.add_argument("--name", help="results folder prefix (default: the model's folder name or id)")
    v.add_argument("--limit", type=int, help="only the first N test items (a quick look, not a score); the folders' "
                   "setting part ends in -limitN, so it never takes the place of a full run")  # fmt: skip
    v.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    v.add_argument("--bootstrap-resamples", "--bootstrap", type=int, default=1000, help="0: no intervals")
    add_model_options(
        v, batch_size=16, model_help="a local folder or Hub id (zero-shot: a causal or masked LM; few-shot: the encoder "
        "to fine-tune); with --endpoint, the served name of a causal LM",
    )  # fmt: skip
    z = v.add_argument_group("zero-shot")
    z.add_argument("--prompt-language", choices=PROMPT_LANGUAGE_CHOICES, default="en", help=PROMPT_LANGUAGE_HELP)
    z.add_argument("--mode", choices=(AUTO_MODE, *MODES), default=AUTO_MODE,
                   help="loglik: score each label word; generate: the model writes one, a strict parser reads it; "
                   "auto (default): loglik where the model gives log-likelihoods, else generate")  # fmt: skip
    z.add_argument("--chat", action=argparse.BooleanOptionalAction, default=None,
                   help="generate mode: chat messages or plain text (default: as the model is served or templated)")  # fmt: skip
    z.add_argument("--max-new-tokens", type=int, help="generate mode: tokens for the answer (default 48, a label word)")
    z.add_argument("--wordings", choices=WORDING_CHOICES, default=MAIN,
                   help="all: also ask each zero-shot cell in every other wording of the prompt and report macro-F1 "
                   "per wording and its spread (ours; default %(default)s: the main prompt alone)")  # fmt: skip
    f = v.add_argument_group("few-shot fine-tuning")
    defaults = FewShotSettings()
    f.add_argument("--epochs", type=float, default=defaults.epochs, help="%(default)s, the paper's")
    f.add_argument("--learning-rate", type=float, default=defaults.learning_rate, help="%(default)s (ours)")
    f.add_argument("--train-batch-size", type=int, default=defaults.batch_size, help="%(default)s (ours)")
    f.add_argument("--max-seq-length", type=int, default=defaults.max_seq_length, help="%(default)s")
    return v  # fmt: skip


def _zero_shot_factory(args: argparse.Namespace, stack: contextlib.ExitStack, model: list[Any]) -> Any:
    """Builds the zero-shot scorer when first needed, so that bad data is reported before a model loads.

    ``model`` keeps the loaded model, its mode and its answer store for the next prompt language
    (``--prompt-language both``).
    """

    def build() -> Any:
        from nlue.evals.llm.label_generation import DEFAULT_LABEL_TOKENS
        from nlue.idioms.zero_shot import LabelGenerator, LabelScorer
        from nlue.lm.factory import choose_mode, load_model
        from nlue.lm.options import model_spec_from_args, note_old_journal, old_journal, open_answer_store
        from nlue.registry.tasks import get_task

        if not model:
            note_old_journal(old_journal(args.results_dir, args.model))
            journal = stack.enter_context(open_answer_store(args))
            loaded = load_model(model_spec_from_args(args, journal=journal))
            model.append((loaded, choose_mode(loaded, args.mode, f"{args.task} zero-shot"), journal))
        loaded, mode, _ = model[0]
        task = get_task(args.task)
        if mode == "generate":
            chat = loaded.describe().chat if args.chat is None else args.chat
            return LabelGenerator(loaded, chat, args.max_new_tokens or DEFAULT_LABEL_TOKENS, task)
        return LabelScorer(loaded, task)

    return build


def run_eval_command(args: argparse.Namespace) -> int:
    from nlue.idioms.evaluate import EvalRequest, run_eval, select_variants
    from nlue.idioms.table import table3_text, variant_text
    from nlue.lm.slug import model_slug
    from nlue.registry.task_file.load import is_user_task
    from nlue.registry.tasks import get_task

    if args.seeds < 1 or args.train_batch_size < 1:
        raise NlueError("--seeds and --train-batch-size must be at least 1")
    task = get_task(args.task)
    few_shot = FewShotSettings(args.epochs, args.learning_rate, args.train_batch_size, args.max_seq_length)
    loaded: list[Any] = []
    with contextlib.ExitStack() as stack:
        for language in prompt_languages(args.prompt_language, task.languages[0]):
            request = EvalRequest(
                model=args.model, task=task, settings=list(dict.fromkeys(args.setting)),
                variants=select_variants(args.context, args.idiom), results_dir=args.results_dir,
                name=args.name or model_slug(args.model), dataset=args.dataset, language=language,
                seeds=[args.seed + i for i in range(args.seeds)], few_shot=few_shot,
                bootstrap_resamples=args.bootstrap_resamples, seed=args.seed, limit=args.limit,
                zero_shot=_zero_shot_factory(args, stack, loaded), overwrite=args.overwrite, wordings=args.wordings,
            )  # fmt: skip
            report = run_eval(request)
            mode = loaded[0][1] if loaded else None
            how = "the strictly parsed answer (generation)" if mode == "generate" else "summed log-likelihood"
            sample = " (SAMPLE DATA: these scores mean nothing about the model)" if report.is_sample else ""
            print(f"{task.name}: macro-F1 on {report.test_items} test items{sample}; {language} prompt; zero-shot: "
                  f"{how} (primary), few-shot: mean±sd over {args.seeds} seed(s); [95% bootstrap interval]\n")  # fmt: skip
            if not is_user_task(task):  # the paper's Table 3 is neDIOM's; a task of yours has no paper rows
                print(table3_text(report.cells, report.floors, request.name))
                print()
            print(variant_text(report.cells, report.floors))
            _print_wordings(report.paths)
            print(f"\n{len(report.paths)} results files under {args.results_dir}\n")
        if loaded:  # the zero-shot setting asked a model
            from nlue.lm.answer_cache import answers_line

            print(answers_line(loaded[0][2]))
    return 0


def _print_wordings(paths: Sequence[Path]) -> None:
    """Each zero-shot cell's prompt wordings (``--wordings all``), from the results files just written."""
    import json

    from nlue.evals.llm.wordings import SECTION, wording_text

    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        section = (data.get("details") or {}).get(SECTION)
        if section:
            print("\n" + wording_text(f"{data['task']} · {path.parent.name}", section))


def _items(path: Path) -> list[dict[str, Any]]:
    items = [dict(record) for _, record in read_records(path)]
    if not items:
        raise NlueError(f"{path}: no items")
    return items


def run(args: argparse.Namespace) -> int:
    if args.action == "eval":
        args.results_dir = args.results_dir or default_results_dir()
        return run_eval_command(args)
    if args.action == "mine":
        corpus = open_corpus(args.corpus, args.text_column, args.line_documents, args.corpus_config, args.corpus_split)
        report = mine(
            read_idioms(args.idioms), corpus, args.out, args.suppletive,
            show_progress=not getattr(args, "quiet", False), num_proc=args.num_proc,
        )  # fmt: skip  # -q is absent unless given
        print(f"{report['documents']} documents, {report['candidates']} candidates for {report['idioms_found']} of "
              f"{report['idioms']} idioms ({report['repeats_dropped']} repeats dropped) -> {args.out}")  # fmt: skip
    elif args.action == "annotate-export":
        names = [n.strip() for n in args.annotators.split(",") if n.strip()]
        paths = export_sheets(_items(args.candidates), args.out, names)
        print("wrote " + ", ".join(map(str, paths)))
    elif args.action == "annotate-import":
        kept, disagreements, report = import_annotations(_items(args.candidates), args.sheets, args.adjudication)
        write_json(args.out / "items.jsonl", kept, lines=True)
        write_disagreements(args.out / "disagreements.csv", disagreements, report["annotators"])
        write_json(args.out / "annotation_report.json", report)
        agreement = report["agreement"]
        print(f"{report['kept']} items kept ({report['kept_labels']}), {report['dropped_na']} NA dropped, "
              f"{report['unresolved']} disagreements to adjudicate; {agreement['statistic']} {agreement['kappa']}, "
              f"unanimous {agreement['unanimous_labels']}, same span {agreement['span_agreement']} -> {args.out}")  # fmt: skip
    else:
        pool, test = draw_pool(_items(args.input), args.per_label, args.seed)
        write_json(args.out / "train.jsonl", pool, lines=True)
        write_json(args.out / "test.jsonl", test, lines=True)
        print(f"train (few-shot pool) {len(pool)}, test {len(test)} (seed {args.seed}) -> {args.out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nlue idioms` with ``argv`` (without the `idioms` word); return the exit status."""
    return run_with_parser("idioms", build_parser, argv, run)  # built once --task-file's tasks are registered
