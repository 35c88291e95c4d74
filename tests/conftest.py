"""Shared test fixtures: offline mode, tiny Llama/Qwen2 models with tokenizers trained here, a fixture dataset.

The offline variables are set before anything imports a Hugging Face library, so no test can reach the Hub.
"""

import os

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"
# A fresh Hugging Face cache per test session: results never come from (or leak into) the user's cache.
# The session that made it removes it at the end (pytest_unconfigure); worker processes inherit it.
_CREATED_HF_HOME = None
if "ANCIENTBENCH_TEST_HF_HOME" not in os.environ:
    import tempfile

    _CREATED_HF_HOME = os.environ["ANCIENTBENCH_TEST_HF_HOME"] = tempfile.mkdtemp(prefix="ancientbench-hf-")
os.environ["HF_HOME"] = os.environ["ANCIENTBENCH_TEST_HF_HOME"]
os.environ.pop("HF_DATASETS_CACHE", None)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Tiny models gain nothing from intra-op threads, and spinning OpenMP threads slow them down badly on a
# loaded 2-core machine; a test that needs threads can still set them explicitly.
os.environ.setdefault("OMP_NUM_THREADS", "1")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from support import (  # noqa: E402,F401  (re-exported for fixtures below)
    FIXTURE_CHARS,
    FIXTURE_TASKS,
    N_DEV,
    N_TEST,
    REPO_ROOT,
    make_item,
    read_jsonl,
    write_fixture_dataset,
)


@pytest.fixture(scope="session")
def unihan_db():
    """The Unihan database (Debian unicode-data), or a skip naming what is missing."""
    from ancientbench.sources import SourceMissing, unihan

    try:
        return unihan.load()
    except SourceMissing as e:
        pytest.skip(f"unicode-data not installed: {e}")


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


def pytest_runtest_setup(item):
    """A test marked ``harness(NAME)`` runs the harness from ``.harnesses/NAME``: missing, it fails (never a silent
    skip; the default command deselects these tests, `.ci/run` makes the environments and runs them)."""
    for mark in item.iter_markers("harness"):
        env = REPO_ROOT / ".harnesses" / mark.args[0]
        if not (env / ".installed-requirements").is_file():  # written by harness_env.sh after a complete install
            pytest.fail(f"no {env}: run `bash scripts/harness_env.sh {mark.args[0]}` first", pytrace=False)


def pytest_unconfigure(config):
    """Remove the session's Hugging Face cache (about 20 MB of converted datasets per run otherwise left in /tmp)."""
    if _CREATED_HF_HOME:
        import shutil

        shutil.rmtree(_CREATED_HF_HOME, ignore_errors=True)
        os.environ.pop("ANCIENTBENCH_TEST_HF_HOME", None)


# The files that take minutes (the glyph rebuilds, the oracle's fine-tuning, the interrupted serving run) start
# first: `--dist loadfile --no-loadscope-reorder` hands files to the workers in this order, so neither worker
# is left running one of them alone at the end.
LONGEST_FIRST = ("test_phonetic_radical.py", "test_build_guangyun_tasks.py", "test_oracle.py", "test_serving.py")


def pytest_collection_modifyitems(config, items):
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
