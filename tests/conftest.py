"""Shared test fixtures: offline mode, tiny Llama/Qwen2 models with tokenizers trained here, a fixture dataset.

The offline variables are set before anything imports a Hugging Face library, so no test can reach the Hub.
"""

import os

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Tiny models gain nothing from intra-op threads, and spinning OpenMP threads slow them down badly on a
# loaded 2-core machine; a test that needs threads can still set them explicitly.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import json  # noqa: E402
import random  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

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


@pytest.fixture(scope="session")
def fixture_data(tmp_path_factory) -> Path:
    """A dataset folder in the shared schema: five tasks over all four competencies, 7 test + 5 dev items each."""
    return write_fixture_dataset(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="session")
def fixture_items(fixture_data):
    from ancientbench.schema import load_split

    return {t: (load_split(fixture_data, t, "test"), load_split(fixture_data, t, "dev")) for t in FIXTURE_TASKS}


def _build(tmp_path_factory, style: str):
    from ancientbench.models import load_model
    from ancientbench.tiny import build_tiny

    folder = build_tiny(tmp_path_factory.mktemp(f"tiny-{style}"), style, corpus=FIXTURE_CHARS, vocab_size=1200, seed=0)
    return load_model(folder, device="cpu", dtype="float32")


@pytest.fixture(scope="session")
def tiny_qwen2(tmp_path_factory):
    """LoadedModel: a ~0.1M-parameter random Qwen2 with a ByteLevel BPE tokenizer (ChatML template), fp32 on CPU."""
    return _build(tmp_path_factory, "qwen2")


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory):
    """LoadedModel: a random Llama with a Metaspace (``▁``) BPE tokenizer that adds ``<s>``, fp32 on CPU."""
    return _build(tmp_path_factory, "llama")


@pytest.fixture(params=["qwen2", "llama"])
def tiny_model(request):
    """Each tiny model in turn."""
    return request.getfixturevalue(f"tiny_{request.param}")


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
