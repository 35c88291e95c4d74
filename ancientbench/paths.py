"""The folders the package reads and writes, in one place (the bottom layer: imports only errors.py, its neighbour there).

- ``PACKAGE_DIR``: the package, which is also the Hugging Face dataset folder (``README.md`` card + ``data/``).
- ``RECORDS_DIR``: ``records/`` at a clone's root, what the project keeps for the record (an installed wheel has
  none): ``CURATED_DIR`` (team-written items, glossaries, the review log, hand-checked lists), ``PROBES_DIR`` (the
  blind-examinee probe records), ``CHANGELOG_FILE``, ``V1_STRATEGIES_FILE``, ``BUILD_REPORT_FILE`` and
  ``LADDER_RECORD_FILE`` (the recorded ladder run, with the data version and files it ran on).
- ``DATA_FILE`` / :func:`data_file`: ``data/<task>/<split>.jsonl``, a split's file inside a dataset folder.
- ``TANG_GLOB``: the 全唐詩 files of the npm chinese-poetry package (the classics corpus and the mini-LM's corpus).
- ``HUMAN_NAME``: the human examinee's model name and results folder (``ancientbench human``, the reports).
- ``MINI_PATH``: the shipped mini-LM's folder (``MINI_NAME``; :func:`mini_path` checks it is there).
- ``DEFAULT_SOURCES_DIR``: the npm sources ``scripts/install.sh`` fetches (``$ANCIENTBENCH_SOURCES`` overrides).
- :func:`cache_root`: built models and hash caches (``$ANCIENTBENCH_CACHE``, else ``$XDG_CACHE_HOME/ancientbench``,
  else ``~/.cache/ancientbench``).
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import AncientBenchError, RecordsMissing

PACKAGE_DIR = Path(__file__).resolve().parent
DATASET_PATH = str(PACKAGE_DIR)  # the dataset folder (data/<config>/{test,dev}.jsonl + README.md card), as a str
REPO_ROOT = PACKAGE_DIR.parent  # a clone's root; in an installed wheel, site-packages (nothing of ours there)
RECORDS_DIR = REPO_ROOT / "records"
CURATED_DIR = RECORDS_DIR / "curated"
PROBES_DIR = RECORDS_DIR / "probes"
CHANGELOG_FILE = RECORDS_DIR / "CHANGELOG.md"  # what changed in each data version (prose; the card renders it)
V1_STRATEGIES_FILE = RECORDS_DIR / "v1_strategies.json"  # the changelog's "before" figures (data version 1.0.0)
BUILD_REPORT_FILE = RECORDS_DIR / "build_report.json"  # counts and drops of the last `ancientbench build` of the package
LADDER_RECORD_FILE = RECORDS_DIR / "ladder.json"  # the recorded ladder run (`ladder --record`): the cards' reference figures
DATA_FILE = "data/{task}/{split}.jsonl"  # one config's split inside a dataset folder (the Hugging Face layout)
TANG_GLOB = "quantangshi/poet.tang.*.json"  # the 全唐詩 files of the npm chinese-poetry package, under its dist folder
HUMAN_NAME = "Human"  # the human examinee: its model name in results files and its folder under an output folder
MINI_NAME = "ancientbench-mini"  # the embedded default model, evaluated and fine-tuned by this name
MINI_PATH = PACKAGE_DIR / "mini" / MINI_NAME
# the knowledge-injection pair (issue 36): (a) read the base corpus, (b) the same plus the knowledge sources
INJECT_NAMES = {"a": "ancientbench-inject-a", "b": "ancientbench-inject-b"}
INJECT_PATHS = {k: PACKAGE_DIR / "mini" / name for k, name in INJECT_NAMES.items()}
SHUOWEN_DIR = REPO_ROOT.parent / "shared" / "sources" / "shuowen"  # user-supplied 說文 data, where present
DEFAULT_SOURCES_DIR = Path(os.environ.get("ANCIENTBENCH_SOURCES", REPO_ROOT / ".sources"))


def data_file(folder: str | Path, task: str, split: str) -> Path:
    """``folder/data/<task>/<split>.jsonl``: one config's split (a benchmark task's test/dev, a fine-tuning kind's
    train/validation) inside a dataset folder."""
    return Path(folder) / DATA_FILE.format(task=task, split=split)


def cache_root() -> Path:
    """``$ANCIENTBENCH_CACHE``, else ``$XDG_CACHE_HOME/ancientbench``, else ``~/.cache/ancientbench``."""
    if os.environ.get("ANCIENTBENCH_CACHE"):
        return Path(os.environ["ANCIENTBENCH_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ancientbench"


def record(path: Path) -> Path:
    """``path`` (under ``records/``) when it exists, else :class:`~ancientbench.errors.RecordsMissing` naming it."""
    if not path.exists():
        raise RecordsMissing(f"{path} not found: records/ comes with a clone of the repository, not with an installed package")
    return path


def mini_path() -> Path:
    """The shipped model folder; an error naming the training command when it is missing."""
    if not (MINI_PATH / "config.json").is_file():
        raise AncientBenchError(f"{MINI_PATH}: the {MINI_NAME} model is not in this installation; "
                                "train one with `ancientbench train-mini` (about an hour on 2 CPU cores; written to "
                                "runs/ancientbench-mini/model) and pass that folder as --model")
    return MINI_PATH
