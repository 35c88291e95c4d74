"""``bench/run.py``: the baseline runner (``--baseline-code``) imports the package from the other checkout and
reports the ratio to it, with identical predictions on the same questions. Correctness only, never wall time."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from support import REPO_ROOT

BENCH = REPO_ROOT / "bench" / "run.py"


def _bench(tmp_path, *args, env_extra=None):
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env_extra or {})}
    return subprocess.run([sys.executable, str(BENCH), *args, "--output", str(tmp_path / "results")],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=600)


def test_baseline_runner_uses_the_other_checkout(tmp_path, tiny_qwen2):
    # a copy of the package stands for the other checkout; the runner must import it from there
    other = tmp_path / "other"
    shutil.copytree(REPO_ROOT / "ancientbench", other / "ancientbench", ignore=shutil.ignore_patterns("__pycache__"))
    proc = _bench(tmp_path, "--model", tiny_qwen2.info["name_or_path"], "--questions", "10", "--shots", "0", "--runners", "ancientbench",
                  "--baseline-code", str(other), "--threads", "1")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    name = f"ancientbench@{other.name}"
    assert f"0-shot ancientbench/{name}:" in proc.stdout
    assert f"0-shot agreement ancientbench vs {name}: 10/10 identical predictions" in proc.stdout
    report = json.loads(next((tmp_path / "results").glob("*.json")).read_text())
    assert report["baseline"] == {"runner": name, "code": str(other.resolve())}
    setting = report["settings"]["0"]
    assert set(setting["ratios"]) >= {f"ancientbench/{name}", f"ancientbench/{name} (scoring only)"}
    assert setting[name]["agreement_with_ancientbench"]["identical"] == 10


def test_baseline_code_must_hold_the_package(tmp_path, tiny_qwen2):
    proc = _bench(tmp_path, "--model", tiny_qwen2.info["name_or_path"], "--questions", "4", "--shots", "0", "--runners", "ancientbench",
                  "--baseline-code", str(tmp_path))
    assert proc.returncode != 0 and "no ancientbench package there" in (proc.stdout + proc.stderr)


def test_help_lists_the_baseline_flag(tmp_path):
    proc = _bench(tmp_path, "--help")
    assert proc.returncode == 0 and "--baseline-code" in proc.stdout
