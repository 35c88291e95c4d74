"""Builder of the ``phonetic_loan`` (通假字) config from the team-curated ``curated/phonetic_loan.jsonl``.

Each entry is one loan usage in context: the written graph (``loan``), the intended graph (``answer``,
本字) and three distractors that look or sound alike in modern Mandarin but are not meant there. ``kind``
(the ``subset`` column) says whether the usage is from an excavated manuscript (short context as cited in
the scholarship, document and slip/column citation) or from a transmitted classic (context verbatim from
npm ``chinese-poetry``, in its script). Questions follow the convention of the ``智(知)`` notation:
「學而時習之，不亦說乎」中的「說」通哪個字？
"""

from __future__ import annotations

from .curated import build_entries, in_script, item_script

TASK = "phonetic_loan"
# Five dev exemplars (few-shot), by key; never also in test.
DEV_KEYS: tuple[str, ...] = ()


def document_of(citation: str) -> str:
    """The document part of an excavated citation: '郭店楚簡《老子》甲，簡1（今本第19章）' -> '郭店楚簡《老子》甲'."""
    for sep in ("，", "（", " "):
        citation = citation.split(sep)[0]
    return citation


def question(entry) -> str:
    ctx, loan = entry["context"], entry["loan"]
    script = item_script(ctx)
    head = document_of(entry["citation"]) if entry["kind"] == "excavated" else ""
    return head + "「" + ctx + "」" + in_script("中的「", script) + loan + in_script("」通哪個字？", script)


def build(ctx):
    return build_entries(TASK, ctx, question, DEV_KEYS, subset=lambda e: e["kind"])
