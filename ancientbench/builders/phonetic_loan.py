"""Builder of the ``phonetic_loan`` (通假字) config from the team-curated ``curated/phonetic_loan.jsonl``.

Each entry is one loan usage in context: the written graph (``loan``), the intended graph (``answer``,
本字) and three distractors, each a reading the loan graph could carry elsewhere (the 本字 of another loan
of the same graph or phonetic series, or a common word of its series or sound with a close 廣韻 reading;
see "options" below) and proven wrong in this sentence by :func:`distractor_problem`. ``kind``
(the ``subset`` column) says whether the usage is from an excavated manuscript (short context as cited in
the scholarship, document and slip/column citation) or from a transmitted classic (context verbatim from
npm ``chinese-poetry``, in its script; items are traditional throughout, :func:`to_one_script`). Questions follow the convention of the ``智(知)`` notation:
「學而時習之，不亦說乎」中的「說」通哪個字？
"""

from __future__ import annotations

import argparse
from collections import Counter
from itertools import combinations

from ..han import han_only
from ..quality.audit import corpus_frequencies
from ..quality.strategies import STRATEGIES, Frequencies, Item, credits, graph_parts, toneless
from ..schema import DataError
from ..sources import guangyun, unihan
from ..sources.classics import fold, load_corpus, to_traditional
from ..sources.guangyun import gloss_segments, meaning_text
from . import BuildContext
from .cloze import FUNCTION_KEYS
from .common import as_excerpt
from .curated import Format, build_entries, curated_path, in_script, item_script, load_entries, one_script, write_entries
from .debias import Balancer, ties_the_key

TASK = "phonetic_loan"
LOAN_KINDS: tuple[str, ...] = ("excavated", "transmitted")


def _check(obj: dict, file, line: int) -> None:
    if obj["kind"] not in LOAN_KINDS:
        raise DataError(file, line, "kind", f"bad kind {obj['kind']!r}; allowed: {', '.join(LOAN_KINDS)}")
    if obj["context"].count(obj["loan"]) != 1:
        raise DataError(file, line, "loan", f"the loan graph {obj['loan']!r} must occur exactly once in the context "
                        f"(found {obj['context'].count(obj['loan'])} times), so the question is unambiguous")
    if obj["loan"] == obj["answer"]:
        raise DataError(file, line, "answer", "the intended graph equals the loan graph")
    if obj["loan"] in obj["distractors"]:
        raise DataError(file, line, "distractors", "the loan graph itself is offered as a distractor")


FORMAT = Format(
    keys=("key", "kind", "citation", "context", "loan", "answer", "distractors", "rationale", "author", "reviewer",
          "blind_answer"),
    check=_check,
    identity=lambda data: (data["context"], data["loan"]),
    counts=lambda entries: ", " + ", ".join(f"{k} {sum(1 for e in entries if e['kind'] == k)}" for k in LOAN_KINDS),
)
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
    head = document_of(entry["citation"]) if entry["kind"] == "excavated" else ""
    return head + "「" + as_excerpt(entry["context"]) + "」中的「" + entry["loan"] + "」通哪個字？"


def to_one_script(entries, directory=None):
    """Transmitted entries quoting a simplified book (論語, 詩經, 楚辭) in traditional script, every graph as the
    corpus converts it, with the reviewed fixes of ``phonetic_loan_script.tsv``
    (:func:`ancientbench.builders.curated.one_script`). Excavated contexts are transcribed in traditional
    script already (无, 亓 … are the manuscripts' own graphs)."""
    simplified = lambda e: e["kind"] == "transmitted" and item_script(e["context"]) == "simplified"  # noqa: E731
    fields = {"context": "classical", "loan": "classical", "answer": "classical", "distractors": "classical"}
    return one_script(TASK, entries, fields, simplified, directory)


TRIM_BOUND = 0.299  # in traditional script Unihan's phonetic series reach more loan pairs (2.4.0: 30.7% before trim)


def build(ctx):
    return build_entries(TASK, ctx, question, DEV_KEYS, subset=lambda e: e["kind"], transform=to_one_script,
                         trim=TRIM_BOUND)


# ---- phonology check: a loan pair may not contradict the phonology data ------------------------------

# 發音部位 groups for "close initials": 牙 and 喉 alternate freely in loans, so they form one group.
_PLACE = {"脣": "脣", "舌": "舌", "齒": "齒", "牙": "牙喉", "喉": "牙喉"}


