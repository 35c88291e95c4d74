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
