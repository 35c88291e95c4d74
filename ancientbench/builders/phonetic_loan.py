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
DEV_KEYS: tuple[str, ...] = (
    "lunyu-xueer-yue",  # 說 for 悅, 論語·學而 (transmitted)
    "mengzi-gzs-shen",  # 信 for 伸, 孟子·告子上 (transmitted)
    "gd-lza-19-you",  # 又 for 有, 郭店《老子》甲 (excavated)
    "mwd-lzj-01-wei",  # 胃 for 謂, 馬王堆《老子》甲本 (excavated)
    "shd-fzs-zhi",  # 智 for 知, 睡虎地《封診式》 (excavated)
)


def document_of(citation: str) -> str:
    """The document part of an excavated citation: '郭店楚簡《老子》甲，簡1（今本第19章）' -> '郭店楚簡《老子》甲'."""
    for sep in ("，", "（", " "):
        citation = citation.split(sep)[0]
    return citation


def question(entry) -> str:
    ctx, loan = entry["context"], entry["loan"]
    # Excavated contexts are transcribed in traditional script (无, 亓 … are the manuscripts' own graphs);
    # transmitted contexts keep the script of their corpus book.
    excavated = entry["kind"] == "excavated"
    script = "traditional" if excavated else item_script(ctx)
    head = document_of(entry["citation"]) if excavated else ""
    return head + "「" + ctx + "」" + in_script("中的「", script) + loan + in_script("」通哪個字？", script)


def build(ctx):
    return build_entries(TASK, ctx, question, DEV_KEYS, subset=lambda e: e["kind"])


# ---- phonology check: a loan pair may not contradict the phonology data ------------------------------

# 發音部位 groups for "close initials": 牙 and 喉 alternate freely in loans, so they form one group.
_PLACE = {"脣": "脣", "舌": "舌", "齒": "齒", "牙": "牙喉", "喉": "牙喉"}


def _forms(ch: str, u) -> list[str]:
    """The graph itself, its traditional form(s) and its Unihan variants (for 廣韻 look-ups, e.g. 茲/兹)."""
    from .classics import to_traditional

    out = [ch]
    for c in (to_traditional(ch), *sorted(u.variants(ch))):
        if len(c) == 1 and c not in out:
            out.append(c)
    return out


def phonology_support(loan: str, intended: str, g=None, u=None) -> str | None:
    """Why the registry phonology data supports reading ``loan`` as ``intended``, or None.

    Support is (a) the same phonetic series: Karlgren GSR (Unihan ``kGSR``) or Casey's phonetic group
    (``kPhonetic``); or (b) close 廣韻 readings (tshet-uinh): some reading of each in the same rhyme (韻,
    any tone) with the same initial or an initial of the same place of articulation, or in the same
    rhyme group (攝) with the same initial or one of the same place. Pairs without support need a rationale that argues from Old Chinese.
    """
    from tshet_uinh import 音韻地位

    from . import guangyun, unihan

    g = g or guangyun.load()
    u = u or unihan.load()
    lf, itf = _forms(loan, u), _forms(intended, u)
    for a in lf:
        for b in itf:
            gsr = u.gsr_series(a) & u.gsr_series(b)
            if gsr:
                return f"same phonetic series (GSR {min(gsr)})"
            ph = u.phonetic_groups(a) & u.phonetic_groups(b)
            if ph:
                return f"same phonetic group (kPhonetic {min(ph)})"
    best = None
    for a in lf:
        for b in itf:
            for sa in sorted(g.statuses_of(a)):
                for sb in sorted(g.statuses_of(b)):
                    x, y = 音韻地位.from描述(sa), 音韻地位.from描述(sb)
                    if x.韻 == y.韻 and x.母 == y.母:
                        return f"廣韻 same initial and rhyme ({a} {sa} / {b} {sb})"
                    if x.韻 == y.韻 and _PLACE.get(x.音) == _PLACE.get(y.音):
                        best = best or f"廣韻 same rhyme, initials of one place ({a} {sa} / {b} {sb})"
                    elif x.母 == y.母 and x.攝 == y.攝:
                        best = best or f"廣韻 same initial, same rhyme group ({a} {sa} / {b} {sb})"
                    elif x.攝 == y.攝 and _PLACE.get(x.音) == _PLACE.get(y.音):
                        best = best or f"廣韻 same rhyme group, initials of one place ({a} {sa} / {b} {sb})"
    return best
