"""dataset_script/ancientbench.py (for datasets 2.x/3.x): on datasets 5 the builder class is used directly.

Checks that its configs and features equal the task registry and the schema, and that it yields exactly
the rows the card's configs give, reading the same files (data_dir, or the default relative to base_path).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import ancientbench
from ancientbench.publish.card import card_configs
from ancientbench.schema import FIELDS, SPLITS, write_jsonl
from ancientbench.tasks import TASKS

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "dataset_script" / "ancientbench.py"
LISTED = [c for c in card_configs(ancientbench.DATASET_PATH) if c != "all"]  # the card's task configs, compared with the builder's rows


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("ancientbench_dataset_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # datasets looks the builder's module up by name
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def build(script, tmp_path, config, **kwargs):
    builder = script.AncientBench(config_name=config, cache_dir=str(tmp_path / "cache"), **kwargs)
    builder.download_and_prepare()
    return builder.as_dataset()


def test_configs_and_features_equal_registry_and_schema(script):
    assert [c.name for c in script.AncientBench.BUILDER_CONFIGS] == [t.name for t in TASKS]
    assert [c.competency for c in script.AncientBench.BUILDER_CONFIGS] == [t.competency for t in TASKS]
    assert [(n, en, zh) for n, en, zh, _ in script._TASKS] == [(t.name, t.display_en, t.display_zh) for t in TASKS]
    info = script.AncientBench(config_name="radical")._info()
    assert list(info.features) == list(FIELDS)
    assert all(v.dtype == "string" for v in info.features.values())


def test_one_import_per_line():
    # datasets 3.x's import scanner reads "import json, os" as a package named "json,"
    for line in SCRIPT.read_text(encoding="utf-8").splitlines():
        if line.startswith(("import ", "from ")):
            assert "," not in line, line


def test_synthetic_folder_via_data_dir(script, tmp_path):
    folder = tmp_path / "ds"
    rows = {
        s: [
            {f: "" for f in FIELDS} | {"id": f"homophone-{s}-{i}", "task": "homophone", "question": f"問{i}", "A": "甲", "B": "乙",
                                      "C": "丙", "D": "丁", "answer": "ABCD"[i % 4], "source": "t"}
            for i in range(n)
        ]
        for s, n in (("test", 3), ("dev", 2))
    }
    for s in SPLITS:
        write_jsonl(folder / "data" / "homophone" / f"{s}.jsonl", rows[s])
    ds = build(script, tmp_path, "homophone", data_dir=str(folder))
    assert {s: ds[s].to_list() for s in SPLITS} == rows


def test_rejects_a_row_of_another_task(script, tmp_path):
    folder = tmp_path / "ds"
    row = {f: "x" for f in FIELDS} | {"task": "cloze", "answer": "A"}
    for s in SPLITS:
        write_jsonl(folder / "data" / "radical" / f"{s}.jsonl", [row])
    with pytest.raises(Exception) as info:
        build(script, tmp_path, "radical", data_dir=str(folder))
    chain, e = [], info.value
    while e is not None:  # datasets wraps generation errors in DatasetGenerationError
        chain.append(str(e))
        e = e.__cause__ or e.__context__
    assert any("test.jsonl, row 1, field 'task': 'cloze' in the file of 'radical'" in m for m in chain), chain


@pytest.mark.parametrize("config", LISTED)
def test_builder_yields_the_card_rows(script, config, tmp_path):
    import datasets

    card = datasets.load_dataset(ancientbench.DATASET_PATH, config)
    by_data_dir = build(script, tmp_path / "a", config, data_dir=ancientbench.DATASET_PATH)
    # no data_dir: "../ancientbench" relative to base_path, the script's folder in a clone
    by_default = build(script, tmp_path / "b", config, base_path=str(SCRIPT.parent))
    for split in SPLITS:
        expected = card[split].to_list()
        assert by_data_dir[split].to_list() == expected
        assert by_default[split].to_list() == expected
        assert by_data_dir[split].features == card[split].features
