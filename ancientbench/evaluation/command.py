"""``ancientbench eval``: the command line of an evaluation (arguments -> :func:`evaluate_model` -> table)."""

from __future__ import annotations

import argparse
import warnings

from ..argtypes import positive_int
from ..backends.base import (
    BACKEND_HELP,
    BACKENDS,
    DEFAULT_BACKEND,
    MODES,
    BackendConfig,
    backend_for,
    get_backend,
    non_default_backend,
    registered_backends,
)
from ..backends.options import Option, config_options, declared_options, make_config, unused_options
from ..errors import AncientBenchError
from ..table import results_table
from . import distributed
from .api import evaluate_model
from .circular import format_table as circular_table
from .layout import results_path
from .settings import DEFAULT_MAX_NEW_TOKENS

MODE_HELP = {
    "letter": "next-token log-probabilities of A-D after '答案是：' (the paper's; default)",
    "ppl": "log-likelihood of each option's text as continuation; length-normalised per character decides",
    "generate": "the model answers as a chat turn within --max-new-tokens; the letter is extracted",
}


def backend_options() -> dict[str, tuple[Option, tuple[str, ...]]]:
    """Every registered backend's options (field -> (option, the backends that take it)), from their config classes."""
    return declared_options({n: cls.config_class for n, cls in registered_backends().items()})


def unused_message(unused: list[str], backend: str, *, suite: bool = False) -> str:
    """The one refusal of options a backend would ignore, in the command line's words or a suite file's: each
    option with the backends that do take it."""
    declared = backend_options()
    by_shown = {(o.suite_key if suite else o.flag.flag): users for o, users in declared.values()}
    be = "backend" if suite else "--backend"
    where = "; ".join(f"{u} for {be} {', '.join(by_shown.get(u, ()))}" for u in unused)
    return f"{', '.join(unused)}: not used by {be} {backend} ({where}); drop them or choose that backend"


def _add_backend_options(parser) -> None:
    """One --help group per set of backends sharing options, derived from the backends' config classes."""
    groups: dict[tuple[str, ...], list[Option]] = {}
    for opt, users in backend_options().values():
        groups.setdefault(users, []).append(opt)
    for users, opts in groups.items():
        group = parser.add_argument_group(f"options of backend{'s' if len(users) > 1 else ''} {', '.join(users)}")
        for opt in opts:
            extra = dict(opt.flag.argparse or {})
            if extra.get("action") == "append":
                default = []
            else:
                default = opt.default
            group.add_argument(opt.flag.flag, dest=opt.field, default=default, help=opt.flag.help, **extra)


def add_arguments(parser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = ("backends:\n" + "\n".join(f"  {n:<12} {BACKEND_HELP.get(n, '')}" for n in BACKENDS)
                     + "\nmodes:\n" + "\n".join(f"  {m:<12} {MODE_HELP[m]}" for m in MODES))
    parser.add_argument("--model", required=True,
                        help="Hub id, local model folder, 'ancientbench-mini' (the shipped classical mini-LM), 'ancientbench-inject-a' and 'ancientbench-inject-b' (the knowledge-injection pair), 'tiny-random' (built-in smoke model), or a served model's name")
    parser.add_argument("--backend", default=DEFAULT_BACKEND, metavar="NAME",
                        help=f"how the model is run: {', '.join(BACKENDS)} (default hf; see below)")
    parser.add_argument("--mode", choices=MODES, default="letter", help="how an answer is scored (default letter; see below)")
    parser.add_argument("--max-new-tokens", type=positive_int, default=DEFAULT_MAX_NEW_TOKENS,
                        help=f"generate mode: the answer's token budget (default {DEFAULT_MAX_NEW_TOKENS})")
    parser.add_argument("--log-samples", action="store_true",
                        help="add the full prompt (and in generate mode the raw answer) to each prediction record")
    parser.add_argument("--tasks", nargs="+", default=None,
                        help="task or competency names (default: all tasks with data), and the paths of your own tasks "
                             "(a JSONL file, or a folder with test.jsonl and dev.jsonl: scored apart, outside the average)")
    parser.add_argument("--shots", nargs="+", type=int, default=[0, 5], help="numbers of few-shot exemplars (default: 0 5)")
    parser.add_argument("--limit", type=int, default=None, help="score only the first N test items of each task")
    parser.add_argument("--data", default=None, help="dataset folder (data/<task>/{test,dev}.jsonl) or JSONL question file")
    parser.add_argument("--fewshot-data", default=None,
                        help="where exemplars come from (folder or JSONL of dev rows); default: --data folder, "
                             "or the bundled dataset for a JSONL --data")
    parser.add_argument("--output", "--out", dest="output", default="results", help="results folder (default ./results)")
    parser.add_argument("--letter-style", choices=["bare", "space"], default="bare",
                        help="score 'A' (bare, the paper's/CMMLU's) or ' A' (space, lm-eval's)")
    parser.add_argument("--chat", action="store_true",
                        help="wrap each prompt as a user turn with the chat template (always on in generate mode)")
    parser.add_argument("--overwrite", action="store_true", help="discard predictions already in --output for these settings")
    parser.add_argument("--repair", action="store_true",
                        help="a predictions file with corrupt lines: keep its valid records, score only the rest again")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--circular", action="store_true",
                        help="score each item under the 4 cyclic rotations of its options; add circular accuracy (CircularEval)")
    _add_backend_options(parser)


def given_options(args) -> dict[str, str]:
    """The backend options set on the command line (field -> flag): those that differ from their defaults."""
    out = {}
    for name, (opt, _) in backend_options().items():
        value = getattr(args, name)
        if value != opt.default and not (value == [] and opt.default == {}):
            out[name] = opt.flag.flag
    return out


def backend_config(args) -> BackendConfig:
    """The chosen backend's config from the command line (its options, set or not); an option it does not take
    that was set is refused (:func:`unused_message`)."""
    name = backend_for(args.backend, args.model)
    cls = get_backend(name)
    unused = unused_options(cls.config_class, given_options(args))
    if unused:
        raise AncientBenchError(unused_message(unused, args.backend))
    values = {f: getattr(args, f) for f in config_options(cls.config_class)}
    return make_config(cls.config_class, name, {"model": args.model, **values})


def run(args) -> int:
    warnings.formatwarning = lambda message, category, *a, **k: f"warning: {message}\n"  # no source lines on a CLI
    results = evaluate_model(
        args.model, tasks=args.tasks, shots=args.shots, limit=args.limit, data=args.data, output_dir=args.output,
        letter_style=args.letter_style, chat=args.chat, fewshot_data=args.fewshot_data, overwrite=args.overwrite,
        progress=not args.no_progress, circular=args.circular, backend=args.backend, mode=args.mode,
        max_new_tokens=args.max_new_tokens, log_samples=args.log_samples, backend_config=backend_config(args),
        repair=args.repair,
    )
    procs = distributed.init()
    distributed.close()
    if not procs.is_main_process:  # the main process of a multi-process run prints and has written the files
        return 0
    print(results_table(list(results.values()), backend_label=non_default_backend))
    if args.circular:
        print("\n" + circular_table(list(results.values())))
    files = [str(results_path(r["predictions_file"])) for r in results.values()]
    print("\nresults: " + ", ".join(files))
    return 0
