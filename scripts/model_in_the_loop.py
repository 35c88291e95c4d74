"""Option (e) of issue 34, tried: re-choose each item's distractor triple with a cross-fitted stem-reading model.

For a task whose builder picks each item's triple among checked alternatives with :mod:`debias` (``homophone``,
``pronunciation``, ``cloze``, ``tradoc_word``'s two subsets; ``phonetic_loan``'s ``reoption``, which chose the curated
file's distractors, re-run on the version 1 file with the current entries in place of theirs), this builds the task
as shipped while recording every item's alternatives (how many rebuild the shipped triple is printed), then repeats
``--rounds`` times: fit the stem-reading predictor's model (:mod:`ancientbench.quality.predictors` features,
``--model``) on four folds of the current items, rate every alternative triple of the fifth fold's items by the
probability it gives the key (never rating an item with a model that saw it), and re-choose each item's triple
greedily: the single-rule strategies kept at chance as the builders do (:func:`debias.chance_distance`), plus the
model's credit for the key (``--objective chance``: held at 25% like a strategy; ``min``: as low as possible,
weighted by ``--weight``). After every round a predictor trained from scratch on the re-chosen items (both model
families, 5-fold, as ``ancientbench audit`` reports it; the options-only one too with ``--options-only``) and the worst
single rule are printed. Nothing is written to the dataset; every round's choice goes to ``--out`` (JSON).

    python scripts/model_in_the_loop.py homophone --rounds 2 --model trees --objective min
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import time
from collections import Counter
from pathlib import Path

from ancientbench.builders import DEFAULT_SEED, BuildContext, cloze, debias, homophone, phonetic_loan, pronunciation, tradoc_word
from ancientbench.builders.charpool import Sources
from ancientbench.builders.curated import Entry, load_entries
from ancientbench.paths import DATASET_PATH
from ancientbench.quality import predictors as P
from ancientbench.quality.audit import corpus_frequencies
from ancientbench.quality.strategies import STRATEGIES, TASK_LEVEL, Context, Item, credits
from ancientbench.schema import read_jsonl
from ancientbench.sources import classics, guangyun, unihan
from ancientbench.tasks import LETTERS, TASK_BY_NAME

BUILDERS = {"homophone": homophone, "pronunciation": pronunciation, "cloze": cloze, "tradoc_word": tradoc_word,
            "phonetic_loan": phonetic_loan}
V1_LOAN_FILE = "298f447^:ancientbench/curated/phonetic_loan.jsonl"  # the file phonetic_loan.reoption was run on


class RecordingBalancer(debias.Balancer):
    """The builders' greedy selector, keeping what each item was offered and what it chose."""

    offered: list = []

    def choose(self, question, answer, alternatives):
        k = super().choose(question, answer, alternatives)
        RecordingBalancer.offered.append((question, answer, list(alternatives), k))
        return k


def _recording(module, run):
    """``run()`` with ``module.Balancer`` recording (builders construct their selector by that name, and
    :func:`debias.pick_balanced` by the module-global one), and what was offered."""
    original, RecordingBalancer.offered = module.Balancer, []
    module.Balancer = RecordingBalancer
    try:
        result = run()
    finally:
        module.Balancer = original
    return result, RecordingBalancer.offered


def _merged_loan_entries() -> list:
    """The version 1 file ``reoption`` was run on, in its order, each entry still in the curated file replaced by
    the current one in one script (as built): its other entries are the 本字 the distractors were drawn from and
    the greedy choice's history."""
    current = {e.key: e for e in phonetic_loan.to_one_script(load_entries(phonetic_loan.TASK))}
    v1 = subprocess.run(["git", "show", V1_LOAN_FILE], capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in v1.splitlines() if line.strip()]
    merged = [current.pop(r["key"], None) or Entry(phonetic_loan.TASK, "v1", n, r) for n, r in enumerate(rows, 1)]
    return merged + list(current.values())


