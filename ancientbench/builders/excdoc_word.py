"""Builder of the ``excdoc_word`` config: items of ``curated/excdoc_word.jsonl`` plus options drawn from the
team-written field glossary ``curated/excdoc_glossary.jsonl``.

An item names an excavated document (Qin and Han administrative and legal slips — 睡虎地, 里耶, 嶽麓, 張家山,
居延/懸泉 — Chu manuscripts, 馬王堆), a short context, the asked word and the glossary entry (``gloss``) that
gives its meaning there. Each glossary entry is one term with a short modern-Chinese definition, its field
(ranks of the 二十等爵, convict statuses, punishments, offices, documents, …) and an optional ``group`` of
near-synonyms. The three distractors are definitions of *other* terms of the same field — never the term
itself, never an entry of its group, never another sense of the same word — chosen deterministically from
the siblings nearest in length (seeded by the item key), so that every option is a true meaning of some term
of the field and only knowing which term is asked answers the item (the glossary and the draw:
:mod:`.excdoc_glossary`). Design: docs/excdoc_word.md.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..schema import DataError
from ..sources.classics import fold
from .curated import Format, build_entries
from .excdoc_glossary import TASK, question, resolve


def _check(obj: dict, file, line: int) -> None:
    if obj["word"] not in obj["context"]:
        raise DataError(file, line, "word", f"the word {obj['word']!r} does not occur in the context")


# an entry names a glossary entry; answer, distractors and rationale are filled from the glossary on load (resolve)
FORMAT = Format(
    keys=("key", "document", "citation", "context", "word", "gloss", "author", "reviewer", "blind_answer"),
    resolve=resolve,
    check=_check,
    identity=lambda data: (data["word"], data["context"], data["answer"]),
)

# Five dev exemplars (few-shot), by key; never also in test.
DEV_KEYS: tuple[str, ...] = (
    "c2-fzs-yuanshu",  # 爰書, 睡虎地《封診式》
    "c2-enl-qishi",  # 棄市, 張家山《二年律令》
    "c2-liye-ganyanzhi",  # 敢言之, 里耶秦簡
    "c2-jy-suizhang",  # 燧長, 居延漢簡
    "c2-mw-ye",  # 冶, 馬王堆《五十二病方》
)


def build(ctx):
    return build_entries(TASK, ctx, question, DEV_KEYS)


# ---- quotations checked against a text edition (睡虎地) ----------------------------------------------

SHUIHUDI = "睡虎地秦簡"
SAMPLE_SHUIHUDI = Path("classical-modern-sample") / "双语数据" / "睡虎地秦墓竹简"
_CITED = re.compile(r"《([^》·]+)(?:·([^》]+))?》")


def _fold(text: str) -> str:
    """Comparison key: editorial readings in （…） and marks 〈〉 dropped, OpenCC t2s, letters and digits only."""
    text = re.sub(r"（[^）]{1,4}）", "", text)
    return "".join(ch for ch in fold(text) if ch.isalnum())


def _section_key(name: str) -> str:
    key = _fold(name)
    return key[:-1] if key.endswith("律") and len(key) > 1 else key


def _anchors(context: str, word: str) -> list[str]:
    """The word with one neighbouring context character on either side (folded); the word if it is the context."""
    ctx, w = _fold(context), _fold(word)
    if ctx == w:
        return [w]
    out = []
    i = ctx.find(w)
    while i >= 0:
        if i > 0:
            out.append(ctx[i - 1:i + len(w)])
        if i + len(w) < len(ctx):
            out.append(ctx[i:i + len(w) + 1])
        i = ctx.find(w, i + 1)
    return out


def load_shuihudi_sample(sources_dir: str | Path) -> dict[tuple[str, str], str]:
    """(document, section) -> folded 古文 text of the shared 睡虎地 sample (section "" for the other documents)."""
    root = Path(sources_dir) / SAMPLE_SHUIHUDI
    if not root.is_dir():
        raise FileNotFoundError(root)
    texts: dict[tuple[str, str], str] = {}
    for f in sorted(root.glob("*/*/bitext.txt")):
        group, section = f.parent.parent.name, f.parent.name
        lines = [ln[3:] for ln in f.read_text(encoding="utf-8").splitlines() if ln.startswith("古文：")]
        key = (_fold("秦律十八種"), _section_key(section)) if _fold(group) == _fold("秦律十八種") else (_fold(section), "")
        texts[key] = texts.get(key, "") + "".join(_fold(ln) for ln in lines)
    return texts


def quotation_check(entries, sources_dir: str | Path) -> dict:
    """Which 睡虎地 contexts the shared sample covers, and whether each covered one is in it verbatim (folded).

    An item is *covered* when its citation names a document (for 秦律十八種: a section) the sample holds and
    that document's sample text has the asked word with a neighbouring character of the context (the word alone
    when it is the whole context), i.e. the sample has the passage; a covered item *matches* when its whole
    context is in the sample text.
    """
    texts = load_shuihudi_sample(sources_dir)
    out: dict = {"shuihudi": 0, "covered": [], "matched": [], "mismatched": [], "not_covered": []}
    for e in entries:
        if SHUIHUDI not in e["citation"]:
            continue
        out["shuihudi"] += 1
        m = _CITED.search(e["citation"])
        doc, section = (_fold(m.group(1)), m.group(2) or "") if m else ("", "")
        key = (doc, _section_key(section)) if doc == _fold("秦律十八種") else (doc, "")
        text = texts.get(key, "")
        if not text or not any(a in text for a in _anchors(e["context"], e["word"])):
            out["not_covered"].append(e.key)
            continue
        out["covered"].append(e.key)
        (out["matched"] if _fold(e["context"]) in text else out["mismatched"]).append(e.key)
    return out
