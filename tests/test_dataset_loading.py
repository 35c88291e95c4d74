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


# ---------------------------------------------------------------- evaluate_model takes what HF users hold


def _hf_dict(fixture_items, splits=("test", "dev")):
    import datasets

    return datasets.DatasetDict({s: datasets.Dataset.from_list([r for t in fixture_items for r in fixture_items[t][i]])
                                 for i, s in enumerate(("test", "dev")) if s in splits})


def _predictions(res) -> dict:
    return {k: [(p["id"], p["pred"]) for p in r["predictions"]] for k, r in res.items()}


@pytest.fixture(scope="module")
def by_folder(tiny_qwen2, fixture_data):
    from ancientbench import evaluate_model

    return evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, data=fixture_data, shots=(0, 5), progress=False)


def test_evaluate_model_takes_a_datasetdict_a_dataset_and_a_hub_id(tiny_qwen2, fixture_data, fixture_items, by_folder, monkeypatch):
    import datasets

    from ancientbench import evaluate_model

    def run(data, **kw):
        return evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, data=data, progress=False, **kw)

    ds = _hf_dict(fixture_items)
    with pytest.warns(UserWarning, match=r"no test data for task\(s\) pronunciation.* in datasets.DatasetDict; scoring"):
        from_dict = run(ds, shots=(0, 5))  # the fixture has 5 of the 10 tasks: said with the object's name
    assert _predictions(from_dict) == _predictions(by_folder)
    for k in (0, 5):  # the rows written back are the files' bytes: the same recorded hashes
        assert from_dict[k]["data"]["files_sha256"] == by_folder[k]["data"]["files_sha256"]
        assert from_dict[k]["data"]["path"] == "datasets.DatasetDict"
    # a Dataset is a question set (test rows); its exemplars come from fewshot_data, as for a JSONL file
    from_split = run(ds["test"], shots=(0, 5), fewshot_data=fixture_data)
    assert _predictions(from_split) == _predictions(by_folder) and from_split[0]["data"]["path"] == "datasets.Dataset"

    asked = []

    def fake_load(name, config=None, **kw):  # what load_dataset("ORG/ancientbench", "all") resolves to
        asked.append((name, config))
        return ds

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    from_hub = run("someorg/ancientbench", shots=(0,))
    assert asked == [("someorg/ancientbench", "all")]
    assert _predictions(from_hub)[0] == _predictions(by_folder)[0] and from_hub[0]["data"]["path"] == "someorg/ancientbench"


def test_evaluate_model_data_errors_are_one_clear_line(tiny_qwen2, fixture_items):
    from ancientbench import evaluate_model
    from ancientbench.errors import AncientBenchError

    def run(data):
        return evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, data=data, shots=(0,), progress=False)

    with pytest.raises(AncientBenchError, match=r"--data nobody/nothing: no such dataset folder or JSONL file, and no "
                                                r"Hugging Face dataset of that id could be loaded \(load_dataset"):
        run("nobody/nothing")  # offline (conftest) and not cached
    with pytest.raises(AncientBenchError, match=r"a DatasetDict needs a 'test' split .* it has \['dev'\]"):
        run(_hf_dict(fixture_items, splits=("dev",)))
    with pytest.raises(AncientBenchError, match="expected a path, a Hub id, a datasets.Dataset or a datasets.DatasetDict, got list"):
        run([{"id": "x"}])
    with pytest.raises(AncientBenchError, match="no such dataset folder or JSONL file"):
        run("missing_questions.jsonl")  # a typo stays a typo, not a Hub request
