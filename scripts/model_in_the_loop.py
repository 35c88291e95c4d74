"""Option (e) of issue 34, tried: re-choose each item's distractor triple with a cross-fitted stem-reading model.

For a generated task whose builder picks each item's triple among checked alternatives (``homophone``,
``pronunciation``), this builds the task as shipped while recording every item's alternatives, then repeats
``--rounds`` times: fit the stem-reading predictor's model (:mod:`ancientbench.quality.predictors` features,
``--model``) on four folds of the current items, rate every alternative triple of the fifth fold's items by the
probability it gives the key (never rating an item with a model that saw it), and re-choose each item's triple
greedily: the single-rule strategies kept at chance as the builders do (:func:`debias.chance_distance`), plus the
model's credit for the key (``--objective chance``: held at 25% like a strategy; ``min``: as low as possible,
weighted by ``--weight``). After every round a predictor trained from scratch on the re-chosen items (both model
families, 5-fold, as ``ancientbench audit`` reports it) and the worst single rule are printed. Nothing is written
to the dataset; the last round's choice goes to ``--out`` (JSON) for inspection.

    python scripts/model_in_the_loop.py homophone --rounds 2 --model trees --objective min
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from collections import Counter

from ancientbench.builders import debias, homophone, pronunciation
from ancientbench.builders.charpool import Sources
from ancientbench.quality import predictors as P
from ancientbench.quality.audit import corpus_frequencies
from ancientbench.quality.strategies import STRATEGIES, TASK_LEVEL, Context, Item, credits
from ancientbench.sources import classics, guangyun, unihan
from ancientbench.tasks import LETTERS, TASK_BY_NAME

BUILDERS = {"homophone": homophone, "pronunciation": pronunciation}


class RecordingBalancer(debias.Balancer):
    """The builders' greedy selector, keeping what each item was offered and what it chose."""

    offered: list = []

    def choose(self, question, answer, alternatives):
        k = super().choose(question, answer, alternatives)
        RecordingBalancer.offered.append((question, answer, list(alternatives), k))
        return k


def shipped_items(task: str, src: Sources) -> list[tuple]:
    """(question, answer, alternatives, chosen index) of every test item, as the builder builds it."""
    module = BUILDERS[task]
    RecordingBalancer.offered = []
    module.Balancer = RecordingBalancer  # the builder constructs its selector by this name
    try:
        result = module.build_from(src, 0)
    finally:
        module.Balancer = debias.Balancer
    questions = {r["question"] for r in result.test}
    return [x for x in RecordingBalancer.offered if x[0] in questions and x[3] >= 0]


def _row(task: str, question: str, answer: str, triple) -> dict:
    """The item as a row, its four options in an order seeded by the question (as ``place_options`` shuffles them:
    the features' within-item ranks break ties by position, so the builders' pool order must not show)."""
    options = [answer, *triple]
    random.Random(hashlib.sha256(question.encode()).digest()).shuffle(options)
    return {"task": task, "question": question, **dict(zip(LETTERS, options)), "answer": LETTERS[options.index(answer)]}


def figures(task: str, items, choice, freq, names) -> dict:
    """A stem-reading predictor trained from scratch on the chosen items, and the worst single rule (``freq``: the
    audit's, the classics corpus)."""
    rows = [_row(task, q, a, alts[k]) for (q, a, alts, _), k in zip(items, choice)]
    fresh = P.stem_reading_predictor(rows, Context(freq), names, count_rows=rows)
    per = [n for n in STRATEGIES if n not in TASK_LEVEL]
    ctx, totals = Context(freq), Counter()
    for r in rows:
        totals.update(credits(Item.make(task, r["question"], [r[L] for L in LETTERS]), LETTERS.index(r["answer"]), ctx, per))
    worst = max(per, key=lambda s: totals[s])
    return {"stem_reading": fresh["accuracy"], "logistic": fresh["models"]["logistic"]["accuracy"],
            "trees": fresh["models"]["trees"]["accuracy"], "worst_rule": worst, "worst_rule_share": totals[worst] / len(rows)}


def rate_alternatives(task, items, choice, freq, names, kind, max_alternatives):
    """For every (item, alternative): the held-out model's probability share of the key, and whether it ranks it first."""
    import numpy as np  # lazy: a research script; numpy with scikit-learn

    rows = [_row(task, q, a, alts[k]) for (q, a, alts, _), k in zip(items, choice)]
    X, y, _, _ = P.feature_matrix(rows, Context(freq), names, rows, with_stem=True)
    cand, owner = [], []
    for i, (q, a, alts, _) in enumerate(items):
        for k, t in enumerate(alts[:max_alternatives]):
            cand.append(_row(task, q, a, t))
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


def rechoose(task, items, owner, credit, freq, weights, objective, weight) -> list[int]:
    """Each item's triple again, greedily, with the model's credit for the key beside the single rules."""
    by_item: dict[int, list] = {}
    for j, (i, k) in enumerate(owner):
        by_item.setdefault(i, []).append((k, j))
    ctx, totals, out = Context(freq), Counter(), []
    for i, (q, a, alts, _) in enumerate(items):
        best = None
        for k, j in by_item[i]:
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
        out.append(best[1])
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("task", choices=sorted(BUILDERS))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--model", choices=P.MODELS, default="trees")
    p.add_argument("--objective", choices=("chance", "min", "ranks"), default="min")
    p.add_argument("--weight", type=float, default=5.0)
    p.add_argument("--max-alternatives", type=int, default=35)
    p.add_argument("--sources", default=".sources")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    t0 = time.time()
    src = Sources(u=unihan.load(), g=guangyun.load(), corpus=classics.load_corpus(a.sources))
    items = shipped_items(a.task, src)
    names = [n for n in STRATEGIES if n not in TASK_BY_NAME[a.task].answer_rule]
    choice = [k for *_, k in items]
    single = sum(1 for x in items if len(x[2]) == 1)
    print(f"{a.task}: {len(items)} test items, {sum(len(x[2]) for x in items) / len(items):.1f} alternative triples "
          f"per item on average, {single} with one; model {a.model}, objective {a.objective}, weight {a.weight}")
    audit_freq = corpus_frequencies(a.sources)
    print(f"round 0 (as built): {json.dumps(figures(a.task, items, choice, audit_freq, names))}  [{time.time() - t0:.0f} s]", flush=True)
    for rnd in range(1, a.rounds + 1):
        if a.objective == "ranks":  # no model: the key's rank under every strategy levelled, one pass
            owner = [(i, k) for i, x in enumerate(items) for k in range(min(len(x[2]), a.max_alternatives))]
            credit = [0.0] * len(owner)
        else:
            owner, credit = rate_alternatives(a.task, items, choice, src.audit_freq, names, a.model, a.max_alternatives)
        new = rechoose(a.task, items, owner, credit, src.audit_freq, BUILDERS[a.task].WEIGHTS, a.objective, a.weight)
        changed, choice = sum(x != y for x, y in zip(choice, new)), new
        print(f"round {rnd}: {changed} triples changed; {json.dumps(figures(a.task, items, choice, audit_freq, names))}  "
              f"[{time.time() - t0:.0f} s]", flush=True)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump({"task": a.task, "args": vars(a), "choice": choice}, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
