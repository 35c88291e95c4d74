"""Builder of the ``translation`` config from the team-curated ``curated/translation.jsonl``.

Each entry is a sentence from the public-domain classics (verbatim from npm ``chinese-poetry`` as corrected by
``ancientbench/sources/classics_corrections.tsv``, in that corpus's script) with a modern Chinese translation and
three distractors. Every distractor is a fluent
modern sentence that mistranslates what a careless reader of the *classical* text gets wrong (虛詞, 古今異義,
通假, 詞類活用, who acts on whom, passives, 於 comparisons, negation scope …); ``errors`` names its misreadings.
Items are traditional throughout: entries quoting a simplified book are converted at build time
(:func:`to_one_script`, every converter choice reviewed). This module also owns the rule that says which items
come from the most anthologised passages (:func:`anthologised`; ``python -m ancientbench.builders.translation``
prints the share and the error-type counts). Design notes: ``docs/translation.md``. A user's own parallel
corpus becomes a separate config (:mod:`ancientbench.builders.parallel_corpus`).
"""

from __future__ import annotations

import sys
from collections import Counter

from ..han import han_only
from ..paths import DEFAULT_SOURCES_DIR
from ..schema import DataError
from ..sources.classics import BOOK_BY_KEY, fold, load_corpus
from .common import as_excerpt
from .curated import Format, build_entries, item_script, load_entries, one_script

TASK = "translation"
ERROR_TYPES: tuple[str, ...] = ("word-sense", "agent-patient", "negation", "number", "tense-aspect", "other")
# what a careless reader of the classical text gets wrong (docs/translation.md defines each)
TRANSLATION_ERROR_TYPES: tuple[str, ...] = (
    *ERROR_TYPES, "modern-sense", "function-word", "loan-graph", "word-class", "passive", "comparison",
    "pronoun", "suo", "mood",
)


def _check(obj: dict, file, line: int) -> None:
    """One label per distractor: the misreading(s) of the classical text it carries, joined with "+"."""
    for e in obj["errors"]:
        bad = [part for part in e.split("+") if part not in TRANSLATION_ERROR_TYPES]
        if bad:
            raise DataError(file, line, "errors", f"bad error label {bad[0]!r} in {e!r}; allowed (joined with '+'): "
                            f"{', '.join(TRANSLATION_ERROR_TYPES)}")


# the file's keys in order (agreed with its writers first; the other curated tasks follow it)
FORMAT = Format(
    keys=("key", "book", "citation", "context", "answer", "distractors", "errors", "rationale", "author", "reviewer",
          "blind_answer"),
    check=_check,
)
# Five dev exemplars (few-shot), by key; never also in test.
DEV_KEYS: tuple[str, ...] = (
    "lunyu-xueer-001",
    "lunyu-xueer-005",
    "daxue-daxue-029",
    "mengzi-lianghuiwangshang-001",
    "mengzi-lianghuiwangshang-004",
)

# ---- which items come from the most anthologised passages (docs/translation.md states the rule) --------
# 古文觀止 pieces of the school canon (the prose every Chinese secondary-school reader meets), as titled in the
# package; an item from any of them counts as anthologised. Its other ~170 pieces are an anthology's, not the canon.
CANON_PROSE: frozenset[str] = frozenset({
    "鄭伯克段于鄢", "曹劌論戰", "宮之奇諫假道", "子魚論戰", "介之推不言祿", "燭之武退秦師", "蹇叔哭師", "召公諫厲王止謗",
    "鄒忌諷齊王納諫", "觸龍說趙太后", "唐雎不辱使命", "諫逐客書", "馮諼客孟嘗君", "過秦論", "前出師表", "後出師表",
    "報任安書", "屈原列傳", "卜居", "陳情表", "蘭亭集序", "歸去來兮辭", "桃花源記", "五柳先生傳", "諫太宗十思疏",
    "滕王閣序", "陋室銘", "阿房宮賦", "雜說·龍說", "雜說·馬說", "師說", "進學解", "祭十二郎文", "捕蛇者說",
    "種樹郭橐駝傳", "岳陽樓記", "小石城山記", "鈷鉧潭西小丘記", "春夜宴桃李園序", "醉翁亭記", "秋聲賦",
    "五代史伶官傳序", "前赤壁賦", "後赤壁賦", "六國論", "石鐘山記", "遊褒禪山記", "黃州快哉亭記", "五人墓碑記",
    "賣柑者言", "留侯論",
})
# 詩經 and 楚辭 pieces of the school canon (matched against the chapter label's last part).
CANON_POEMS: frozenset[str] = frozenset({
    "關雎", "蒹葭", "氓", "采薇", "靜女", "碩鼠", "伐檀", "無衣", "桃夭", "子衿", "木瓜", "黍離", "七月",
    "君子于役", "鹿鳴", "離騷", "國殤", "湘夫人", "湘君", "山鬼", "涉江", "哀郢", "漁父", "橘頌", "卜居",
})
# Markers of whole passages of 論語/孟子/大學/中庸 taught in schools; an item whose passage contains one counts.
CANON_PASSAGE_MARKERS: tuple[str, ...] = (
    "寡人之於國也", "齊桓、晉文之事", "天時不如地利", "魚，我所欲也", "舜發於畎畝之中", "富貴不能淫",
    "莊暴見孟子", "揠苗", "人皆有不忍人之心", "大學之道", "天命之謂性", "子路、曾皙、冉有、公西華侍坐",
    "季氏將伐顓臾", "學而時習之", "吾十有五而志于學", "生，亦我所欲也", "民為貴", "得道者多助",
)
# Proverbial lines (an item containing one counts wherever its passage is).
FAMOUS_LINES: tuple[str, ...] = (
    "溫故而知新", "學而不思則罔", "朝聞道", "見賢思齊", "三人行", "己所不欲", "知之為知之", "歲寒",
    "逝者如斯", "吾日三省吾身", "朽木不可雕", "不恥下問", "巧言令色", "以五十步笑百步", "緣木求鱼",
    "緣木求魚", "老吾老", "始作俑者", "五十步", "出爾反爾", "自反而縮", "浩然之氣", "助苗長", "盡信書",
    "君子坦蕩蕩", "欲速則不達", "仁者愛人", "當仁不讓", "道不同", "有教無類", "名不正", "工欲善其事",
    "小不忍則亂大謀", "性相近", "人無遠慮", "過而不改", "君子和而不同", "言必信", "士不可以不弘毅",
)
NON_ANTHOLOGISED_MIN_SHARE = 0.5