def _offers(task: str, src: Sources) -> tuple[list[dict], list[tuple]]:
    """The shipped test rows of ``task`` as its builder builds them, and every (question, answer, alternatives,
    chosen index) its selector was offered."""
    ctx = BuildContext(seed=DEFAULT_SEED)
    if task in ("homophone", "pronunciation"):
        result, offered = _recording(BUILDERS[task], lambda: BUILDERS[task].build_from(src, DEFAULT_SEED))
        return result.test, offered
    if task in ("cloze", "tradoc_word"):
        result, offered = _recording(debias, lambda: BUILDERS[task].build(ctx))
        return result.test, offered
    _, offered = _recording(phonetic_loan, lambda: phonetic_loan.reoption(_merged_loan_entries(), src.g, src.u, src.corpus))
    return read_jsonl(Path(DATASET_PATH) / "data" / task / "test.jsonl"), offered


def shipped_items(task: str, src: Sources) -> tuple[list[tuple], tuple[int, int]]:
    """(question, answer, alternatives, chosen index, id) of every shipped test item its builder offered a choice
    (where a question was offered twice, the offer whose choice is the shipped triple), with the shipped triple as
    the chosen one (appended to the alternatives where the rebuild no longer offers it: round 0 is the release),
    and (how many the rebuild chooses as shipped, how many had the shipped triple appended)."""
    test, offered = _offers(task, src)
    shipped = {r["question"]: (r["id"], [r[L].strip() for L in LETTERS if r[L] != r[r["answer"]]]) for r in test}
    by_q: dict[str, tuple] = {}
    for q, a, alts, k in offered:
        if q in shipped and k >= 0 and (q not in by_q or _same(alts[k], shipped[q][1])):
            by_q[q] = (q, a, alts, k, shipped[q][0])
    items, same, appended = [], 0, 0
    for r in test:
        if r["question"] not in by_q:
            continue
        q, a, alts, k, rid = by_q[r["question"]]
        same += _same(alts[k], shipped[q][1])
        k = next((j for j, t in enumerate(alts) if _same(t, shipped[q][1])), None)
        if k is None:
            alts, k, appended = [*alts, tuple(shipped[q][1])], len(alts), appended + 1
        items.append((q, a, alts, k, rid))
    return items, (same, appended)


def _same(triple, other) -> bool:
    return sorted(o.strip() for o in triple) == sorted(o.strip() for o in other)


def _row(task: str, question: str, answer: str, triple, rid: str) -> dict:
    """The item as a row, its four options in an order seeded by the question (as ``place_options`` shuffles them:
    the features' within-item ranks break ties by position, so the builders' pool order must not show)."""
    options = [answer, *triple]
    random.Random(hashlib.sha256(question.encode()).digest()).shuffle(options)
    return {"id": rid, "task": task, "question": question, **dict(zip(LETTERS, options)),
            "answer": LETTERS[options.index(answer)]}


def figures(task: str, items, choice, freq, names, options_only: bool = False) -> dict:
    """A stem-reading predictor trained from scratch on the chosen items (and an options-only one), and the worst
    single rule (``freq``: the audit's, the classics corpus)."""
    rows = [_row(task, q, a, alts[k], rid) for (q, a, alts, _, rid), k in zip(items, choice)]
    fresh = P.stem_reading_predictor(rows, Context(freq), names, count_rows=rows)
    extra = {}
    if options_only:
        only = P.options_only_predictor(rows, Context(freq), count_rows=rows,
                                        names=[n for n in P.OPTIONS_ONLY_STRATEGIES if n in names])
        extra = {"options_only": only["accuracy"], **{f"options_only_{m}": only["models"][m]["accuracy"] for m in P.MODELS}}
    per = [n for n in STRATEGIES if n not in TASK_LEVEL]
    ctx, totals = Context(freq), Counter()
    for r in rows:
        totals.update(credits(Item.make(task, r["question"], [r[L] for L in LETTERS]), LETTERS.index(r["answer"]), ctx, per))
    worst = max(per, key=lambda s: totals[s])
    return {"stem_reading": fresh["accuracy"], "logistic": fresh["models"]["logistic"]["accuracy"],
            "trees": fresh["models"]["trees"]["accuracy"], "worst_rule": worst, "worst_rule_share": totals[worst] / len(rows),
            **extra}


