"""`ancientbench register`: the bare names load_dataset("ancientbench", cfg) and evaluate.load("ancientbench_metric")
work offline from a folder that has nothing of the project, in fresh processes with a fresh HF_HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}


def _py(code: str, cwd, hf_home, *, quiet: bool = False) -> str:
    env = {**os.environ, **OFFLINE, "HF_HOME": str(hf_home)}
    env.pop("HF_DATASETS_CACHE", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    if quiet:  # no warning, no fallback notice, no progress bar text
        assert "warn" not in out.stderr.lower() and "cached version" not in out.stderr, out.stderr[-3000:]
    return out.stdout


@pytest.fixture(scope="module")
def registered(tmp_path_factory):
    hf_home = tmp_path_factory.mktemp("hf_home")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    _py("from ancientbench.cli import main; raise SystemExit(main(['register']))", elsewhere, hf_home)
    return hf_home, elsewhere


def test_evaluate_load_by_bare_name_from_any_folder(registered):
    hf_home, elsewhere = registered
    out = _py(
        "import evaluate, json; m = evaluate.load('ancientbench_metric'); "
        "print(json.dumps(m.compute(predictions=['A', 2], references=['A', 'B'], tasks=['radical', 'cloze'], n_resamples=0)))",
        elsewhere, hf_home, quiet=True,
    )
    r = json.loads(out.strip().splitlines()[-1])
    assert r["tasks"]["radical"]["accuracy"] == 1.0 and r["tasks"]["cloze"]["accuracy"] == 0.0 and r["average"] == 0.5


def test_load_dataset_by_bare_name_from_any_folder_every_config(registered):
    from ancientbench.tasks import TASK_NAMES

    hf_home, elsewhere = registered
    out = _py(
        "import datasets, json; from ancientbench.tasks import TASK_NAMES; "
        "print(json.dumps({c: datasets.load_dataset('ancientbench', c)['test'].num_rows for c in [*TASK_NAMES, 'all']}))",
        elsewhere, hf_home,
    )
    sizes = json.loads(out.strip().splitlines()[-1])
    assert set(sizes) == {*TASK_NAMES, "all"} and all(n > 0 for n in sizes.values())
    assert sizes["all"] == sum(sizes[t] for t in TASK_NAMES)


def test_without_registration_the_bare_metric_name_is_not_found(tmp_path):
    env = {**os.environ, **OFFLINE, "HF_HOME": str(tmp_path / "empty")}
    out = subprocess.run(
        [sys.executable, "-c", "import evaluate; evaluate.load('ancientbench_metric')"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode != 0 and "ancientbench_metric" in out.stderr
