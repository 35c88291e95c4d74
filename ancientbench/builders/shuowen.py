"""說文解字 (shuowenjiezi/shuowen data, user-supplied): agreement figures and the paper-faithful variant configs.

Owns two things, both reading a folder of the ``shuowenjiezi/shuowen`` JSON entries (``data/<id>.json`` with
``wordhead``, ``explanation``, ``radical`` (540 部), ``pronunciation`` (大徐 fanqie), ``components``). The data
is not a registry package, so nothing built from it is committed; tests read ``../shared/sources/shuowen``.

* :func:`agreement` (``ancientbench audit --shuowen DIR``): how the committed answers agree with 說文 —
  phonetic_radical answers vs the ``从X Y聲`` analysis (plain 聲 only; 亦聲/省聲 counted apart), Kangxi
  radicals (radical task) vs the 說文 部, and 廣韻 fanqie (pronunciation task) vs 大徐 fanqie, both as
  identical spelling and as "the 大徐 fanqie can spell the 廣韻 音韻地位" (tshet-uinh 執行反切).
* :func:`build_variants` (``ancientbench build --shuowen DIR``): configs ``pronunciation_shuowen`` (大徐
  fanqie), ``radical_shuowen`` (540 部), ``phonetic_radical_shuowen`` (``从X Y聲``) and
  ``radical_meaning_shuowen`` (說文 gloss of the 部首). Rows keep the base task in ``task``; the folder name
  is the config. Every distractor passes a checker (see each builder) and drops are counted by reason.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..paths import CURATED_DIR
from ..schema import read_config
from ..sources import SourceMissing
from .common import BuildResult, Candidate, split_dev_test, task_rng

SOURCE_LABEL = "說文解字 (shuowenjiezi/shuowen, Apache-2.0; user-supplied, not redistributed)"
_FANQIE = re.compile(r"^(.)(.)切$")
# boilerplate of 說文 glosses that two unrelated glosses may share
GLOSS_FUNCTION_CHARS = frozenset("也之其所者象形从凡屬皆曰一日而以於有為爲不")


@dataclass(frozen=True)
class Entry:
    id: int
    wordhead: str
    explanation: str
    radical: str
    pronunciation: str
    components: tuple[str, ...]

    @property
    def fanqie(self) -> str | None:
        """The 大徐 fanqie without 切 (``古雙``), or None when the entry has no plain ``XY切``."""
        m = _FANQIE.match(self.pronunciation.strip())
        return m.group(1) + m.group(2) if m else None

    @property
    def is_section_head(self) -> bool:
        """A 部首 entry: its explanation says 凡X之屬皆从X."""
        return f"凡{self.wordhead}之屬皆从{self.wordhead}" in self.explanation


@dataclass(frozen=True)
class Analysis:
    """What the explanation says about the phonetic: plain ``Y聲``, ``Y亦聲``, ``Y省聲``."""

    plain: tuple[str, ...]
    yisheng: tuple[str, ...]
    shengsheng: tuple[str, ...]
    semantic: tuple[str, ...]  # the graphs after 从

    @property
    def phonetic(self) -> str | None:
        """The single plain phonetic, when that is all the explanation says."""
        if len(set(self.plain)) == 1 and not self.yisheng and not self.shengsheng:
            return self.plain[0]
        return None


def analyse(explanation: str) -> Analysis:
    """Parse the ``从X Y聲`` analysis of a 說文 explanation (only the text from the first 从 on)."""
    k = explanation.find("从")
    if k < 0:
        return Analysis((), (), (), ())
    text = explanation[k:]
    plain, yi, sheng = [], [], []
    for m in re.finditer("聲", text):
        i = m.start()
        prev = text[i - 1] if i >= 1 else ""
        if prev == "省" and i >= 2:
            sheng.append(text[i - 2])
        elif prev == "亦" and i >= 2:
            yi.append(text[i - 2])
        elif prev and _is_han(prev) and prev not in "从之其":
            plain.append(prev)
    semantic = tuple(m.group(1) for m in re.finditer(r"从(.)", text) if _is_han(m.group(1)))
    return Analysis(tuple(plain), tuple(yi), tuple(sheng), semantic)


def _is_han(ch: str) -> bool:
    from ..sources.classics import is_han

    return bool(ch) and is_han(ch)


class Shuowen:
    def __init__(self, directory: Path, entries: list[Entry]):
        self.directory = directory
        self.entries = entries
        by: dict[str, list[Entry]] = defaultdict(list)
        for e in entries:
            by[e.wordhead].append(e)
        self.by_head = dict(by)
        self.sections = sorted({e.radical for e in entries})

    def get(self, char: str) -> list[Entry]:
        return self.by_head.get(char, [])

    def section_heads(self) -> list[Entry]:
        return [e for e in self.entries if e.is_section_head]


@lru_cache(maxsize=2)
def load(directory: str | Path) -> Shuowen:
    """Read every entry of a shuowen data folder (``DIR/data/*.json`` or ``DIR/*.json``), in id order."""
    d = Path(directory)
    files = sorted((d / "data").glob("*.json")) or sorted(d.glob("*.json"))
    if not files:
        raise SourceMissing(
            f"no 說文 entries (data/*.json) under {d}; pass the folder of a shuowenjiezi/shuowen checkout "
            "(github.com/shuowenjiezi/shuowen), e.g. --shuowen ../shared/sources/shuowen"
        )
    entries = []
    for f in files:
        try:
            raw = json.loads(f.read_text(encoding="utf-8"))
            entries.append(
                Entry(int(raw["id"]), raw["wordhead"], raw["explanation"], raw["radical"], raw.get("pronunciation", ""),
                      tuple(raw.get("components") or ()))
            )
        except (KeyError, ValueError, TypeError) as e:
            raise SourceMissing(f"{f}: not a 說文 entry ({e.__class__.__name__}: {e})") from None
    entries.sort(key=lambda e: e.id)
    return Shuowen(d, entries)


# ---------------------------------------------------------------------------------------------------
# agreement


def _target(row: dict) -> str:
    """The character a glyph/sound question is about: the first character inside 「」."""
    return row["question"].split("「", 1)[1][0] if "「" in row["question"] else ""


def same_graph(a: str, b: str, uh) -> bool:
    """One graph: equal, equal after the classics corpus's variant fold, or Unihan variants of each other."""
    from ..sources.classics import fold

    return a == b or fold(a) == fold(b) or (uh is not None and (b in uh.variants(a) or a in uh.variants(b)))


GRAPH_PAIRS_FILE = CURATED_DIR / "shuowen_graph_pairs.tsv"


@lru_cache(maxsize=2)
def graph_pairs(path: str | Path = GRAPH_PAIRS_FILE) -> dict[frozenset[str], dict]:
    """The hand-checked pairs of forms that are one graph beyond Unihan's links (our form, the 說文 text's form),
    each with the items it touches, its reason and reference: ``{frozenset({ours, shuowen}): row}``."""
    rows: dict[frozenset[str], dict] = {}
    lines = [ln for ln in Path(path).read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]
    header = lines[0].split("\t")
    for n, line in enumerate(lines[1:], start=2):
        row = dict(zip(header, line.split("\t")))
        if len(row) != len(header) or not all(row.values()) or len(row["ours"]) != 1 or len(row["shuowen"]) != 1:
            raise ValueError(f"{path}, data line {n}: expected {len(header)} non-empty tab-separated fields "
                             f"({', '.join(header)}), one character each in ours and shuowen")
        rows[frozenset((row["ours"], row["shuowen"]))] = row
    return rows


def same_graph_listed(a: str, b: str, uh, item: str) -> bool:
    """:func:`same_graph`, or one of the hand-checked :func:`graph_pairs` for an item it names (graph-level agreement
    only: the builders keep :func:`same_graph`)."""
    row = graph_pairs().get(frozenset((a, b)))
    return same_graph(a, b, uh) or (row is not None and item in row["items"].split())


def _rows(folder: Path, config: str) -> list[dict]:
    return read_config(folder, config, "test") + read_config(folder, config, "dev")


def _fig(agree: int, compared: int, what: str) -> dict:
    return {"agree": agree, "compared": compared, "rate": (agree / compared if compared else 0.0), "what": what}


def agreement(folder: str | Path, shuowen_dir: str | Path) -> dict[str, dict]:
    """Agreement of a dataset folder's answers with 說文解字; only tasks present in the folder are measured."""
    from ..sources import guangyun, unihan

    sw = load(shuowen_dir)
    folder = Path(folder)
    try:
        uh = unihan.load()
    except SourceMissing:
        uh = None
    out: dict[str, dict] = {}

    rows = _rows(folder, "phonetic_radical")
    if rows:
        agree = graph_agree = compared = special = in_sw = 0
        for r in rows:
            entries = sw.get(_target(r))
            if not entries:
                continue
            in_sw += 1
            answer = r[r["answer"]]
            analyses = [analyse(e.explanation) for e in entries]
            if any(a.yisheng or a.shengsheng for a in analyses):
                special += 1
            plain = [a.phonetic for a in analyses if a.phonetic]
            if plain:
                compared += 1
                agree += any(same_graph(answer, p, uh) for p in plain)
                graph_agree += any(same_graph_listed(answer, p, uh, _target(r)) for p in plain)
        out["phonetic_radical"] = _fig(agree, compared, "our 聲符 = 說文 Y in 从X Y聲 (items whose 說文 entry gives one plain Y聲)")
        out["phonetic_radical_graph"] = _fig(graph_agree, compared, "the same, at the level of graphs: forms Unihan does not "
                                             "link counted as one graph where curated/shuowen_graph_pairs.tsv says so")
        out["phonetic_radical_special"] = _fig(special, in_sw, "items whose 說文 entry says 亦聲 or 省聲 (we reject such analyses)")

    rows = _rows(folder, "radical")
    if rows:
        agree = compared = 0
        for r in rows:
            entries = sw.get(_target(r))
            if not entries:
                continue
            compared += 1
            answer = r[r["answer"]]
            agree += any(same_graph(answer, e.radical, uh) for e in entries)
        out["radical"] = _fig(agree, compared, "Kangxi radical (our answer) = 說文 部 (540 sections)")

    rows = _rows(folder, "pronunciation")
    if rows:
        try:
            gy = guangyun.load()
        except SourceMissing:
            gy = None
        same = compared = spell = spell_compared = 0
        for r in rows:
            ch = _target(r)
            fq = [e.fanqie for e in sw.get(ch) if e.fanqie]
            if not fq:
                continue
            answer = r[r["answer"]].removesuffix("切")
            compared += 1
            same += answer in fq
            if gy is not None:
                ours = gy.fanqie_statuses(answer[0], answer[1]) or frozenset()
                target_status = ours & gy.statuses_of(ch)
                results = [gy.fanqie_statuses(f[0], f[1]) for f in fq]
                if target_status and any(x is not None for x in results):
                    spell_compared += 1
                    spell += any(x is not None and (x & target_status) for x in results)
        out["pronunciation_spelling"] = _fig(same, compared, "廣韻 fanqie (our answer) spelled exactly as the 大徐 fanqie")
        if gy is not None:
            out["pronunciation_status"] = _fig(
                spell, spell_compared, "the 大徐 fanqie can spell the 廣韻 音韻地位 of our answer (tshet-uinh 執行反切)"
            )
    return out


# ---------------------------------------------------------------------------------------------------
# variant configs


def _known_chars(ctx) -> frozenset[str]:
    from ..sources import unihan
    from ..sources.classics import load_corpus

    uh = unihan.load()
    chars = set(uh.core_chars())
    try:
        chars |= load_corpus(ctx.sources_dir).attested_chars()
    except SourceMissing:
        pass
    return frozenset(c for c in chars if not uh.is_simplified_only(c))


def _frequencies(ctx):
    from ..quality.strategies import Frequencies
    from ..sources.classics import load_corpus

    try:
        corpus = load_corpus(ctx.sources_dir)
    except SourceMissing:
        return Frequencies({}, "none")
    return Frequencies({c: corpus.frequency(c) for c in corpus.char_freq}, "classics")


def _finish(task: str, config: str, items, dev_prefs, ctx, dropped: Counter, freq) -> BuildResult:
    """items: (key, question, answer, alternatives, citation, explanation) -> BuildResult with dev/test."""
    from ..quality.strategies import BALANCED_V1_WITH_CENTRAL as AUDIT_STRATEGIES
    from .debias import pick_balanced

    # balance option similarity too: 大徐 fanqie distractors share a speller with the answer
    picks = pick_balanced([(q, a, alts) for _, q, a, alts, _, _ in items], freq, strategies=AUDIT_STRATEGIES)
    cands = [
        Candidate(key=k, question=q, answer=a, distractors=alts[p], source=SOURCE_LABEL, citation=c, explanation=x)
        for (k, q, a, alts, c, x), p in zip(items, picks)
    ]
    keys = {c.key for c in cands}
    dev_keys = tuple(k for k in dev_prefs if k in keys)[:5]
    dev, test = split_dev_test(config, cands, dev_keys, ctx.seed)
    for row in dev + test:
        row["task"] = task  # variants keep their base task; the id keeps the config name
    return BuildResult(task, test=test, dev=dev, dropped=dropped, candidates=len(cands) + sum(dropped.values()), config=config)


def _alternatives(pool: list[str], key: str, ctx, fixed: tuple[str, ...] = (), n: int = 8) -> list[tuple[str, str, str]]:
    rng = task_rng(f"shuowen:{key}", ctx.seed)
    if len(pool) > 10:  # a seeded sample of ten keeps the combinations few
        keep = set(rng.sample(range(len(pool)), 10))
        pool = [d for i, d in enumerate(pool) if i in keep]
    need = 3 - len(fixed)
    combos: list[tuple[str, ...]] = []
    if need == 1:
        combos = [(a,) for a in pool]
    elif need == 2:
        combos = [(a, b) for i, a in enumerate(pool) for b in pool[i + 1 :]]
    else:
        combos = [(a, b, c) for i, a in enumerate(pool) for j, b in enumerate(pool[i + 1 :], i + 1) for c in pool[j + 1 :]]
    rng.shuffle(combos)
    return [tuple(fixed) + c for c in combos[:n]]


def build_pronunciation(ctx, sw: Shuowen) -> BuildResult:
    """大徐 fanqie. Distractors: other 大徐 fanqie sharing the upper or the lower speller whose spelled
    音韻地位 (tshet-uinh) is disjoint from every 廣韻 reading of the target and from the answer's."""
    from ..sources import guangyun

    gy = guangyun.load()
    known = _known_chars(ctx)
    dropped: Counter = Counter()
    all_fq = sorted({e.fanqie for e in sw.entries if e.fanqie})
    by_upper, by_lower = defaultdict(list), defaultdict(list)
    for f in all_fq:
        by_upper[f[0]].append(f)
        by_lower[f[1]].append(f)
    items = []
    for ch in sorted(sw.by_head, key=lambda c: sw.by_head[c][0].id):
        entries = sw.get(ch)
        fqs = {e.fanqie for e in entries}
        if len(fqs) != 1 or None in fqs:
            dropped["no single 大徐 fanqie"] += 1
            continue
        if ch not in known:
            dropped["target not a core or classics character"] += 1
            continue
        answer = fqs.pop()
        answer_status = gy.fanqie_statuses(answer[0], answer[1])
        target_status = gy.statuses_of(ch)
        if not answer_status or not target_status:
            dropped["fanqie not checkable against 廣韻 (speller or target not in tshet-uinh)"] += 1
            continue
        forbidden = answer_status | target_status
        pool = []
        for f in sorted(set(by_upper[answer[0]] + by_lower[answer[1]])):
            if f == answer or f in gy.fanqie_of(ch):
                continue
            st = gy.fanqie_statuses(f[0], f[1])
            if not st or st & forbidden:
                continue
            pool.append(f + "切")
        if len(pool) < 3:
            dropped["fewer than 3 distractors pass the checker"] += 1
            continue
        q = f"大徐本《說文解字》中「{ch}」字的反切是？"
        items.append((ch, q, answer + "切", _alternatives(pool, ch, ctx), f"說文解字 id {entries[0].id}「{ch}」{entries[0].pronunciation}",
                      f"大徐本《說文》「{ch}」{answer}切；其餘反切所切的音韻地位（據 tshet-uinh）與「{ch}」的各讀音不同。"))
    return _finish("pronunciation", "pronunciation_shuowen", items, ("東", "江", "河", "請", "聞"), ctx, dropped, _frequencies(ctx))


def build_radical(ctx, sw: Shuowen) -> BuildResult:
    """540 部. Distractors: other 部首 — components of the character first, then its Kangxi radical, then
    部首 of characters sharing a component; a distractor may not be the character's 部 in any 說文 entry
    nor a variant form of it."""
    from ..sources import unihan

    uh = unihan.load()
    known = _known_chars(ctx)
    sections = set(sw.sections)
    dropped: Counter = Counter()
    by_component: dict[str, Counter] = defaultdict(Counter)
    for e in sw.entries:
        for c in e.components:
            by_component[c][e.radical] += 1
    items = []
    for ch in sorted(sw.by_head, key=lambda c: sw.by_head[c][0].id):
        entries = sw.get(ch)
        rads = {e.radical for e in entries}
        if len(rads) != 1:
            dropped["entries disagree on the 部"] += 1
            continue
        r = next(iter(rads))
        if r == ch:
            dropped["the character heads its own 部"] += 1
            continue
        if ch not in known:
            dropped["target not a core or classics character"] += 1
            continue
        comps = [c for e in entries for c in e.components]
        kangxi = [uh.radical_char(n) for n in uh.radical_numbers(ch) if n in uh.radical_table]
        similar = [s for c in comps for s, _ in sorted(by_component[c].items(), key=lambda kv: (-kv[1], kv[0]))]
        pool = []
        for d in [*comps, *kangxi, *similar]:
            if d in pool or d not in sections or d == ch or same_graph(d, r, uh) or d in rads or d not in known:
                continue
            pool.append(d)
        if len(pool) < 3:
            dropped["fewer than 3 distractors pass the checker"] += 1
            continue
        pool = pool[:8]
        q = f"「{ch}」字在《說文解字》中屬於哪一部？"
        items.append((ch, q, r, _alternatives(pool, ch, ctx), f"說文解字 id {entries[0].id}「{ch}」{r}部",
                      f"《說文》將「{ch}」列於{r}部；其餘選項亦爲說文部首，但不是「{ch}」所屬之部。"))
    return _finish("radical", "radical_shuowen", items, ("江", "河", "請", "聞", "問"), ctx, dropped, _frequencies(ctx))


def build_phonetic_radical(ctx, sw: Shuowen) -> BuildResult:
    """从X Y聲. Options: Y, X (the semantic component), and phonetics of other characters of the same 部;
    a distractor may not be any graph the entry calls 聲 (plain, 亦, 省), nor share a Karlgren series with
    the character or Y (Unihan kGSR), nor be a graph whose 說文 analysis contains Y."""
    from ..sources import unihan

    uh = unihan.load()
    known = _known_chars(ctx)
    dropped: Counter = Counter()
    parsed = {}
    for ch, entries in sw.by_head.items():
        analyses = [analyse(e.explanation) for e in entries]
        ps = {a.phonetic for a in analyses}
        if len(ps) == 1 and None not in ps:
            parsed[ch] = (ps.pop(), analyses[0])
    by_section: dict[str, Counter] = defaultdict(Counter)
    for ch, (p, _) in parsed.items():
        by_section[sw.get(ch)[0].radical][p] += 1

    def contains(g: str, part: str, depth: int = 6) -> bool:
        stack, seen = [(g, 0)], set()
        while stack:
            x, d = stack.pop()
            if x == part:
                return True
            if x in seen or d >= depth:
                continue
            seen.add(x)
            stack.extend((c, d + 1) for e in sw.get(x) for c in e.components if c != x)
        return False

    items = []
    for ch in sorted(sw.by_head, key=lambda c: sw.by_head[c][0].id):
        if ch not in parsed:
            dropped["no single plain 从X Y聲 analysis"] += 1
            continue
        p, a = parsed[ch]
        if ch not in known or p not in known:
            dropped["target or phonetic not a core or classics character"] += 1
            continue
        sem = [s for s in a.semantic if s not in (p, ch)]
        if not sem or sem[0] not in known:
            dropped["no semantic component to offer"] += 1
            continue
        called = set(a.plain) | set(a.yisheng) | set(a.shengsheng)
        series = uh.gsr_series(ch) | uh.gsr_series(p)

        def ok(d: str) -> bool:
            return (d in known and d not in called and d != ch and not (uh.gsr_series(d) & series)
                    and not contains(d, p) and not same_graph(d, p, uh))

        if not ok(sem[0]):
            dropped["semantic component fails the checker"] += 1
            continue
        section = sw.get(ch)[0].radical
        similar = [q for q, _ in sorted(by_section[section].items(), key=lambda kv: (-kv[1], kv[0]))]
        pool = []
        for d in [*sem[1:], *similar]:
            if d not in pool and d != sem[0] and ok(d):
                pool.append(d)
            if len(pool) >= 8:
                break
        if len(pool) < 2:
            dropped["fewer than 3 distractors pass the checker"] += 1
            continue
        e = sw.get(ch)[0]
        q = f"據《說文解字》，形聲字「{ch}」的聲符為？"
        if any(d in q for d in (p, sem[0])):
            dropped["option appears in the question"] += 1
            continue
        items.append((ch, q, p, _alternatives([d for d in pool if d not in q], ch, ctx, fixed=(sem[0],)),
                      f"說文解字 id {e.id}「{ch}」{e.explanation[e.explanation.find('从'):][:24]}",
                      f"《說文》：「{ch}」从{sem[0]}{p}聲。"))
    items = [it for it in items if it[3]]
    return _finish("phonetic_radical", "phonetic_radical_shuowen", items, ("江", "河", "請", "聞", "問"), ctx, dropped,
                   _frequencies(ctx))


def _gloss(e: Entry) -> str:
    """The first clause of a 部首's explanation (up to the first 。), or ''."""
    return e.explanation.split("。", 1)[0].strip()


def build_radical_meaning(ctx, sw: Shuowen) -> BuildResult:
    """說文 gloss of the 部首. Distractors: glosses of other 部首 of similar length that share no content
    character with the target's gloss (說文 boilerplate such as 也/象形/从 ignored) and do not contain the
    target graph; the distractor 部首 may not be a variant of the target."""
    from ..sources import unihan

    uh = unihan.load()
    dropped: Counter = Counter()
    heads = []
    for e in sw.section_heads():
        g = _gloss(e)
        if not (2 <= len(g) <= 12):
            dropped["gloss missing or longer than 12 characters"] += 1
            continue
        if e.wordhead in g:
            dropped["gloss contains the 部首 itself"] += 1
            continue
        heads.append((e, g))
    items = []
    for e, g in heads:
        content = set(g) - GLOSS_FUNCTION_CHARS
        pool = []
        for e2, g2 in sorted(heads, key=lambda h: (abs(len(h[1]) - len(g)), h[0].id)):
            if e2.id == e.id or g2 == g or e.wordhead in g2 or same_graph(e.wordhead, e2.wordhead, uh):
                continue
            if content & (set(g2) - GLOSS_FUNCTION_CHARS):
                continue
            pool.append(g2)
            if len(pool) >= 8:
                break
        if len(pool) < 3:
            dropped["fewer than 3 distractors pass the checker"] += 1
            continue
        q = f"《說文解字》部首「{e.wordhead}」的釋義是？"
        items.append((e.wordhead, q, g, _alternatives(pool, e.wordhead, ctx), f"說文解字 id {e.id}「{e.wordhead}」",
                      f"《說文》：「{e.wordhead}，{g}。」其餘選項是其他部首的說文釋義。"))
    return _finish("radical_meaning", "radical_meaning_shuowen", items, ("水", "木", "口", "門", "馬", "牛", "羊", "鳥", "言"), ctx, dropped,
                   _frequencies(ctx))


def build_variants(ctx) -> list[BuildResult]:
    """The four 說文-based variant configs (for ``ancientbench build --shuowen DIR``)."""
    sw = load(ctx.shuowen_dir)
    return [
        build_pronunciation(ctx, sw),
        build_radical(ctx, sw),
        build_phonetic_radical(ctx, sw),
        build_radical_meaning(ctx, sw),
    ]


def add_arguments(p) -> None:  # pragma: no cover - convenience entry point, the CLI path is `audit --shuowen`
    p.add_argument("shuowen", metavar="DIR")
    p.add_argument("--data", default=None)


def main(argv: list[str] | None = None) -> int:
    """``python -m ancientbench.builders.shuowen DIR [--data FOLDER]``: print the agreement figures."""
    import argparse

    from .. import DATASET_PATH

    p = argparse.ArgumentParser(description=main.__doc__)
    add_arguments(p)
    args = p.parse_args(argv)
    for name, fig in agreement(Path(args.data or DATASET_PATH), Path(args.shuowen)).items():
        print(f"{name}: {fig['agree']}/{fig['compared']} = {fig['rate'] * 100:.1f}% ({fig['what']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
