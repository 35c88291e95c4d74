"""``ancientbench reference``: knowledge-free reference rows, written as ordinary results files.

Three "models" that know no ancient Chinese, each answering every test item of the dataset, so ``report``,
``compare`` and the plots set a real model beside them:

- ``Chance``: a uniform guess per item (seeded): the floor, 25% up to sampling noise;
- ``Mandarin reader``: per task, the best rule of the *mandarin* family of :mod:`ancientbench.quality.strategies`
  (a modern reader who sounds the characters out in Mandarin), ties broken by a seeded draw;
- ``Options-only predictor`` and ``Stem-reading predictor``: the two combined knowledge-free predictors of
  :mod:`ancientbench.quality.predictors` (the better of logistic regression and gradient-boosted trees, 5-fold
  cross-fitted): what a test-wise examinee reaches who sees the four options alone, and one who sees the question too
  (the figures ``ancientbench audit`` prints, here on the rows' items). They replace the single "Shortcut ceiling"
  row of earlier versions, which was the stem-reading one under a name that hid what it reads (issue 34).

And one row that is not knowledge-free: ``AI examinee (full question, sample)``, the full-question blind-probe
answers of the probe records (``records/probes/*-full*``), mapped back through each quiz's option permutation onto
the current items; only the sampled items, and only those whose key is unchanged since the probe.

Each goes to ``<out>/<slug>/results_<k>shot.json`` with ``predictions_<k>shot.jsonl`` beside it, for k in
``--shots`` (the rows do not read exemplars, so every shot setting holds the same predictions).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
from datetime import datetime, timezone
from pathlib import Path

from .. import __version__
from ..aggregate import aggregate
from ..argtypes import add_no_progress, non_negative_int
from ..dataset import file_sha256
from ..errors import AncientBenchError
from ..evaluation.layout import predictions_path, results_path
from ..fileio import atomic_write
from ..letters import from_predictions
from ..paths import DATASET_PATH, PROBES_DIR, record
from ..quality.audit import corpus_frequencies, option_frequencies, self_frequencies
from ..quality.predictors import OPTIONS_ONLY_STRATEGIES, options_only_predictor, stem_reading_predictor
from ..quality.strategies import FAMILY, STRATEGIES, Context, accuracies, credits, item_from_row
from ..schema import load_split, split_file
from ..sources import SourceMissing
from ..tasks import DATASET_VERSION, LETTERS, TASK_BY_NAME, TASK_NAMES
from .results import ReportError

log = logging.getLogger(__name__)

REFERENCE_VERSION = "1"
ROWS = {"chance": "Chance", "mandarin-reader": "Mandarin reader", "options-only": "Options-only predictor",
        "stem-reading": "Stem-reading predictor", "ai-examinee": "AI examinee (full question, sample)"}
PREDICTOR_ROWS = ("options-only", "stem-reading")
DESCRIPTIONS = {
    "chance": "a seeded uniform guess per item",
    "mandarin-reader": "per task, the best Mandarin-reading rule of ancientbench.quality.strategies (ties drawn, seeded)",
    "options-only": "the options-only predictor (ancientbench.quality.predictors): the four options alone, 5-fold cross-fitted",
    "stem-reading": "the stem-reading predictor (ancientbench.quality.predictors): options and question, 5-fold cross-fitted",
    "ai-examinee": "answers of blind AI examinees (full question, options reshuffled) from the probe records, outside "
                   "the pipeline; only the sampled items, latest round per item, items unchanged since",
}


def strategy_names(slug: str, task: str) -> list[str]:
    """The knowledge-free strategies a row reads on a task (their sources are the row's inputs); [] for the rows
    that read none (chance, the AI examinee)."""
    rule = TASK_BY_NAME[task].answer_rule
    if slug == "mandarin-reader":
        return [n for n, f in FAMILY.items() if f == "mandarin" and n not in rule]
    if slug == "options-only":
        return [n for n in OPTIONS_ONLY_STRATEGIES if n not in rule]
    if slug == "stem-reading":
        return [n for n in STRATEGIES if n not in rule]
    return []


def _chance(rows: list[dict], seed: int) -> tuple[list[str], dict]:
    rng = random.Random(f"{seed}:chance:{rows[0]['task']}")
    return [rng.choice(LETTERS) for _ in rows], {}


def _mandarin(rows: list[dict], ctx, seed: int) -> tuple[list[str], dict]:
    task = rows[0]["task"]
    names = strategy_names("mandarin-reader", task)
    acc = accuracies(rows, ctx, names)
    best = max(names, key=lambda n: (acc[n], -names.index(n)))
    rng = random.Random(f"{seed}:mandarin:{task}")
    preds = []
    for r in rows:
        item, _ = item_from_row(r)
        s = STRATEGIES[best](item, ctx)
        top = max(s)
        preds.append(LETTERS[rng.choice([i for i, v in enumerate(s) if abs(v - top) <= 1e-12])])
    return preds, {"rule": best, "rule_accuracy_ties_shared": acc[best]}


def _predictor(slug: str, rows: list[dict], freq) -> tuple[list[str], dict]:
    names = strategy_names(slug, rows[0]["task"])
    if slug == "options-only":  # never frequencies counted from the stems
        r = options_only_predictor(rows, Context(freq or option_frequencies(rows)), names=names)
    else:
        r = stem_reading_predictor(rows, Context(freq or self_frequencies(rows)), names)
    return r["predictions"], {"model": r["best_model"], "models": r["models"]}


def _quiz_options(path: Path) -> dict[str, list[str]]:
    """qid -> the four option texts, A-D, as the quiz showed them (``quiz.md`` of a probe record)."""
    out: dict[str, list[str]] = {}
    qid = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## q"):
            qid = line[3:].strip()
            out[qid] = []
        elif qid and len(line) > 3 and line[0] in LETTERS and line[1:3] == ". ":
            out[qid].append(line[3:])
    return out


def ai_examinee(tests: dict[str, list[dict]], probes_dir: Path | None = None) -> dict[str, tuple[list[dict], list[str], dict]]:
    """Per task: (current rows answered in a full-question probe, the examinee's answers as dataset letters, detail).

    An answer is carried over by its option *text* (rebuilds reorder options): an item counts only when its four
    option texts are still the ones the quiz showed; later rounds win over earlier ones."""
    probes_dir = probes_dir or record(PROBES_DIR)
    by_id = {r["id"]: r for rows in tests.values() for r in rows}
    answers: dict[str, tuple[str | None, str]] = {}  # item id -> (dataset letter answered, probe folder)
    stale: dict[str, int] = {}
    folders = [p for p in probes_dir.glob("*-full*") if all((p / f).is_file() for f in ("key.json", "answers.jsonl", "quiz.md"))]
    for folder in sorted(folders):
        key = json.loads((folder / "key.json").read_text(encoding="utf-8"))
        shown = _quiz_options(folder / "quiz.md")
        given = {a["qid"]: a.get("answer") for a in map(json.loads, filter(str.strip, (folder / "answers.jsonl").read_text(encoding="utf-8").splitlines()))}
        for qid, q in key["items"].items():
            row, texts = by_id.get(q["id"]), shown.get(qid, [])
            if row is None or len(texts) != 4 or sorted(texts) != sorted(row[x] for x in LETTERS):
                stale[key["task"]] = stale.get(key["task"], 0) + 1  # gone, or its options changed since the probe
                continue
            a = given.get(qid)
            letter = next(x for x in LETTERS if row[x] == texts[LETTERS.index(a)]) if a in LETTERS else None
            answers[q["id"]] = (letter, folder.name)
    out = {}
    for task, rows in tests.items():
        picked = [r for r in rows if r["id"] in answers]
        if picked:
            out[task] = (picked, [answers[r["id"]][0] for r in picked],
                         {"probes": sorted({answers[r["id"]][1] for r in picked}), "left_out_changed_or_gone": stale.get(task, 0)})
    return out


def write_row(out: Path, slug: str, per_task: dict[str, tuple[list[dict], list[str], dict]], files_sha256: dict,
              data_path: str, shots: list[int], seed: int) -> list[Path]:
    """One reference row's results and predictions files, in the format ``ancientbench eval`` writes."""
    folder = out / slug
    folder.mkdir(parents=True, exist_ok=True)
    preds = [{"id": r["id"], "task": r["task"], "gold": r["answer"], "pred": p, "logprobs": None, "shots_used": 0}
             for rows, guesses, _ in per_task.values() for r, p in zip(rows, guesses)]
    agg = aggregate([p["pred"] == p["gold"] for p in preds], [p["task"] for p in preds])
    written = []
    for k in shots:
        pf = predictions_path(folder, k)
        atomic_write(pf, "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in preds))
        results = {
            "ancientbench_version": __version__,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "model": {"name_or_path": ROWS[slug], "revision": None, "weights_sha256": None, "num_parameters": None,
                      "dtype": None, "device": "none", "smoke_model": False, "reference_row": True},
            "setting": {"shots": k, "letter_style": None, "letter_token_ids": None, "chat": False, "batch_size": None,
                        "prefix_cache": False, "backend": "reference", "mode": "reference"},
            "prompt": {"template_version": f"reference-{REFERENCE_VERSION}", "template_sha256": None},
            "data": {"path": data_path, "dataset_version": DATASET_VERSION, "files_sha256": files_sha256,
                     "n_items": len(preds)},
            "tasks": {t: {**v, "fewshot_truncated_items": 0} for t, v in agg["tasks"].items()},
            "competencies": agg["competencies"], "average": agg["average"],
            "micro_accuracy": agg["micro_accuracy"], "complete": agg["complete"],
            "answer_letters": from_predictions(preds),
            "packages": {"ancientbench": __version__},
            "predictions_file": pf.name,
            "reference": {"row": slug, "description": DESCRIPTIONS[slug], "seed": seed,
                          "per_task": {t: detail for t, (_, _, detail) in per_task.items()}},
        }
        rf = results_path(pf)
        atomic_write(rf, json.dumps(results, ensure_ascii=False, indent=1) + "\n")
        written.append(rf)
    return written


PREFLIGHT_ITEMS = 3  # items per task a row's strategies are tried on before the long work (loads their sources)


def missing_inputs(slug: str, tests: dict[str, list[dict]], ctx) -> str | None:
    """What a row cannot find, as one line saying how to get it, or None when it can run: the probe records for the
    AI examinee; for a strategy row, the sources its strategies read, found by scoring the first items of every task
    (the sources load once, so the row's own run reuses them)."""
    if slug == "ai-examinee":
        return None if PROBES_DIR.is_dir() else f"needs the probe records in {PROBES_DIR}, which come with a clone of the repository"
    try:
        for task, rows in tests.items():
            names = strategy_names(slug, task)
            for r in rows[:PREFLIGHT_ITEMS] if names else ():
                credits(*item_from_row(r), ctx, names)
    except SourceMissing as e:
        return str(e)
    return None


def runnable_rows(rows: list[str] | None, tests: dict[str, list[dict]], ctx, *, required: bool, log=None) -> list[str]:
    """``rows`` (default: every row) less those whose inputs are missing: each left out with one line (to ``log``,
    default this module's logger, as a warning), or, when the user named the rows (``required``), an error naming the
    first one."""
    log = log or logging.getLogger(__name__).warning
    out = []
    for slug in list(ROWS) if rows is None else rows:
        missing = missing_inputs(slug, tests, ctx)
        if missing is None:
            out.append(slug)
        elif required:
            raise AncientBenchError(f"reference row {slug!r} cannot run: {missing}")
        else:
            log(f"{ROWS[slug]}: left out; {missing}")
    return out


def _inputs(data: str | Path | None, limit: int | None):
    """(dataset folder, every task's test rows, the first ``limit`` of them, the classics' character frequencies or
    None, the frequencies the strategies read)."""
    root = Path(data) if data is not None else Path(DATASET_PATH)
    full = {t: load_split(root, t, "test") for t in TASK_NAMES}
    tests = {t: rows[:limit] for t, rows in full.items()}
    corpus = corpus_frequencies()
    return root, full, tests, corpus, corpus or self_frequencies([r for rs in tests.values() for r in rs])


def check_rows(rows: list[str] | None = None, data: str | Path | None = None, *, limit: int | None = None,
               required: bool = False, log=None) -> list[str]:
    """The rows that can run on ``data``'s first ``limit`` items per task (:func:`runnable_rows`): what a job that
    computes them later (the ladder) checks before its long work."""
    _, _, tests, _, freq = _inputs(data, limit)
    return runnable_rows(rows, tests, Context(freq), required=required, log=log)


def write_reference_rows(out: str | Path, data: str | Path | None = None, *, rows: list[str] | None = None,
                         shots: list[int] = (0, 5), seed: int = 0, limit: int | None = None, required: bool = False,
                         log=None) -> list[Path]:
    """Compute the reference rows over every task's test split of ``data`` (default: the bundled dataset), or
    its first ``limit`` items per task (the items ``eval --limit`` scores). A row whose inputs are missing is left
    out with one line (an error when ``required``: the user named it); see :func:`runnable_rows`. Progress and
    notices go to ``log`` (default: this module's logger, info)."""
    log = log or logging.getLogger(__name__).info
    bad = [k for k in shots if isinstance(k, bool) or not isinstance(k, int) or k < 0]
    if bad:  # a results_-3shot.json would be filed as a setting no evaluation has
        raise ReportError(f"shots must be non-negative integers, got {bad[0]!r}")
    root, full, tests, corpus, freq = _inputs(data, limit)
    sha = {f"{t}/test.jsonl": file_sha256(split_file(root, t, "test")) for t in TASK_NAMES}
    rows = runnable_rows(rows, tests, Context(freq), required=required, log=log)
    out = Path(out)
    written: list[Path] = []
    for slug in rows:
        if slug == "ai-examinee":  # its own sample of items, whatever the limit
            per_task = ai_examinee(full)
            written += write_row(out, slug, per_task, sha, "ancientbench" if data is None else str(root), list(shots), seed)
            continue
        per_task = {}
        for t, task_rows in tests.items():
            if slug == "chance":
                guesses, detail = _chance(task_rows, seed)
            elif slug == "mandarin-reader":
                guesses, detail = _mandarin(task_rows, Context(freq), seed)
            else:
                guesses, detail = _predictor(slug, task_rows, corpus)
            per_task[t] = (task_rows, guesses, detail)
            log(f"{ROWS[slug]}: {t} {sum(g == r['answer'] for r, g in zip(task_rows, guesses)) / len(task_rows):.1%}")
        written += write_row(out, slug, per_task, sha, "ancientbench" if data is None else str(root), list(shots), seed)
    return written


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "--out", dest="out", default="results/reference", help="folder for the rows (default %(default)s)")
    parser.add_argument("--data", default=None, help="dataset folder (default: the bundled dataset)")
    parser.add_argument("--rows", nargs="+", choices=list(ROWS), default=None, help="which rows (default: all)")
    parser.add_argument("--shots", nargs="+", type=non_negative_int, default=[0, 5],
                        help="shot settings to file them under (default 0 5)")
    parser.add_argument("--limit", type=int, default=None, help="the first N test items per task (as eval --limit)")
    parser.add_argument("--seed", type=non_negative_int, default=0)
    add_no_progress(parser)


def run(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 1:
        raise ReportError(f"--limit must be >= 1, got {args.limit}")
    for path in write_reference_rows(args.out, args.data, rows=args.rows, shots=args.shots, seed=args.seed,
                                     limit=args.limit, required=args.rows is not None,
                                     log=(lambda m: None) if args.no_progress else log.info):
        print(f"wrote {path}")
    return 0
