"""``ancientbench finetune``: full fine-tuning of a causal LM on the instruction data, then evaluation beside its base."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="base model: local path or Hugging Face id")
    parser.add_argument("--data", required=True, help="folder written by `ancientbench finetune-data`")
    parser.add_argument("--output", required=True, help="output folder for checkpoints and the final model")


def run(args: argparse.Namespace) -> int:
    raise SystemExit("finetune: being implemented (issue 8)")
