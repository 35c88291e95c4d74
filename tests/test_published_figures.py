"""The data releases the card, README and docs cite are commits (a git tag does not travel with a branch), each one
in ``tasks.DATASET_RELEASES`` and present in this repository.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from ancientbench.tasks import DATASET_RELEASES

REPO = Path(__file__).resolve().parents[1]
CITING = ("README.md", "ancientbench/README.md", "docs/performance.md", "docs/validity.md", "bench/run.py")


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)


def test_every_cited_release_is_a_commit_of_this_repository():
    if _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout (an sdist)")
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("a shallow clone holds no older commit")
    missing = [(v, c) for v, c in DATASET_RELEASES if _git("cat-file", "-e", f"{c}^{{commit}}").returncode != 0]
    assert not missing, missing


@pytest.mark.parametrize("page", CITING)
def test_pages_cite_releases_by_commit_from_the_map(page):
    text = (REPO / page).read_text(encoding="utf-8")
    assert not re.search(r"data-v[0-9]", text), f"{page} cites a git tag (tags do not travel with a branch): cite the commit"
    cited = re.findall(r"[Vv]ersion ([0-9]+\.[0-9]+\.[0-9]+)[^.`]{0,40}?commit `([0-9a-f]{7,40})`", text)
    releases = dict(DATASET_RELEASES)
    assert all(releases.get(v) == c for v, c in cited), (page, cited)
    if page == "ancientbench/README.md":  # the card's changelog cites every earlier release
        assert sorted(cited) == sorted(DATASET_RELEASES)