def _forms(ch: str, u) -> list[str]:
    """The graph itself, its traditional form(s) and its Unihan variants (for 廣韻 look-ups, e.g. 茲/兹)."""
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
    from tshet_uinh import 音韻地位  # lazy: tshet-uinh is installed only on Python >= 3.11 (pyproject marker)

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


# ---- options: every distractor a canonical 本字 of another loan of the graph or its series -------------------
#
# Version 1 offered the canonical 本字 of a well-known pair among its homophones and look-alikes, and an
# examinee who saw only the options chose it 28 times in 40. Now every option is the 本字 (the answer) of
# some entry of this file, preferably of an entry whose loan is the same graph (a graph stands for several
# 本字 in different texts) or of its phonetic series, else one whose 廣韻 reading is close to the loan's, so
# each option is a reading the loan graph could carry and only the sentence decides. ``reoption`` chose
# them once from the version 1 file (``python -m ancientbench.builders.phonetic_loan --reoption``; the
# answers it draws on are the version 1 loan pairs, kept in tests/data/phonetic_loan_v1_answers.txt for
# the tests, which re-prove each distractor). Of 506 entries it kept 272: dropped were 6 with fewer than
# three checked distractors, 17 beyond MAX_KEY_USES items of one 本字, 60 whose 本字 is a grammatical
# word, and 151 where only the key shared the loan's sound or shape while a shortcut stayed above 29%.
# A distractor is never a graph the file reads as the key or reads the key as (兌 is read 悅 elsewhere).

MAX_DISTRACTOR_USES = 6  # items in which one graph may be a distractor
RELATIONS = ("same_graph", "same_series", "close_reading")  # best first
# Second tier: common words of the classics (at least this many occurrences) of the loan's phonetic series,
# or sharing its Mandarin syllable or a component, with a close 廣韻 reading: as familiar as a canonical 本字, and sounding or
# looking like the loan as much as the key does (else "the option that sounds like the loan" finds the key).
COMMON_MIN_FREQ = 10
MAX_KEY_USES = 4  # items kept per 本字 (汝 answered 12 items): a key that recurs more is "the most frequent option"


def _trad(ch: str) -> str:
    return to_traditional(ch)


def _series(ch: str, u) -> frozenset[str]:
    out: set[str] = set()
    for f in _forms(ch, u):
        out |= {"g" + s for s in u.gsr_series(f)} | {"k" + p for p in u.phonetic_groups(f)}
    return frozenset(out)


def _same_graph(a: str, b: str, u) -> bool:
    """The same graph up to script and variant forms (OpenCC folding, Unihan variants)."""
    a, b = _trad(a), _trad(b)
    return a == b or fold(a) == fold(b) or b in u.variants(a) or a in u.variants(b)


def _glosses(ch: str, g) -> tuple[set[str], str]:
    segs: set[str] = set()
    text = ""
    for r in g.readings(ch):
        m = meaning_text(r)
        segs.update(gloss_segments(m))
        text += m
    return segs, text


def distractor_problem(entry, d: str, g, u, corpus=None) -> str | None:
    """Why ``d`` cannot stand as a wrong option for a loan entry (a dict or Entry), or None.

    Not a grammatical word (particle, pronoun, negator: another one often fits the syntax, 而況/而惡於人乎); not
    the answer or the loan graph under another form; not in the context; no 廣韻 gloss segment shared with
    the answer and neither's gloss naming the other (near-synonyms would read well in the sentence); for a
    transmitted text, the sentence read with ``d`` written instead of the loan must not occur in the classics
    (an edition that writes it so would make it defensible).
    """
    loan, answer, context = entry["loan"], entry["answer"], entry["context"]
    if fold(_trad(d)) in FUNCTION_KEYS or fold(d) in FUNCTION_KEYS:  # a particle or pronoun may fit the syntax (皇→況 vs 惡)
        return "a_function_word"
    if _same_graph(d, answer, u):
        return "the_answer_in_another_form"
    if _same_graph(d, loan, u):
        return "the_loan_graph_in_another_form"
    if fold(_trad(d)) in fold(_trad(context)):
        return "in_the_context"
    dt, at = _trad(d), _trad(answer)
    d_segs, d_text = _glosses(dt, g)
    a_segs, a_text = _glosses(at, g)
    if d_segs & a_segs:
        return "shares_a_gloss_with_the_answer"
    if any(f in d_text for f in _forms(at, u)) or any(f in a_text for f in _forms(dt, u)):
        return "gloss_names_the_answer"
    if corpus is not None and entry["kind"] == "transmitted" and corpus.contains(han_only(context.replace(loan, d))):
        return "reading_attested_in_the_classics"
    return None


