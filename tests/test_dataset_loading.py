"""Reading question sets: load_task over folders and JSONL files, and cache_dataset for load_dataset by name."""

import os

import pytest
from support import N_DEV, N_TEST

from ancientbench import DATASET_PATH
from ancientbench.dataset import cache_dataset, load_questions, load_task
from ancientbench.schema import DataError, split_file, write_jsonl


def test_load_task_from_folder_and_jsonl(fixture_data, fixture_items, tmp_path):
    assert load_task("cloze", data=fixture_data) == fixture_items["cloze"][0]
    assert load_task("cloze", "dev", data=fixture_data) == fixture_items["cloze"][1]
    write_jsonl(tmp_path / "q.jsonl", fixture_items["cloze"][0][:2] + fixture_items["radical"][0][:1])
    assert [r["id"] for r in load_task("cloze", data=tmp_path / "q.jsonl")] == ["cloze-t0", "cloze-t1"]
    with pytest.raises(ValueError, match="no 'dev' split"):
        load_task("cloze", "dev", data=tmp_path / "q.jsonl")
    with pytest.raises(DataError, match="missing file"):
        load_task("translation", data=fixture_data)


def test_load_questions_checks_exemplars(fixture_data, fixture_items, tmp_path):
    qs = load_questions(["cloze"], fixture_data, shots=(0, 5))
    assert len(qs.items["cloze"]) == N_TEST and len(qs.exemplars["cloze"]) == N_DEV
    assert set(qs.files_for(0)) == {"data/cloze/test.jsonl"}
    assert set(qs.files_for(5)) == {"data/cloze/test.jsonl", "data/cloze/dev.jsonl"}

    short = tmp_path / "short"
    write_jsonl(split_file(short, "cloze", "test"), fixture_items["cloze"][0])
    write_jsonl(split_file(short, "cloze", "dev"), fixture_items["cloze"][1][:3])
    assert load_questions(["cloze"], short, shots=(0, 3)).exemplars["cloze"][:3] == fixture_items["cloze"][1][:3]
    with pytest.raises(DataError, match="5-shot needs 5 dev rows"):
        load_questions(["cloze"], short, shots=(0, 5))

    leak = tmp_path / "leak"
    write_jsonl(split_file(leak, "cloze", "test"), fixture_items["cloze"][0])
    write_jsonl(split_file(leak, "cloze", "dev"), fixture_items["cloze"][0][:5])
    with pytest.raises(DataError, match="also test items"):
        load_questions(["cloze"], leak, shots=(5,))
    with pytest.raises(FileNotFoundError, match="no such dataset folder"):
        load_questions(["cloze"], tmp_path / "nowhere")


def test_cache_dataset_makes_the_name_work(tmp_path, monkeypatch):
    from datasets import get_dataset_config_names, load_dataset

    declared = [c for c in get_dataset_config_names(DATASET_PATH) if split_file(DATASET_PATH, c, "test").is_file()]
    if not declared:
        pytest.skip("the bundled dataset card lists no config with data yet")
    config = min(declared, key=lambda c: split_file(DATASET_PATH, c, "test").stat().st_size)  # the smallest

    cached = cache_dataset(configs=[config], cache_dir=tmp_path / "hf")
    n = len(load_task(config))
    assert len(cached[config]["test"]) == n
    monkeypatch.chdir(tmp_path)  # no folder named ancientbench here: the name resolves from the cache
    assert not os.path.exists("ancientbench")
    again = load_dataset("ancientbench", config, cache_dir=str(tmp_path / "hf"))
    assert len(again["test"]) == n and again["test"][0]["id"] == load_task(config)[0]["id"]
