"""The ``ancientbench`` command line: one subcommand per pipeline step, each owned by its own module.

Every module named in COMMANDS exposes ``add_arguments(parser)`` and ``run(args) -> int``; this file only
wires them together, so the list below is also the map of what the tool can do.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

from . import __version__, logs, tasks
from .errors import AncientBenchError

# subcommand -> (module that owns it, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "build": ("ancientbench.builders.command", "build task configs from the installed open sources"),
    "audit": ("ancientbench.quality.audit", "item counts, answer balance, every shortcut strategy (<= 30%), agreement figures"),
    "eval": ("ancientbench.evaluation", "score a causal LM on the tasks, zero-shot and few-shot"),
    "run": ("ancientbench.suites", "run a suite file (models x backends x modes x shots) and write one combined report"),
    "report": ("ancientbench.reports.report", "paper-style tables and plots from results files"),
    "ladder": ("ancientbench.mini.ladder", "the main job: the shipped mini-LM beside tiny-random and the knowledge-free reference rows, one table"),
    "reference": ("ancientbench.reports.reference", "knowledge-free reference rows (chance, Mandarin reader, options-only and stem-reading predictors) as results files"),
    "inject": ("ancientbench.mini.inject_eval", "the knowledge-injection table: (b) - (a) per task, ppl and letter mode, paired"),
    "compare": ("ancientbench.reports.compare", "paired comparison of two results on the same items"),
    "human": ("ancientbench.human", "serve a local quiz page to measure a human baseline"),
    "push-to-hub": ("ancientbench.publish.hub", "upload the dataset (and metric) folder to the Hugging Face Hub"),
    "export-lm-eval": ("ancientbench.publish.lm_eval_export", "write lm-evaluation-harness task YAMLs"),
    "export-opencompass": ("ancientbench.publish.opencompass_export", "write OpenCompass dataset configs and the paper's summarizer"),
    "export-lighteval": ("ancientbench.publish.lighteval_export", "write a lighteval custom-task module"),
    "export-evalscope": ("ancientbench.publish.evalscope_export", "write an EvalScope custom benchmark (adapter and data)"),
    "register": ("ancientbench.publish.register", "make load_dataset(\"ancientbench\") and evaluate.load(\"ancientbench_metric\") work by name, offline"),
    "tiny-model": ("ancientbench.tiny", "write the offline tiny-random smoke model as a standard Hugging Face folder"),
    "finetune-data": ("ancientbench.finetune.data_command", "build the instruction-tuning dataset, test items held out"),
    "finetune": ("ancientbench.finetune.command", "full fine-tuning of a causal LM, then evaluation beside its base"),
    "train-mini": ("ancientbench.mini.train", "pretrain the ancientbench-mini classical LM from scratch (fixed seed, resumable)"),
    "train-inject": ("ancientbench.mini.inject_train", "train the knowledge-injection pair: (a) base corpus, (b) + reference text (resumable)"),
}

# --no-progress: the libraries' own bars too (datasets, Hub transfers, any tqdm), which they read when imported
QUIET_ENV = {"HF_DATASETS_DISABLE_PROGRESS_BARS": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TQDM_DISABLE": "1"}


def plain(docline: str, command: str) -> str:
    """A module docstring's first line as plain text for --help: no RST markup, no "ancientbench CMD:" prefix."""
    text = re.sub(r"``([^`]*)``", r"\1", docline).strip()
    text = re.sub(rf"^ancientbench {re.escape(command)}( [^:]*)?:\s*", "", text)
    return text[:1].upper() + text[1:]


def version_text() -> str:
    return f"ancientbench {__version__} (dataset {getattr(tasks, 'DATASET_VERSION', 'unversioned')})"


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The full parser; only ``command``'s module is imported (others are listed with their help line),
    so one subcommand's heavy or broken import never affects another."""
    parser = argparse.ArgumentParser(
        prog="ancientbench",
        description="AncientBench: ancient-Chinese comprehension benchmark for language models.",
    )
    parser.add_argument("--version", action="version", version=version_text())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        help_text = help_text.replace("%", "%%")  # argparse %-formats help strings: "(<= 30%)" must stay literal
        if name != command:
            sub.add_parser(name, help=help_text, add_help=False)
            continue
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=help_text, description=plain((module.__doc__ or help_text).strip().splitlines()[0], name))
        module.add_arguments(p)
        logs.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand. A user error (bad data, a missing file or model, a wrong option value) is one
    ``error:`` line on stderr and exit status 2; ``ANCIENTBENCH_DEBUG=1`` shows the traceback instead."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    if not argv:  # a bare `ancientbench`: the command list, not just a usage line
        build_parser().print_help(sys.stderr)
        return 2
    args = build_parser(command if command in COMMANDS else None).parse_args(argv)
    logs.configure(args.verbosity)
    quiet = QUIET_ENV if getattr(args, "no_progress", False) else {}
    saved = {k: os.environ.get(k) for k in quiet}
    os.environ.update(quiet)
    try:
        return int(args._module.run(args) or 0)
    except AncientBenchError as e:  # a user error: one line; anything else is a bug and keeps its traceback
        if os.environ.get("ANCIENTBENCH_DEBUG"):
            raise
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a user path that cannot be read or written (permissions, disk full, a file for a folder)
        if os.environ.get("ANCIENTBENCH_DEBUG") or e.filename is None:
            raise
        where = f"{e.filename}" + (f" -> {e.filename2}" if e.filename2 else "")
        print(f"error: {where}: {e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: everything scored so far is saved; run the same command again to resume", file=sys.stderr)
        return 130
    finally:  # the caller's environment as it was (main runs inside tests and the ladder too)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


if __name__ == "__main__":
    sys.exit(main())