def relation(loan: str, d: str, loans_of: dict[str, set[str]], g, u) -> str | None:
    """How ``d`` is a reading the loan graph could carry: the 本字 of the same graph elsewhere in the file
    (``loans_of``: answer -> the loans it answers), of its phonetic series, or a close 廣韻 reading."""
    others = loans_of.get(fold(_trad(d)), set())
    if any(_same_graph(o, loan, u) for o in others):
        return "same_graph"
    s = _series(loan, u)
    if s and (_series(d, u) & s or any(_series(o, u) & s for o in others)):
        return "same_series"
    if phonology_support(loan, d, g, u):
        return "close_reading"
    return None


def answers_index(entries) -> tuple[dict[str, str], dict[str, set[str]]]:
    """(folded answer -> its traditional form, folded answer -> the loans it answers) over the whole file."""
    form: dict[str, str] = {}
    loans_of: dict[str, set[str]] = {}
    for e in entries:
        k = fold(_trad(e["answer"]))
        form.setdefault(k, _trad(e["answer"]))
        loans_of.setdefault(k, set()).add(e["loan"])
    return form, loans_of


def _paired(pairs: set[tuple[str, str]], answer: str, d: str) -> bool:
    """The file reads ``d`` as ``answer`` or ``answer`` as ``d`` (a loan pair either way)."""
    a, b = fold(_trad(answer)), fold(_trad(d))
    return (a, b) in pairs or (b, a) in pairs


def _candidates(entries, g, u, corpus) -> list[tuple[int, int, list[tuple[int, str]]]]:
    """``(how many candidates, entry index, [(relation rank, candidate)])`` for every entry: the 本字 of the file
    that relate to its loan, then the common words of the classics of its series, syllable or shape."""
    form, loans_of = answers_index(entries)
    # graphs the file reads as one another (a loan pair either way): 兌 is read 悅 elsewhere, never a distractor for 悅
    pairs = {(fold(_trad(e["loan"])), fold(_trad(e["answer"]))) for e in entries}
    common = sorted(
        ch for ch, n in corpus.written_counts.items() if n >= COMMON_MIN_FREQ and fold(ch) not in form and not u.is_simplified_only(ch)
    )
    plan = []
    for n, e in enumerate(entries):
        cands = []
        for k in sorted(form):
            d = form[k]
            rel = relation(e["loan"], d, loans_of, g, u)
            if rel and not _paired(pairs, e["answer"], d) and distractor_problem(e, d, g, u, corpus) is None:
                cands.append((RELATIONS.index(rel), d))
        lt = _trad(e["loan"])
        s_loan, py_loan, parts = _series(lt, u), toneless(lt), graph_parts(lt)
        for d in common:
            related = s_loan & _series(d, u) or ((py_loan & toneless(d) or parts & graph_parts(d)) and phonology_support(lt, d, g, u))
            if related and not _paired(pairs, e["answer"], d) and distractor_problem(e, d, g, u, corpus) is None:
                cands.append((len(RELATIONS), d))
        plan.append((len(cands), n, cands))
    return plan


def _over_cap(entries) -> dict[str, str]:
    """{key: why} for the entries left out before choosing: a grammatical 本字, or more than ``MAX_KEY_USES``
    items of one 本字 (the dev exemplars first, then file order)."""
    dropped: dict[str, str] = {}
    dev = set(DEV_KEYS)
    per_key: Counter = Counter()
    for n in sorted(range(len(entries)), key=lambda n: (entries[n]["key"] not in dev, n)):
        k = fold(_trad(entries[n]["answer"]))
        if k in FUNCTION_KEYS and entries[n]["key"] not in dev:
            # distractors are never grammatical words, so a grammatical key would stand out among the options
            dropped[entries[n]["key"]] = "the 本字 is a grammatical word"
            continue
        per_key[k] += 1
        if per_key[k] > MAX_KEY_USES:
            dropped[entries[n]["key"]] = f"more than {MAX_KEY_USES} items with this 本字"
    return dropped


