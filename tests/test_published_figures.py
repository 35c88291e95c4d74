"""Every figure the project publishes comes from its records or its data, so none can go stale.

- The dataset card's *Reference results* and the mini-LM card's results are rendered from the recorded ladder run
  (``records/ladder.json``), and ``card --check`` fails when that run was recorded on other data;
- the README and docs/reference-results.md quote figures by hand, each tagged with where it comes from
  (``85.5%<!-- ladder: 0-shot | Stem-reading predictor (shot-independent) | radical -->``, ``19,410<!-- data: test items -->``): each must
  equal what the record or the loader gives;
- the data releases the card, README and docs cite are commits (a git tag does not travel with a branch), each one
  in ``tasks.DATASET_RELEASES`` and present in this repository.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from ancientbench import DATASET_PATH
from ancientbench.publish import card
from ancientbench.reports import ladder_record as ladder
from ancientbench.schema import load_split
from ancientbench.tasks import DATASET_RELEASES, DATASET_VERSION, TASK_NAMES

REPO = Path(__file__).resolve().parents[1]
QUOTING = ("README.md", "docs/reference-results.md")  # hand-written pages that quote recorded figures
CITING = ("README.md", "ancientbench/README.md", "docs/performance.md", "docs/validity.md", "bench/run.py")
TAG = re.compile(r"([0-9][0-9,]*(?:\.[0-9]+)*)%?<!-- (ladder|data): ([^>]*?) -->")


def _fresh_record(**change) -> dict:
    """A record of a ladder run on the shipped data (its version and files), with one row per shot setting."""
    full = {"score": 0.5, "ci": [0.4, 0.6]}
    row = {"label": "Chance", "n_items": 2000, "average": full, "competencies": {"glyph": full},
           "tasks": {"radical": {"accuracy": 0.245, "correct": 49, "total": 200, "ci": [0.19, 0.31]}}}
    rec = {"dataset_version": DATASET_VERSION, "data_sha256": ladder.data_sha256(), "limit_per_task": 200,
           "reference_rows": {"Chance": "a seeded uniform guess per item"}, "settings": {"0": [row]},
           "compare_with_tiny_random": {}, "compare_finetuned": {}}
    return {**rec, **change}


def test_the_recorded_run_if_any_holds_for_the_shipped_data():
    rec = ladder.load_record()
    block = card.generated_block(card.card_path().read_text(encoding="utf-8"), "reference")
    if rec is None:  # none recorded on this data: the card says so and shows no figure
        assert "No ladder run is recorded on data" in block and "|" not in block
        return
    assert ladder.stale(rec) is None
    assert rec["dataset_version"] == DATASET_VERSION and set(rec["data_sha256"]) >= {f"{t}/test.jsonl" for t in TASK_NAMES}


def _expected(kind: str, key: str, rec: dict | None, written: str) -> str:
    """What the tag's source gives, written as the page writes it (its decimals, thousands separators)."""
    parts = [p.strip() for p in key.split("|")]
    if kind == "data":
        assert parts == ["test items"], key
        return f"{sum(len(load_split(DATASET_PATH, t, 'test')) for t in TASK_NAMES):,}"
    assert rec is not None, f"a page quotes the ladder ({key}) but no run is recorded: run `ancientbench ladder --record`"
    if parts == ["data version"]:
        return rec["dataset_version"]
    shots, row, column = parts
    decimals = len(written.split(".")[1]) if "." in written else 0
    return f"{ladder.figure(rec, int(shots.removesuffix('-shot')), row, column):.{decimals}f}"


@pytest.mark.parametrize("page", QUOTING)
def test_figures_quoted_by_hand_equal_the_records(page):
    text = (REPO / page).read_text(encoding="utf-8")
    rec = ladder.load_record()
    quoted = TAG.findall(text)
    assert quoted or page != "README.md", f"{page}: its figures are no longer tagged with their source"
    wrong = [(written, key, exp) for written, kind, key in quoted if written != (exp := _expected(kind, key, rec, written))]
    assert not wrong, f"{page}: (quoted, source, recorded) {wrong}; rerun `ancientbench ladder --record` or fix the page"
    assert not re.search(r"19,748|\b85%|\b91%", text)  # the figures of data 2.3.0, published until 2.4.0


def test_a_figure_quoted_wrong_is_caught():
    rec = _fresh_record()
    good, bad = "24.5%<!-- ladder: 0-shot | Chance | radical -->", "25.5%<!-- ladder: 0-shot | Chance | radical -->"
    assert [_expected(k, key, rec, w) == w for w, k, key in TAG.findall(good + " and " + bad)] == [True, False]
    assert _expected("data", "test items", None, "19,748") != "19,748"
    # pronunciation is a task and a competency: a tag names the competency as --tasks does
    assert ladder.figure(rec, 0, "Chance", "competency:glyph") == 50.0 and round(ladder.figure(rec, 0, "Chance", "radical"), 1) == 24.5


def test_ladder_help_counts_the_test_items_from_the_data(capsys):
    from ancientbench.cli import main
    from ancientbench.dataset import count_items

    n = sum(len(load_split(DATASET_PATH, t, "test")) for t in TASK_NAMES)
    assert count_items() == n
    with pytest.raises(SystemExit):
        main(["ladder", "--help"])
    assert f"{n:,} questions" in " ".join(capsys.readouterr().out.split())


@pytest.fixture
def record_file(tmp_path, monkeypatch):
    """A record the card and the mini-LM card read instead of records/ladder.json."""
    path = tmp_path / "ladder.json"
    monkeypatch.setattr(ladder, "LADDER_RECORD_FILE", path)
    return path


def test_card_refuses_a_recorded_run_of_other_data(record_file, capsys):
    from ancientbench.mini import MINI_PATH
    from ancientbench.mini.card import render_card as mini_card

    record_file.write_text(json.dumps(_fresh_record()), encoding="utf-8")
    assert "| Chance |" in card.render_reference() and "| Chance |" in mini_card(MINI_PATH)
    before = card.card_path().read_bytes()
    sha = {**ladder.data_sha256(), "radical/test.jsonl": "0" * 64}
    for change, named in (({"dataset_version": "2.3.0"}, "on data 2.3.0"), ({"data_sha256": sha}, "radical/test.jsonl")):
        record_file.write_text(json.dumps(_fresh_record(**change)), encoding="utf-8")
        with pytest.raises(card.StaleFigures, match="ladder --record"):
            card.render_reference()
        assert card.main(["--check"]) == 1
        out = capsys.readouterr().out
        assert "Reference results" in out and named in out, out
        assert card.main([]) == 2 and card.card_path().read_bytes() == before  # nothing written
        assert "| Chance |" not in mini_card(MINI_PATH)  # the model card shows no figure of other data either


def test_the_reference_block_shows_the_recorded_rows_whatever_they_are():
    """Rows come from the record (labels, descriptions): a new row flows into the card without a code change."""
    rec = _fresh_record()
    rec["settings"]["0"].append({**rec["settings"]["0"][0], "label": "Options-only predictor"})
    rec["reference_rows"]["Options-only predictor"] = "a predictor reading the four options only"
    text = ladder.render_markdown(rec)
    assert "| Options-only predictor |" in text and "**Options-only predictor**: a predictor reading the four options only" in text
    assert f"data version {DATASET_VERSION}" in text and "(2,000 questions)" in text


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
