"""The folders the package reads and writes, in one place (the bottom layer: imports nothing of the package).

- ``PACKAGE_DIR``: the package, which is also the Hugging Face dataset folder (``README.md`` card + ``data/``).
- ``CURATED_DIR``: team-written items, glossaries and review logs; ``PROBES_DIR``: the blind-examinee probe records.
- ``RECORDS_DIR``: ``records/`` at a clone's root (reviews, version-1 strategy figures); an installed wheel has none.
- ``DEFAULT_SOURCES_DIR``: the npm sources ``scripts/install.sh`` fetches (``$ANCIENTBENCH_SOURCES`` overrides).
- :func:`cache_root`: built models and hash caches (``$ANCIENTBENCH_CACHE``, else ``$XDG_CACHE_HOME/ancientbench``,
  else ``~/.cache/ancientbench``).
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
DATASET_PATH = str(PACKAGE_DIR)  # the dataset folder (data/<config>/{test,dev}.jsonl + README.md card), as a str
REPO_ROOT = PACKAGE_DIR.parent  # a clone's root; in an installed wheel, site-packages (nothing of ours there)
CURATED_DIR = PACKAGE_DIR / "curated"
PROBES_DIR = CURATED_DIR / "probes"
RECORDS_DIR = REPO_ROOT / "records"
V1_STRATEGIES_FILE = RECORDS_DIR / "v1_strategies.json"  # the changelog's "before" figures (data version 1.0.0)
DEFAULT_SOURCES_DIR = Path(os.environ.get("ANCIENTBENCH_SOURCES", REPO_ROOT / ".sources"))


def cache_root() -> Path:
    """``$ANCIENTBENCH_CACHE``, else ``$XDG_CACHE_HOME/ancientbench``, else ``~/.cache/ancientbench``."""
    if os.environ.get("ANCIENTBENCH_CACHE"):
        return Path(os.environ["ANCIENTBENCH_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ancientbench"
