"""Constants and helpers the tests share (fixture characters, fixture items and datasets, JSONL reading).

Kept out of conftest.py so test modules can import them by a unique name: ``tests/`` and ``notebooks/``
both have a conftest.py, and ``from conftest import …`` would pick whichever pytest loaded first.
"""

import json
import logging
import random
import re
from contextlib import contextmanager
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

# Characters the fixture items are written in; the fixture tokenizers are trained on them.
FIXTURE_CHARS = [chr(cp) for cp in range(0x4E00, 0x4E00 + 400)]
FIXTURE_TASKS = ("radical", "radical_meaning", "homophone", "excdoc_word", "cloze")
N_TEST, N_DEV = 7, 5


def make_item(task: str, key: str, rng: random.Random) -> dict:
    """One schema row of random fixture text (four distinct options, a balanced-ish answer)."""

    def text(n):
        return "".join(rng.choice(FIXTURE_CHARS) for _ in range(n))

    options = []
    while len(options) < 4:
        o = text(rng.randint(1, 6))
        if o not in options:
            options.append(o)
    return {
        "id": f"{task}-{key}",
        "task": task,
        "question": text(rng.randint(4, 40)),
        "A": options[0],
        "B": options[1],
        "C": options[2],
        "D": options[3],
        "answer": rng.choice("ABCD"),
        "subset": "",
        "source": "test fixture",
        "citation": f"fixture:{key}",
        "explanation": "",
    }


def write_fixture_dataset(folder: Path, tasks=FIXTURE_TASKS, n_test=N_TEST, n_dev=N_DEV, seed=0) -> Path:
    from ancientbench.schema import write_jsonl

    rng = random.Random(seed)
    for task in tasks:
        write_jsonl(folder / "data" / task / "test.jsonl", [make_item(task, f"t{i}", rng) for i in range(n_test)])
        write_jsonl(folder / "data" / task / "dev.jsonl", [make_item(task, f"d{i}", rng) for i in range(n_dev)])
    return folder


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


@contextmanager
def logged_warning(caplog, pattern: str):
    """Like ``pytest.warns(match=pattern)`` for a notice the library logs (``logging``) instead of warning."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ancientbench"):
        yield
    messages = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any(re.search(pattern, m) for m in messages), f"no warning matching {pattern!r} in {messages}"


def shipped_subset(folder: Path, tasks, n_items: int) -> Path:
    """The shipped data of ``tasks`` as a dataset folder: test cut to its first ``n_items`` rows (bytes kept), dev whole."""
    import shutil

    from ancientbench.paths import DATASET_PATH
    from ancientbench.schema import split_file

    for task in tasks:
        (folder / "data" / task).mkdir(parents=True)
        test = split_file(DATASET_PATH, task, "test").read_text(encoding="utf-8").splitlines(keepends=True)
        split_file(folder, task, "test").write_text("".join(test[:n_items]), encoding="utf-8")
        shutil.copyfile(split_file(DATASET_PATH, task, "dev"), split_file(folder, task, "dev"))
    return folder


def export_moved(export, data: Path, first: Path, out: Path) -> Path:
    """``export(first, data=data)``, then the folder moved to ``out``: an exported module must find its data beside itself."""
    import shutil

    export(first, data=data)
    shutil.move(str(first), str(out))
    return out


def assert_self_contained(source: str, exported: Path, *absent: str) -> None:
    """An exported harness module names none of ``absent`` (the source folders) nor /tmp, imports nothing of ours,
    and has no undefined or unused name (pyflakes rules, as ruff checks our own code)."""
    import re
    import subprocess
    import sys

    assert not any(a in source for a in absent) and "/tmp" not in source
    assert not re.search(r"^\s*(import|from) (ancientbench\b(?!_)|\.)", source, re.M)  # no import of ours
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select", "F", str(exported)],
                          capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout


def check_export_command(module, tmp_path: Path, data: Path, capsys, *expected: str):
    """An export command's run on ``data`` (into ``tmp_path/x``) exits 0 and prints each of ``expected``; on a folder
    without data it is one ``error:`` line and exit 2. Returns the command's parser."""
    import argparse

    p = argparse.ArgumentParser()
    module.add_arguments(p)
    assert module.run(p.parse_args([str(tmp_path / "x"), "--data", str(data)])) == 0
    out = capsys.readouterr().out
    assert all(e in out for e in expected), out
    assert module.run(p.parse_args([str(tmp_path / "y"), "--data", str(tmp_path / "empty")])) == 2
    assert capsys.readouterr().err.startswith("error: no task has both test and dev files")
    return p