def rate_alternatives(task, items, choice, freq, names, kind, max_alternatives):
    """For every (item, alternative): the held-out model's probability share of the key, and whether it ranks it first."""
    import numpy as np  # lazy: a research script; numpy with scikit-learn

    rows = [_row(task, q, a, alts[k], rid) for (q, a, alts, _, rid), k in zip(items, choice)]
    X, y, _, _ = P.feature_matrix(rows, Context(freq), names, rows, with_stem=True)
    cand, owner = [], []
    for i, (q, a, alts, _, rid) in enumerate(items):
        for k, t in enumerate(alts[:max_alternatives]):
            cand.append(_row(task, q, a, t, rid))
            owner.append((i, k))
    Xc, _, gold, _ = P.feature_matrix(cand, Context(freq), names, rows, with_stem=True)
    fold = np.array([int(hashlib.sha256(("fold:" + q).encode()).hexdigest(), 16) % P.FOLDS for q, *_ in items])
    own = np.array([fold[i] for i, _ in owner])
    share, first = np.zeros(len(cand)), np.zeros(len(cand))
    for f in range(P.FOLDS):
        train = np.where(fold != f)[0]
        model = P.new_model(kind).fit(X[(train[:, None] * 4 + np.arange(4)).reshape(-1)], y[(train[:, None] * 4 + np.arange(4)).reshape(-1)])
        sel = np.where(own == f)[0]
        p = model.predict_proba(Xc[(sel[:, None] * 4 + np.arange(4)).reshape(-1)])[:, 1].reshape(-1, 4)
        share[sel] = p[np.arange(len(sel)), gold[sel]] / p.sum(axis=1)
        first[sel] = p.argmax(axis=1) == gold[sel]
    return owner, 0.5 * share + 0.5 * first


RANK_NAMES = [f"{n}@{r}" for n in STRATEGIES for r in range(1, 4)]


def key_ranks(item, ctx) -> dict:
    """For each strategy, which of ranks 2-4 the key holds among the four options (ties shared); rank 1 is its pick."""
    out = {}
    for n, fn in STRATEGIES.items():
        scores = fn(item, ctx)
        above = sum(1 for x in scores[1:] if x > scores[0] + 1e-12)
        tied = sum(1 for x in scores[1:] if abs(x - scores[0]) <= 1e-12)
        for r in range(1, 4):
            out[f"{n}@{r}"] = sum(1 for t in range(tied + 1) if above + t == r) / (tied + 1)
    return out


def rechoose(task, items, owner, credit, freq, weights, objective, weight, max_uses=None) -> list[int]:
    """Each item's triple again, greedily, with the model's credit for the key beside the single rules
    (``max_uses``: a distractor in at most so many items, as phonetic_loan's builder caps it, where the pool allows)."""
    by_item: dict[int, list] = {}
    for j, (i, k) in enumerate(owner):
        by_item.setdefault(i, []).append((k, j))
    ctx, totals, out, used = Context(freq), Counter(), [], Counter()
    for i, (q, a, alts, *_) in enumerate(items):
        best = None
        allowed = [(k, j) for k, j in by_item[i] if max_uses is None or all(used[d.strip()] < max_uses for d in alts[k])]
        for k, j in allowed or by_item[i]:
            item = Item.make(task, q, [a, *alts[k]])
            c = credits(item, 0, ctx, list(STRATEGIES))
            c["model"] = float(credit[j])
            if objective == "ranks":  # every strategy's rank of the key (not only its pick) held at 25% per rank
                c.update(key_ranks(item, ctx))
                cost = debias.chance_distance(totals, c, [*STRATEGIES, *RANK_NAMES], len(out) + 1, weights)
            elif objective == "chance":
                cost = debias.chance_distance(totals, c, [*STRATEGIES, "model"], len(out) + 1, {**weights, "model": weight})
            else:
                cost = debias.chance_distance(totals, c, list(STRATEGIES), len(out) + 1, weights) / max(1, len(out)) + weight * c["model"]
            cost += 0.01 * k  # the builders' preference for earlier alternatives
            if best is None or cost < best[0] - 1e-12:
                best = (cost, k, c)
        totals.update(best[2])
        ctx.option_counts.update([a, *alts[best[1]]])
        used.update(d.strip() for d in alts[best[1]])
        out.append(best[1])
    return out


