"""``ancientbench push-to-hub``: dry-run listing and card validation, the upload calls (with a fake HfApi),
and one clear error line, never a traceback, when the Hub cannot be reached."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import ancientbench
from ancientbench.publish import card, hub
from ancientbench.schema import FIELDS, SPLITS, write_jsonl
from ancientbench.tasks import TASK_NAMES

REPO = Path(__file__).resolve().parents[1]


def make_dataset(root: Path, tasks=TASK_NAMES) -> Path:
    folder = root / "ancientbench"
    for t in tasks:
        for split, n in (("test", 4), ("dev", 2)):
            rows = [
                {f: "" for f in FIELDS}
                | {"id": f"{t}-{split}-{i}", "task": t, "question": f"問{i}", "A": "甲", "B": "乙", "C": "丙", "D": "丁",
                   "answer": "ABCD"[i % 4], "source": "team-curated"}
                for i in range(n)
            ]
            write_jsonl(folder / "data" / t / f"{split}.jsonl", rows)
    (folder / "README.md").write_text(card.render_card(folder), encoding="utf-8")
    (folder / "tiny_module.py").write_text("x = 1\n")  # must never be uploaded
    return folder


def run_hub(*argv: str) -> int:
    p = argparse.ArgumentParser()
    hub.add_arguments(p)
    return hub.run(p.parse_args(list(argv)))


def test_dry_run_lists_card_data_and_metric(tmp_path, capsys):
    folder = make_dataset(tmp_path)
    assert run_hub("--repo-id", "org/ancientbench", "--data", str(folder), "--metric", "--dry-run") == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("  ") and not line.strip()[0].isdigit() and "installs" not in line]
    data = [f"data/{t}/{s}.jsonl" for t in TASK_NAMES for s in SPLITS]
    assert listed == ["README.md", *data, "ancientbench_metric.py", "README.md", "requirements.txt", "app.py"]
    assert "  21 files," in out
    assert "spaces/org/ancientbench_metric" in out
    assert "the Space installs: evaluate, datasets, numpy" in out
    assert "tiny_module.py" not in out
    assert out.rstrip().endswith("dry run: nothing uploaded")


def test_dry_run_reports_partial_and_stale_cards(tmp_path, capsys):
    folder = make_dataset(tmp_path, tasks=("radical", "cloze"))
    assert run_hub("--repo-id", "org/ab", "--data", str(folder), "--dry-run") == 1
    out = capsys.readouterr().out
    assert "problem: configs without data: radical_meaning, pronunciation" in out
    assert "error: 1 problem(s)" in out
    assert run_hub("--repo-id", "org/ab", "--data", str(folder), "--dry-run", "--allow-partial") == 0
    capsys.readouterr()
    row = {f: "x" for f in FIELDS} | {"task": "homophone", "A": "甲", "B": "乙", "C": "丙", "D": "丁", "answer": "B"}
    write_jsonl(folder / "data" / "homophone" / "test.jsonl", [row])
    assert run_hub("--repo-id", "org/ab", "--data", str(folder), "--dry-run", "--allow-partial") == 1
    out = capsys.readouterr().out
    assert "problem: the card's YAML is out of date with the data files" in out
    assert "problem: the card's count/source tables are out of date" in out
    write_jsonl(folder / "data" / "homophone" / "test.jsonl", [row | {"D": "甲"}])  # a row that breaks the schema
    assert run_hub("--repo-id", "org/ab", "--data", str(folder), "--dry-run", "--allow-partial") == 1
    assert "test.jsonl, row 1, field 'D': duplicate option: same text as option A" in capsys.readouterr().out


def test_dry_run_reports_a_broken_card(tmp_path, capsys):
    folder = make_dataset(tmp_path, tasks=("radical",))
    text = (folder / "README.md").read_text(encoding="utf-8").replace("path: data/radical/dev.jsonl", "path: data/radical/valid.jsonl")
    (folder / "README.md").write_text(text, encoding="utf-8")
    assert run_hub("--repo-id", "org/ab", "--data", str(folder), "--dry-run", "--allow-partial") == 1
    assert "problem: config radical: data file data/radical/valid.jsonl does not exist" in capsys.readouterr().out


def test_bad_repo_id(capsys):
    assert run_hub("--repo-id", "no-namespace", "--dry-run") == 2
    assert "error: 'no-namespace' is not a Hub repository id of the form ORG/NAME" in capsys.readouterr().out


class FakeApi:
    calls: list = []

    def __init__(self, token=None):
        self.token = token

    def create_repo(self, repo_id, **kw):
        self.calls.append(("create_repo", repo_id, kw))

    def upload_folder(self, **kw):
        self.calls.append(("upload_folder", kw))
        return "commit-1"

    def create_commit(self, repo_id, operations, **kw):
        self.calls.append(("create_commit", repo_id, list(operations), kw))
        return "commit-2"


def test_upload_calls(tmp_path, monkeypatch, capsys):
    import huggingface_hub

    folder = make_dataset(tmp_path)
    FakeApi.calls = []
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    assert run_hub("--repo-id", "org/ancientbench", "--data", str(folder), "--metric", "--metric-repo-id", "org/ab_metric", "--private") == 0
    (c1, repo, kw1), (c2, up), (c3, space, kw3), (c4, space2, ops, kw4) = FakeApi.calls
    assert (c1, repo, kw1) == ("create_repo", "org/ancientbench", {"repo_type": "dataset", "private": True, "exist_ok": True})
    assert c2 == "upload_folder" and up["repo_type"] == "dataset" and Path(up["folder_path"]) == folder
    assert up["allow_patterns"] == ["README.md", *[f"data/{t}/{s}.jsonl" for t in TASK_NAMES for s in SPLITS]]
    assert (c3, space, kw3["repo_type"], kw3["space_sdk"]) == ("create_repo", "org/ab_metric", "space", "gradio")
    assert (c4, space2, kw4["repo_type"]) == ("create_commit", "org/ab_metric", "space")
    files = {op.path_in_repo: op.path_or_fileobj for op in ops}
    assert sorted(files) == ["README.md", "ab_metric.py", "app.py", "requirements.txt"]  # script named after the Space
    assert files["ab_metric.py"] == (Path(ancientbench.METRIC_PATH) / "ancientbench_metric.py").read_bytes()
    assert b'evaluate.load("org/ab_metric")' in files["app.py"]
    assert "uploaded metric: commit-2" in capsys.readouterr().out


def _subprocess_push(tmp_path, **env_overrides):
    folder = make_dataset(tmp_path)
    code = (
        "import argparse, sys; from ancientbench.publish import hub; p = argparse.ArgumentParser(); hub.add_arguments(p); "
        "sys.exit(hub.run(p.parse_args(sys.argv[1:])))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")}
    env.update(HF_HOME=str(tmp_path / "hf"), **env_overrides)
    return subprocess.run(
        [sys.executable, "-c", code, "--repo-id", "org/ancientbench", "--data", str(folder), "--metric"],
        env=env, capture_output=True, text=True, timeout=120,
    )


def test_offline_mode_gives_one_clear_line(tmp_path):
    proc = _subprocess_push(tmp_path, HF_HUB_OFFLINE="1")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "error: Hugging Face offline mode is on (HF_HUB_OFFLINE=1): unset it to upload, or use --dry-run"


def test_unreachable_hub_gives_one_clear_line(tmp_path):
    # offline mode off, but the endpoint is a closed local port: the same as having no network
    proc = _subprocess_push(tmp_path, HF_HUB_OFFLINE="0", HF_ENDPOINT="http://127.0.0.1:9")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("error: cannot reach the Hugging Face Hub (") and last.endswith("check the network, or use --dry-run")


def test_explain_network_errors_from_any_http_library():
    assert hub.explain(ConnectionError("boom")).startswith("error: cannot reach the Hugging Face Hub (ConnectionError: boom)")
    assert hub.explain(ValueError("odd\nsecond line")) == "error: upload failed: ValueError: odd"


def test_metric_space_would_install(tmp_path):
    import shutil

    import ancientbench
    from ancientbench.publish import hub

    folder = Path(ancientbench.METRIC_PATH)
    assert hub.space_install_problems(folder) == []
    assert hub.metric_requirements(folder) == ["evaluate", "datasets", "numpy"]
    bad = tmp_path / "ancientbench_metric"
    shutil.copytree(folder, bad)
    (bad / "ancientbench_metric.py").write_text("import scipy\nfrom ancientbench.aggregate import aggregate\n", encoding="utf-8")
    (bad / "requirements.txt").write_text("ancientbench\nevaluate\n", encoding="utf-8")
    problems = hub.space_install_problems(bad)
    assert any("'ancientbench', which is not on PyPI" in p for p in problems)
    assert any("imports 'scipy'" in p for p in problems)
