"""``ancientbench train-inject``: train the knowledge-injection pair (issue 36), fixed seed, resumable.

Two models with one architecture, one tokenizer, one seed and one number of tokens seen; they differ only in what
they read: (a) the mini-LM's base corpus, (b) the same plus the knowledge sources as reference text
(:mod:`ancientbench.mini.inject_corpus`). Stages, each kept in ``--work`` (default ``runs/inject``):

1. ``corpus_a.jsonl``, ``corpus_b.jsonl``, ``corpus_report.json``: both corpora and both item-text leakage checks
   (the build stops if either fails);
2. ``tokenizer/``: one ByteLevel BPE trained on corpus (a), the classics and the first passes of (b)'s reference
   text, used by both models;
3. ``a/`` and ``b/``: :func:`ancientbench.mini.train.train` on each corpus (checkpoints, ``loss.jsonl``), the
   finished model exported in float16 to ``ancientbench/mini/ancientbench-inject-{a,b}/`` with its card.

``--which a`` and ``--which b`` train one model each (two processes, one thread each, after ``--which none``
has built the corpora and tokenizer); ``both`` trains them one after the other.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from ..argtypes import add_no_progress
from ..errors import AncientBenchError
from ..fileio import atomic_write
from ..paths import DEFAULT_SOURCES_DIR, INJECT_NAMES, SHUOWEN_DIR
from . import corpus
from .inject_card import write_card
from .inject_corpus import build_corpora
from .train import check_output, prepare_tokenizer, train

# smaller than the shipped mini (4.3M) so that each run takes about half an hour on one loaded CPU thread
SETTINGS = dict(vocab_size=6000, hidden_size=128, intermediate_size=384, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, seq_len=128, batch_size=8, steps=1600, lr=2e-3, min_lr=1e-4, warmup=60,
                weight_decay=0.1, seed=0, save_every=50)
LIMIT = 200  # knowledge characters: the targets of the first LIMIT test items of each character task (the ladder's items)
ROUNDS = 160  # passes over the facts in (b): the reference text about 60% of (b)'s tokens
TOKENIZER_ROUNDS = 3  # passes of the reference text the shared tokenizer is trained on (with (a) and the classics)


class TrainInjectError(AncientBenchError, RuntimeError):
    """A knowledge-injection run that cannot start or resume as asked."""


def _read_docs(path: Path) -> list[str]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write_docs(path: Path, docs: list[str]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    os.replace(tmp, path)


def prepare_corpora(work: Path, sources: Path, shuowen: Path | None, *, limit: int | None, rounds: int, seed: int) -> dict:
    """Build (or reuse) both corpora and their report; refuse a corpus the item-text check does not pass."""
    report_file = work / "corpus_report.json"
    if report_file.is_file():
        return json.loads(report_file.read_text(encoding="utf-8"))
    work.mkdir(parents=True, exist_ok=True)
    docs_a, docs_b, report = build_corpora(sources, shuowen, limit=limit, rounds=rounds, seed=seed, held=corpus.held_out())
    for key in ("a", "b"):
        check = report["leak_check"][key]
        if not check["passed"]:
            raise TrainInjectError(f"corpus ({key}) holds benchmark item text: {check['examples'][:3]}")
    _write_docs(work / "corpus_a.jsonl", docs_a)
    _write_docs(work / "corpus_b.jsonl", docs_b)
    atomic_write(report_file, json.dumps(report, ensure_ascii=False, indent=1) + "\n")
    return report


def tokenizer_docs(work: Path, report: dict) -> list[str]:
    """What the shared tokenizer is trained on: corpus (a), the classics and the first passes of the reference text."""
    n = report["documents"]["a"] + report["classics"]["passages"] + TOKENIZER_ROUNDS * report["knowledge"]["pages_per_round"]
    return _read_docs(work / "corpus_b.jsonl")[:n]


def train_one(key: str, work: Path, report: dict, settings: dict, *, threads: int, out: Path,
              progress: bool = True) -> dict:
    corpus_file = work / f"corpus_{key}.jsonl"

    def corpus():
        return _read_docs(corpus_file), {"key": key, **report}

    return train(work / key, out, work, settings, threads=threads, corpus=corpus,
                 tokenizer_docs=lambda: tokenizer_docs(work, report), tokenizer_dir=work / "tokenizer",
                 name=INJECT_NAMES[key], card=write_card, dtype="float16", progress=progress)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--work", default="runs/inject", help="folder for corpora, tokenizer, checkpoints, loss logs (resumable)")
    parser.add_argument("--which", choices=("a", "b", "both", "none"), default="both",
                        help="which model to train (none: build the corpora and tokenizer only; default %(default)s)")
    parser.add_argument("--sources", default=None, help="folder holding node_modules/chinese-poetry (default: the builders' .sources)")
    parser.add_argument("--shuowen", default=None,
                        help="說文 data folder (user-supplied; skipped when absent; default: ../shared/sources/shuowen beside the clone)")
    parser.add_argument("--limit", type=int, default=LIMIT, help="knowledge characters from the first N test items per character task (0: all)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="passes over the facts in corpus (b) (default %(default)s)")
    parser.add_argument("--steps", type=int, default=SETTINGS["steps"], help="optimizer steps, the same for both (default %(default)s)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default %(default)s)")
    add_no_progress(parser)
    parser.add_argument("--output-dir", default=None,
                        help="where the models go (default: <work>/models; never into the installed package, whose shipped pair "
                             "a maintainer replaces by copying)")


def run(args: argparse.Namespace) -> int:
    if args.steps < 1 or args.threads < 1 or args.rounds < 1 or args.limit < 0:
        raise TrainInjectError("--steps, --threads and --rounds must be positive, --limit >= 0")
    work = Path(args.work)
    settings = {**SETTINGS, "steps": args.steps, "limit": args.limit, "rounds": args.rounds}
    keys = {"a": ["a"], "b": ["b"], "both": ["a", "b"], "none": []}[args.which]
    outs = {key: Path(args.output_dir or work / "models") / INJECT_NAMES[key] for key in keys}
    for key in keys:
        check_output(outs[key], INJECT_NAMES[key], "train-inject")  # before the corpora and any training (issue 33's N3, as train-mini)
    report = prepare_corpora(work, Path(args.sources or DEFAULT_SOURCES_DIR), Path(args.shuowen or SHUOWEN_DIR),
                             limit=args.limit or None, rounds=args.rounds, seed=SETTINGS["seed"])
    if not keys:
        prepare_tokenizer(work, tokenizer_docs(work, report), SETTINGS["vocab_size"], work / "tokenizer")
        print(f"corpora and tokenizer ready in {work}")
    for key in keys:
        out = outs[key]
        record = train_one(key, work, report, settings, threads=args.threads, out=out, progress=not args.no_progress)
        print(f"wrote {out} (validation loss {record['validation_loss']:.3f})")
    return 0
