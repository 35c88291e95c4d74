"""argparse value types shared by the commands: a bad value is argparse's one-line usage error, exit 2."""

from __future__ import annotations

import argparse


def add_no_progress(parser: argparse.ArgumentParser) -> None:
    """``--no-progress``, the same on every long command (``cli.main`` also silences the libraries' bars)."""
    parser.add_argument("--no-progress", action="store_true", help="no progress bars or step lines (for logs and CI)")


def positive_int(value: str, also: str = "") -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer{also}, got {value!r}")
    return n


def non_negative_int(value: str) -> int:
    """Seeds and counts that may be 0 (numpy refuses a negative seed deep inside the bootstrap)."""
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value!r}")
    return n


def add_export_arguments(p: argparse.ArgumentParser, out_help: str, *, letter_style: bool = True,
                         hub_help: str = "read the data from this Hub dataset repository instead") -> None:
    """The arguments every harness export takes (export-lm-eval, -opencompass, -lighteval, -evalscope)."""
    p.add_argument("out_dir", metavar="DIR", help=out_help)
    p.add_argument("--data", default=None, metavar="FOLDER", help="dataset folder the tasks read (default: the package's own)")
    p.add_argument("--hub-id", default=None, metavar="ORG/NAME", help=hub_help)
    if letter_style:
        p.add_argument("--letter-style", choices=["bare", "space"], default="bare",
                       help="answer letter after 答案是：  bare 'A' (paper, default) or ' A' (lm-eval's usual)")
    p.add_argument("--tasks", nargs="+", default=None, help="task or competency names (default: all)")
