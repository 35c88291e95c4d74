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
