"""A new task is one row in ``tasks.py`` and one builder module, nothing else.

A copy of the package gets a toy eleventh task exactly so (a row appended to ``TASKS``, a module
``builders/toy_pairs.py``); in that copy, run as a user would, the task goes through build -> copies of the
registry (metric, loading script) -> audit -> eval -> metric -> card, and the ten real tasks are untouched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import REPO_ROOT

from ancientbench.paths import DEFAULT_SOURCES_DIR

ROW = ('    Task("toy_pairs", "對偶", "Toy Pairs", "context", "generated", min_test=300,\n'
       '         option_note="four candidate characters to follow a hidden one"),\n')
BUILDER = textwrap.dedent('''
    """Builder of the toy ``toy_pairs`` config: a character paired with another by a seeded draw (plumbing, not
    knowledge: each drawn four characters make four items, each of them the key once, so a rule that reads the
    options alone is at 25% exactly and one that reads the question too stays near chance)."""

    from __future__ import annotations

    from .common import BuildResult, Candidate, split_dev_test, task_rng

    TASK = "toy_pairs"
    TEXT = ("天地玄黃宇宙洪荒日月盈昃辰宿列張寒來暑往秋收冬藏閏餘成歲律呂調陽雲騰致雨露結為霜金生麗水玉出崑岡劍號巨闕"
            "珠稱夜光果珍李柰菜重芥薑海鹹河淡鱗潛羽翔龍師火帝鳥官人皇始制文字乃服衣裳推位讓國有虞陶唐弔民伐罪周發殷湯")


    def build(ctx) -> BuildResult:
        rng = task_rng(TASK, ctx.seed)
        chars = sorted(set(TEXT))
        cands = []
        for q in range(100):
            heads = [TEXT[(4 * q + j) % len(TEXT)] for j in range(4)]
            four = rng.sample([c for c in chars if c not in heads], 4)
            for j, head in enumerate(heads):
                k = 4 * q + j
                cands.append(Candidate(key=f"{k:03d}", question=f"下列哪個字與「{head}」配對（第{k}題）？",
                                       answer=four[j], distractors=tuple(c for c in four if c != four[j]),
                                       source="team-written (test)", citation=f"toy {k}"))
        dev, test = split_dev_test(TASK, cands, tuple(f"{k:03d}" for k in range(5)), ctx.seed)
        return BuildResult(TASK, test, dev, candidates=len(cands))
''').lstrip()


# Every step in one fresh interpreter (the copy must be the package it imports), as a user would call them.
DRIVER = textwrap.dedent("""
    import contextlib, json, sys
    from pathlib import Path
    import evaluate
    from ancientbench.cli import main
    from ancientbench.publish import card, copies

    root, out = Path(sys.argv[1]), Path(sys.argv[2])
    package = root / "ancientbench"
    codes = {"build": main(["build", "toy_pairs", "--out", str(package)]),
             "copies": copies.main([]), "copies_check": copies.main(["--check"])}
    with (out / "audit.json").open("w") as fh, contextlib.redirect_stdout(fh):
        codes["audit"] = main(["audit", "toy_pairs", "--json", "--strict"])
    codes["eval"] = main(["eval", "--model", "tiny-random", "--tasks", "toy_pairs", "cloze", "--limit", "8",
                          "--output", str(out / "results"), "--no-progress"])
    metric = evaluate.load(str(root / "metrics" / "ancientbench_metric"))
    scored = metric.compute(predictions=["A", "B", "C"], references=["A", "B", "D"],
                            tasks=["toy_pairs", "toy_pairs", "radical"], n_resamples=0)
    codes["card"] = card.main([])
    codes["card_check"] = card.main(["--check"])
    print(json.dumps({"codes": codes, "scored": scored}))
""")


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = tmp_path_factory.mktemp("toy-repo")
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for part in ("ancientbench", "metrics", "dataset_script"):
        shutil.copytree(REPO_ROOT / part, root / part, ignore=ignore)
    tasks = root / "ancientbench" / "tasks.py"
    text = tasks.read_text(encoding="utf-8")
    end = text.index("\n)\n", text.index("TASKS: tuple[Task, ...] = (")) + 1  # the closing line of TASKS
    tasks.write_text(text[:end] + ROW + text[end:], encoding="utf-8")  # the row
    (root / "ancientbench" / "builders" / "toy_pairs.py").write_text(BUILDER, encoding="utf-8")  # the module
    env = {**os.environ, "PYTHONPATH": str(root), "ANCIENTBENCH_SOURCES": str(DEFAULT_SOURCES_DIR),
           "HF_HOME": str(tmp_path_factory.mktemp("toy-hf")), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    before = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    return root, env, before


def test_a_toy_eleventh_task_needs_one_row_and_one_module(toy, tmp_path):
    root, env, before = toy
    package = root / "ancientbench"
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(root), str(tmp_path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    done = json.loads(proc.stdout.strip().splitlines()[-1])
    # build, the registry's copies, audit (within every bound), eval, card: each exit 0
    assert done["codes"] == dict.fromkeys(("build", "copies", "copies_check", "audit", "eval", "card", "card_check"), 0)
    assert (package / "data" / "toy_pairs" / "test.jsonl").is_file() and (package / "data" / "toy_pairs" / "dev.jsonl").is_file()
    report = json.loads((tmp_path / "audit.json").read_text(encoding="utf-8"))
    assert report["configs"]["toy_pairs"]["counts"]["test"] == 395
    # eval with the smoke model, 0- and 5-shot, beside a real task
    results = json.loads(next((tmp_path / "results").rglob("results_5shot.json")).read_text(encoding="utf-8"))
    assert set(results["tasks"]) == {"toy_pairs", "cloze"} and results["tasks"]["toy_pairs"]["competency"] == "context"
    # the self-contained metric (regenerated copy) scores it
    scored = done["scored"]
    assert scored["tasks"]["toy_pairs"]["accuracy"] == 1.0 and scored["competencies"]["context"] == 1.0
    # the card: the new config in its YAML and counts (and up to date, above)
    card = (package / "README.md").read_text(encoding="utf-8")
    assert "config_name: toy_pairs" in card and "`toy_pairs`" in card
    # nothing else was edited: besides the row and the module, only generated files changed
    after = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    changed = {p for p in after if before.get(p) != after[p]}
    generated = {Path("ancientbench/README.md"), Path("metrics/ancientbench_metric/ancientbench_metric.py"),
                 Path("dataset_script/ancientbench.py"), Path("ancientbench/data/toy_pairs/test.jsonl"),
                 Path("ancientbench/data/toy_pairs/dev.jsonl"), Path("ancientbench/build_report.json")}
    assert changed <= generated, sorted(map(str, changed - generated))
    for real in ("radical", "cloze", "translation"):
        assert before[Path(f"ancientbench/data/{real}/test.jsonl")] == after[Path(f"ancientbench/data/{real}/test.jsonl")]
