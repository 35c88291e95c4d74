"""Builders: sources -> questions. One builder module per task (``ancientbench/builders/<task>.py``), each exposing
``build(ctx: BuildContext) -> BuildResult``, found by the task's name (:func:`builder`); the shared helpers beside
them (``common``, ``curated``, ``debias``, ``glyphcheck`` ...). The source adapters (``ancientbench.sources``) raise
:class:`SourceMissing` with the install command when a source is absent. The command: :mod:`.command`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from ..paths import DEFAULT_SOURCES_DIR
from .common import BuildResult

DEFAULT_SEED = 20241


@dataclass(frozen=True)
class BuildContext:
    seed: int = DEFAULT_SEED
    sources_dir: Path = DEFAULT_SOURCES_DIR
    shuowen_dir: Path | None = None  # ../shared/sources/shuowen, for the paper-faithful 說文 variants
    parallel_corpus: Path | None = None  # a 古文/现代文 corpus for a user translation config


def builder(task: str):
    """The builder module of a task."""
    return importlib.import_module(f"ancientbench.builders.{task}")


def build_task(task: str, ctx: BuildContext) -> BuildResult:
    return builder(task).build(ctx)