def anthologised(entry, corpus) -> str | None:
    """Why an entry counts as from a most-anthologised passage (a short reason), or None."""
    book, ctx = entry["book"], entry["context"]
    matches = [m for m in corpus.contains(ctx) if corpus_book_title(m.book) == book] or corpus.contains(ctx)
    if not matches:
        return None
    m = matches[0]
    if book == "古文觀止":
        title = m.chapter.split("·", 1)[-1]
        return f"school-canon piece ({title})" if title in CANON_PROSE else None
    if book in ("詩經", "楚辭"):
        title = m.chapter.split("·")[-1]
        return f"school-canon poem {title}" if title in CANON_POEMS else None
    if m.passage <= 2:
        return f"opening passage {m.passage} of {m.chapter}"
    marker = canon_piece(corpus, m.book, m.chapter, m.passage)
    if marker:
        return f"school-canon passage ({marker})"
    ctx_key = fold(han_only(ctx))
    for line in FAMOUS_LINES:
        if fold(han_only(line)) in ctx_key:
            return f"famous line ({line})"
    return None


# A new section (章) of 論語/孟子 opens with its speaker; a canon piece runs from its marker to the next opening.
SECTION_OPENINGS: tuple[str, ...] = ("孟子曰", "孟子見", "孟子謂", "孟子之", "子曰", "孔子曰", "曾子曰", "有子曰", "子夏曰")


def canon_piece(corpus, book: str, chapter: str, index: int) -> str | None:
    """The marker of the school-canon piece that paragraph ``index`` of a chapter belongs to, or None."""
    paras = sorted((p for p in corpus.passages if p.book == book and p.chapter == chapter), key=lambda p: p.index)
    current = None
    for p in paras:
        key = fold(han_only(p.text))
        hit = next((mk for mk in CANON_PASSAGE_MARKERS if fold(han_only(mk)) in key), None)
        if hit:
            current = hit
        elif p.text.lstrip("「“").startswith(SECTION_OPENINGS) or "問曰" in p.text[:12]:
            current = None
        if p.index == index:
            return current
    return None


def corpus_book_title(book_key: str) -> str:
    return BOOK_BY_KEY[book_key].title


def question(entry) -> str:
    return "下列哪一項是「" + as_excerpt(entry["context"]) + "」的正確現代漢語翻譯？"


def to_one_script(entries, directory=None):
    """Entries quoting a simplified book in traditional script: the context as the corpus converts it, the
    modern translations in Taiwan standard forms (those of the items written in traditional), with the
    reviewed fixes of ``translation_script.tsv`` (:func:`ancientbench.builders.curated.one_script`)."""
    simplified = lambda e: item_script(e["context"] + e["answer"] + "".join(e["distractors"])) == "simplified"  # noqa: E731
    fields = {"context": "classical", "answer": "modern", "distractors": "modern", "citation": "as written"}
    return one_script(TASK, entries, fields, simplified, directory)


def build(ctx):
    return build_entries(TASK, ctx, question, DEV_KEYS, transform=to_one_script)


def summary(corpus) -> dict:
    """Size, anthologised share (with reasons) and error-type counts of the curated file."""
    entries = load_entries(TASK)
    reasons = {e.key: anthologised(e, corpus) for e in entries}
    labels = Counter(part for e in entries for err in e["errors"] for part in err.split("+"))
    outside = sum(1 for r in reasons.values() if r is None)
    return {
        "entries": len(entries),
        "outside_anthologised": outside,
        "outside_share": round(outside / len(entries), 3) if entries else 0.0,
        "anthologised_reasons": Counter(r.split(" (")[0].split(" of ")[0] for r in reasons.values() if r),
        "books": Counter(e["book"] for e in entries),
        "error_labels": labels,
        "errors_per_distractor": Counter(len(err.split("+")) for e in entries for err in e["errors"]),
    }


def main(argv: list[str] | None = None) -> int:
    s = summary(load_corpus(DEFAULT_SOURCES_DIR))
    for k, v in s.items():
        print(f"{k}: {dict(v.most_common()) if isinstance(v, Counter) else v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
