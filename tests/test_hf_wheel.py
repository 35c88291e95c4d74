"""A non-editable wheel ships the dataset folder (card + data) and the metric folder, and both load from it.

Builds the wheel offline from a copy of the working tree (no build isolation: setuptools comes from the
venv, pinned in requirements/constraints.txt), installs it with --target into a temporary folder, and
runs evaluate.load / load_dataset from a third directory in a subprocess that imports only that copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from ancientbench.card import card_configs, present_configs
from ancientbench.schema import SPLITS, split_file

REPO = Path(__file__).resolve().parents[1]
TOP_LEVEL_SKIP = {".git", ".venv", ".sources", "build", "dist", "runs", "results", ".pytest_cache", "notebooks", "tests"}


def IGNORE(directory: str, names: list[str]) -> set[str]:
    """Leave out the venv, VCS and build outputs (top level only: ancientbench/build is a package) and caches."""
    skip = {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}
    if Path(directory).resolve() == REPO:
        skip |= TOP_LEVEL_SKIP & set(names)
    return skip


@pytest.fixture(scope="module")
def wheel_install(tmp_path_factory):
    import setuptools

    major = int(setuptools.__version__.split(".")[0])
    assert major >= 77, f"setuptools {setuptools.__version__} cannot build this pyproject (needs >= 77; see requirements/constraints.txt)"
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    shutil.copytree(REPO, src, ignore=IGNORE)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(root / "dist"), str(src)], check=True)
    (wheel,) = (root / "dist").glob("ancientbench-*.whl")
    site = root / "site"
    subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)], check=True)
    return wheel, site, root


def test_wheel_contains_card_data_and_metric(wheel_install):
    wheel, _, _ = wheel_install
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in ("ancientbench/README.md", "ancientbench_metric/ancientbench_metric.py", "ancientbench_metric/README.md", "ancientbench_metric/requirements.txt"):
        assert f in names, f
    expected = {f"ancientbench/data/{t}/{s}.jsonl" for t in present_configs(REPO / "ancientbench") for s in SPLITS if split_file(REPO / "ancientbench", t, s).is_file()}
    assert expected <= names, sorted(expected - names)
    assert not any(n.startswith("ancientbench/ancientbench.py") for n in names)  # would be taken for a loading script


def test_installed_wheel_loads_metric_and_dataset_from_elsewhere(wheel_install):
    _, site, root = wheel_install
    work = root / "elsewhere"
    work.mkdir()
    configs = card_configs(REPO / "ancientbench")  # what load_dataset offers from the installed card
    script = textwrap.dedent(
        """
        import json, sys
        import ancientbench, evaluate, datasets
        out = {"package": ancientbench.__file__, "metric_path": ancientbench.METRIC_PATH, "dataset_path": ancientbench.DATASET_PATH}
        m = evaluate.load(ancientbench.METRIC_PATH)
        out["average"] = m.compute(predictions=["A", "B"], references=["A", "C"], tasks=["radical", "cloze"], n_resamples=0)["average"]
        out["sizes"] = {}
        for cfg in sys.argv[1:]:
            ds = datasets.load_dataset(ancientbench.DATASET_PATH, cfg)
            out["sizes"][cfg] = {s: ds[s].num_rows for s in ds}
        print(json.dumps(out))
        """
    )
    env = dict(os.environ, PYTHONPATH=str(site), HF_HOME=str(root / "hf"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_EVALUATE_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", script, *configs], cwd=work, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(out["package"]).resolve().is_relative_to(site.resolve())
    assert Path(out["metric_path"]).resolve() == (site / "ancientbench_metric").resolve()
    assert Path(out["dataset_path"]).resolve() == (site / "ancientbench").resolve()
    assert out["average"] == 0.5
    from ancientbench.schema import load_split

    for cfg in configs:
        assert out["sizes"][cfg] == {s: len(load_split(REPO / "ancientbench", cfg, s)) for s in SPLITS}