def reoption(entries, g, u, corpus, seed: int = 0) -> tuple[list[dict], dict[str, str]]:
    """New distractors for every entry (see above); entries left with fewer than three are dropped.

    Greedy, fewest candidates first: candidates ordered by relation, then fewest uses so far, and among
    the first six the triple that keeps every strategy of :mod:`ancientbench.quality.strategies` nearest
    25% (the running cost of :class:`~ancientbench.builders.debias.Balancer`, the earlier triple preferred by
    0.02 per place). Returns the rows (file order) and {key: why dropped}.
    """
    plan = _candidates(entries, g, u, corpus)
    balancer = Balancer(corpus_frequencies(None) or Frequencies({}, "none"), prefer_first=0.02, task=TASK)
    used: Counter = Counter()
    chosen: dict[int, tuple[str, ...]] = {}
    dropped = _over_cap(entries)
    for _, n, cands in sorted(plan):
        e = entries[n]
        if e["key"] in dropped:
            continue
        script = "simplified" if e["kind"] == "transmitted" and item_script(e["context"]) == "simplified" else "traditional"
        free = [d for _, d in sorted(cands, key=lambda c: (c[0], used[fold(c[1])], c[1])) if used[fold(d)] < MAX_DISTRACTOR_USES]
        shown = list(dict.fromkeys(in_script(d, script) for d in free))
        text = question(e)
        # the first six, plus up to four that tie the key on a per-option shortcut (sound or shape of the loan)
        shown = shown[:6] + [d for d in ties_the_key(TASK, text, e["answer"], shown, balancer.ctx, PER_OPTION) if d not in shown[:6]][:4]
        if len(shown) < 3:
            dropped[e["key"]] = "fewer than three checked distractors" if len(cands) < 3 else "distractor reuse cap"
            continue
        triples = list(combinations(shown, 3))
        triple = triples[balancer.choose(text, e["answer"], triples)]
        used.update(fold(_trad(d)) for d in triple)
        chosen[n] = triple
    _drop_giveaways(entries, chosen, dropped, balancer.ctx)
    rows = []
    for n, e in enumerate(entries):
        if n in chosen:
            row = dict(e.data if hasattr(e, "data") else e)
            row["distractors"] = list(chosen[n])
            rows.append(row)
    return rows, dropped


GIVEAWAY_BOUND = 0.29  # per-option shortcuts held below the audit's 30% with a margin


def _drop_giveaways(entries, chosen: dict, dropped: dict, ctx) -> None:
    """Drop items where the key alone looks or sounds like the loan (no checked distractor could tie it), or
    is the task's most frequent option, while such a shortcut stays above GIVEAWAY_BOUND: the item that the most violating strategies
    find alone first, then file order. Dev exemplars are kept."""
    names = (*PER_OPTION, "most_frequent_option")  # the last reads the task's option counts: recomputed
    items = {n: Item.make(TASK, question(entries[n]), [entries[n]["answer"], *t]) for n, t in chosen.items()}
    cred = {n: credits(it, 0, ctx, PER_OPTION) for n, it in items.items()}
    alone = {n: {k for k in PER_OPTION if (sc := STRATEGIES[k](it, ctx))[0] > max(sc[1:])} for n, it in items.items()}
    while True:
        ctx.option_counts = Counter(o.strip() for n in chosen for o in items[n].options)
        total = Counter()
        for n in chosen:
            total.update(cred[n])
            sc = STRATEGIES["most_frequent_option"](items[n], ctx)
            total["most_frequent_option"] += credits(items[n], 0, ctx, ["most_frequent_option"])["most_frequent_option"]
            alone[n].discard("most_frequent_option")
            if sc[0] > max(sc[1:]):
                alone[n].add("most_frequent_option")
        over = {k for k in names if total[k] / len(chosen) > GIVEAWAY_BOUND}
        if not over:
            return
        pick = max((n for n in chosen if alone[n] & over and entries[n]["key"] not in DEV_KEYS),
                   key=lambda n: (len(alone[n] & over), -n), default=None)
        if pick is None:
            return
        dropped[entries[pick]["key"]] = "the key alone shares the loan's " + "/".join(sorted(alone[pick] & over))
        del chosen[pick]


PER_OPTION = ("same_syllable_tone", "same_syllable", "nearest_initial_final", "shares_component", "same_phonetic_series", "is_component")




def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m ancientbench.builders.phonetic_loan")
    p.add_argument("--reoption", action="store_true", help="choose new distractors and rewrite curated/phonetic_loan.jsonl")
    p.add_argument("--sources", default=None, help="folder with node_modules/chinese-poetry")
    a = p.parse_args(argv)
    if not a.reoption:
        p.print_help()
        return 0
    entries = load_entries(TASK)
    corpus = load_corpus(a.sources or BuildContext().sources_dir)
    rows, dropped = reoption(entries, guangyun.load(), unihan.load(), corpus)
    write_entries(TASK, rows, curated_path(TASK))
    for key, why in sorted(dropped.items()):
        print(f"dropped {key}: {why}")
    print(f"{len(rows)} entries kept, {len(dropped)} dropped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