def _describe(task: str, items, same: tuple[int, int], test_n: int, subset_of: dict) -> str:
    """What the selector was offered: alternatives per item (mean, how many with one), overall and per subset."""
    def pools(xs) -> str:
        return (f"{len(xs)} items, {sum(len(x[2]) for x in xs) / max(1, len(xs)):.1f} alternative triples per item on "
                f"average, {sum(1 for x in xs if len(x[2]) == 1)} with one")

    by_subset: dict[str, list] = {}
    for x in items:
        by_subset.setdefault(subset_of.get(x[4], ""), []).append(x)
    parts = "; ".join(f"{name or '-'}: {pools(xs)}" for name, xs in sorted(by_subset.items())) if len(by_subset) > 1 else ""
    return (f"{task}: {test_n} shipped test items, {len(items)} of them offered a choice by the builder ({pools(items)}); "
            f"the rebuilt choice is the shipped triple on {same[0]} of {len(items)}, the shipped triple not among the "
            f"rebuild's alternatives on {same[1]} (appended; round 0 is the shipped triple)" + (f"\n  by subset: {parts}" if parts else ""))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("task", choices=sorted(BUILDERS))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--model", choices=P.MODELS, default="trees")
    p.add_argument("--objective", choices=("chance", "min", "ranks"), default="min")
    p.add_argument("--weight", type=float, default=5.0)
    p.add_argument("--max-alternatives", type=int, default=35)
    p.add_argument("--options-only", action="store_true", help="also train an options-only predictor after each round")
    p.add_argument("--sources", default=".sources")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    t0 = time.time()
    src = Sources(u=unihan.load(), g=guangyun.load(), corpus=classics.load_corpus(a.sources))
    items, same = shipped_items(a.task, src)
    test = read_jsonl(Path(DATASET_PATH) / "data" / a.task / "test.jsonl")
    print(_describe(a.task, items, same, len(test), {r["id"]: r.get("subset", "") for r in test}))
    print(f"model {a.model}, objective {a.objective}, weight {a.weight}, at most {a.max_alternatives} alternatives")
    names = [n for n in STRATEGIES if n not in TASK_BY_NAME[a.task].answer_rule]
    choice = [x[3] for x in items]
    history = [choice]
    audit_freq = corpus_frequencies(a.sources)
    report = lambda: json.dumps(figures(a.task, items, choice, audit_freq, names, a.options_only))  # noqa: E731
    print(f"round 0 (as shipped): {report()}  [{time.time() - t0:.0f} s]", flush=True)
    weights = getattr(BUILDERS[a.task], "WEIGHTS", {})
    for rnd in range(1, a.rounds + 1):
        if a.objective == "ranks":  # no model: the key's rank under every strategy levelled, one pass
            owner = [(i, k) for i, x in enumerate(items) for k in range(min(len(x[2]), a.max_alternatives))]
            credit = [0.0] * len(owner)
        else:
            owner, credit = rate_alternatives(a.task, items, choice, src.audit_freq, names, a.model, a.max_alternatives)
        new = rechoose(a.task, items, owner, credit, src.audit_freq, weights, a.objective, a.weight,
                       getattr(BUILDERS[a.task], "MAX_DISTRACTOR_USES", None))
        changed, choice = sum(x != y for x, y in zip(choice, new)), new
        history.append(choice)
        print(f"round {rnd}: {changed} triples changed; {report()}  [{time.time() - t0:.0f} s]", flush=True)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump({"task": a.task, "args": vars(a), "choice": choice, "rounds": history}, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
