"""``ancientbench eval``: the command line of an evaluation (arguments -> :func:`evaluate_model` -> table)."""

from __future__ import annotations

import argparse

from ..argtypes import positive_int
from ..backends.base import BACKEND_HELP, BACKENDS, DEFAULT_BACKEND, MODES, BackendConfig
from ..errors import AncientBenchError
from .settings import DEFAULT_MAX_NEW_TOKENS

MODE_HELP = {
    "letter": "next-token log-probabilities of A-D after '答案是：' (the paper's; default)",
    "ppl": "log-likelihood of each option's text as continuation; length-normalised per character decides",
    "generate": "the model answers as a chat turn within --max-new-tokens; the letter is extracted",
}


def _batch_size_arg(value: str):
    return value if value == "auto" else positive_int(value, " or 'auto'")


def _key_value(value: str) -> tuple[str, str]:
    key, sep, val = value.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {value!r}")
    return key, val


SERVER_DEFAULTS = {"base_url": None, "api_key_env": None, "concurrency": 8, "timeout": 120.0, "max_retries": 5, "tokenizer": None}
SERVER_FLAGS = {"base_url": "--base-url", "api_key_env": "--api-key-env", "concurrency": "--concurrency",
                "timeout": "--timeout", "max_retries": "--max-retries", "tokenizer": "--tokenizer"}


SERVER_BACKENDS = ("openai",)  # the backends that talk to a server: they take the server flags
OPTION_BACKENDS = ("openai", "vllm")  # the backends that take --backend-option


def unused_options(backend: str, given: dict[str, str]) -> list[str]:
    """Of the server options given (``SERVER_FLAGS``' names or ``backend_option(s)`` -> as the user wrote it),
    those ``backend`` would ignore."""
    return [shown for dest, shown in given.items()
            if backend not in (OPTION_BACKENDS if dest.startswith("backend_option") else SERVER_BACKENDS)]


def unused_message(unused: list[str], backend: str, *, suite: bool = False) -> str:
    """The one refusal of options a backend would ignore, in the command line's words or a suite file's."""
    be, server, option = ("backend", "server keys", "backend_options") if suite else (
        "--backend", "server flags", "--backend-option")
    return (f"{', '.join(unused)}: not used by {be} {backend} ({server} are for {be} {', '.join(SERVER_BACKENDS)}; "
            f"{option} for {' and '.join(OPTION_BACKENDS)}); drop them or choose that backend")


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
    parser.add_argument("--batch-size", type=_batch_size_arg, default=8,
                        help="prompts per forward pass (default 8), or 'auto': start at 128 on a GPU/NPU (16 on CPU) "
                             "and halve on out-of-memory")
    parser.add_argument("--device", default="auto", help="auto (cuda > npu > mps > cpu), cpu, cuda, cuda:1, npu:0, mps")
    parser.add_argument("--dtype", default="auto", help="auto (bf16 on cuda/npu, fp32 on cpu), float32, bfloat16, float16")
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
    parser.add_argument("--revision", default=None, help="Hub revision (branch, tag or commit)")
    parser.add_argument("--trust-remote-code", action="store_true", help="allow the model's own code (e.g. GLM, Baichuan)")
    parser.add_argument("--device-map", choices=["auto"], default=None, help="spread a large model over all devices")
    parser.add_argument("--max-length", type=int, default=None, help="context limit in tokens (default: the model's)")
    parser.add_argument("--no-prefix-cache", action="store_true", help="score every prompt from scratch (no KV reuse)")
    parser.add_argument("--overwrite", action="store_true", help="discard predictions already in --output for these settings")
    parser.add_argument("--repair", action="store_true",
                        help="a predictions file with corrupt lines: keep its valid records, score only the rest again")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--circular", action="store_true",
                        help="score each item under the 4 cyclic rotations of its options; add circular accuracy (CircularEval)")
    server = parser.add_argument_group("server backends (openai)")
    server.add_argument("--base-url", default=None, help="the server's OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1")
    server.add_argument("--api-key-env", default=None, help="name of the environment variable holding the API key "
                                                            "(default OPENAI_API_KEY)")
    server.add_argument("--concurrency", type=positive_int, default=SERVER_DEFAULTS["concurrency"],
                        help="requests in flight at once (default 8)")
    server.add_argument("--timeout", type=float, default=SERVER_DEFAULTS["timeout"], help="seconds per request (default 120)")
    server.add_argument("--max-retries", type=int, default=SERVER_DEFAULTS["max_retries"],
                        help="retries with backoff on 429/5xx/timeouts (default 5)")
    server.add_argument("--tokenizer", default=None, help="a local tokenizer (Hub id or folder) to count prompt tokens with")
    parser.add_argument("--backend-option", type=_key_value, action="append", default=[], metavar="KEY=VALUE",
                        help="backend-specific option (repeatable)")


def backend_config(args) -> BackendConfig:
    """The :class:`BackendConfig` the command line describes (model-loading fields are set by evaluate_model)."""
    return BackendConfig(
        model=args.model, base_url=args.base_url, api_key_env=args.api_key_env, concurrency=args.concurrency,
        timeout=args.timeout, max_retries=args.max_retries, tokenizer=args.tokenizer,
        options=dict(args.backend_option),
    )


def ignored_flags(args) -> list[str]:
    """Flags given on the command line that the chosen backend would ignore (server flags off a server backend;
    --backend-option on a backend that takes none)."""
    given = {dest: flag for dest, flag in SERVER_FLAGS.items() if getattr(args, dest) != SERVER_DEFAULTS[dest]}
    if args.backend_option:
        given["backend_option"] = "--backend-option"
    return unused_options(args.backend, given)


def run(args) -> int:
    import math
    import warnings

    from ..table import results_table
    from . import distributed
    from .api import evaluate_model
    from .layout import results_path

    warnings.formatwarning = lambda message, category, *a, **k: f"warning: {message}\n"  # no source lines on a CLI
    unused = ignored_flags(args)
    if unused:
        raise AncientBenchError(unused_message(unused, args.backend))
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise AncientBenchError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    if args.max_retries < 0:
        raise AncientBenchError(f"--max-retries must be >= 0, got {args.max_retries}")
    results = evaluate_model(
        args.model, tasks=args.tasks, shots=args.shots, batch_size=args.batch_size, device=args.device,
        dtype=args.dtype, limit=args.limit, data=args.data, output_dir=args.output,
        letter_style=args.letter_style, chat=args.chat, prefix_cache=False if args.no_prefix_cache else "auto",
        revision=args.revision, trust_remote_code=args.trust_remote_code, device_map=args.device_map,
        max_length=args.max_length, fewshot_data=args.fewshot_data, overwrite=args.overwrite,
        progress=not args.no_progress, circular=args.circular, backend=args.backend, mode=args.mode,
        max_new_tokens=args.max_new_tokens, log_samples=args.log_samples, backend_config=backend_config(args),
        repair=args.repair,
    )
    procs = distributed.init()
    distributed.close()
    if not procs.is_main_process:  # the main process of a multi-process run prints and has written the files
        return 0
    print(results_table(list(results.values())))
    if args.circular:
        from .circular import format_table as circular_table

        print("\n" + circular_table(list(results.values())))
    files = [str(results_path(r["predictions_file"])) for r in results.values()]
    print("\nresults: " + ", ".join(files))
    return 0
