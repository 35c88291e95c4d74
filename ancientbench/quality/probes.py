"""Blind-examinee validity probes: quiz files for reviewers who never saw the items, and their scoring.

``python -m ancientbench.quality.probes make TASK --mode options|full --n 50 --out DIR`` samples test items
(seeded), reshuffles each item's options with its own seeded permutation, replaces ids with opaque ones
(``q001`` …) and writes ``DIR/quiz.md`` (what the examinee sees) and ``DIR/key.json`` (qid -> item id,
permutation, gold letter in the quiz, the dataset version and the sha256 of the split sampled; never shown to the
examinee). In ``options`` mode the stem is hidden and
one line says what the options are (VALIDITY.md §2); in ``full`` mode the question is shown and the examinee
also gives a confidence 1-3 and a flag (``two correct: A,C``, ``none correct``, ``ambiguous: …``, ``stem
defective: …``; VALIDITY.md §3). ``… score DIR`` reads ``DIR/answers.jsonl`` (``{"qid", "answer", "confidence"?,
"flag"?}``) and writes ``DIR/summary.json``: accuracy against the key, the disagreements and flags to adjudicate,
and, once ``DIR/adjudication.jsonl`` (``{"qid", "verdict": "key stands"|"defect", "note"}``) covers them, the
defect rate. The card reads every ``summary.json`` under ``records/probes/``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from datetime import date
from pathlib import Path

from ..errors import AncientBenchError
from ..paths import DATASET_PATH, PROBES_DIR
from ..schema import load_split, split_file
from ..tasks import DATASET_VERSION, LETTERS, get_task

MODES = ("options", "full")


def make_quiz(data: str | Path, task: str, *, mode: str, n: int, seed: int, subset: str | None = None) -> tuple[str, dict]:
    """The quiz text and its key for ``n`` test items of ``task`` (of one ``subset`` if given) sampled with
    ``random.Random(seed)``."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    get_task(task)
    items = [it for it in load_split(data, task, "test") if subset is None or it["subset"] == subset]
    if not items:
        raise ValueError(f"no test items of {task!r}" + (f" in subset {subset!r}" if subset else ""))
    rng = random.Random(f"{task}:{mode}:{seed}")
    sample = rng.sample(items, min(n, len(items)))
    key: dict = {"task": task, "subset": subset, "mode": mode, "seed": seed, "n": len(sample), "made": date.today().isoformat(),
                 "dataset_version": _version_of(data), "data_sha256": _sha256(split_file(data, task, "test")), "items": {}}
    lines = [f"# Quiz ({len(sample)} questions)", ""]
    if mode == "options":
        lines += [
            f"Each question shows only four options: {get_task(task).option_note}. The question itself is hidden.",
            "Choose the option most likely to be the correct answer. Answer every question.",
            'Reply with one JSON object per line: {"qid": "q001", "answer": "B"}',
        ]
    else:
        lines += [
            "Answer each four-option question. Give your confidence (1 = guess, 2 = fairly sure, 3 = sure) and a flag",
            "when something is wrong: 'two correct: A,C', 'none correct', 'ambiguous: <why>', 'stem defective: <why>'.",
            'Reply with one JSON object per line: {"qid": "q001", "answer": "B", "confidence": 3, "flag": ""}',
        ]
    lines.append("")
    for k, item in enumerate(sample, start=1):
        qid = f"q{k:03d}"
        perm = list(LETTERS)
        rng.shuffle(perm)  # quiz letter i shows the item's option perm[i]
        key["items"][qid] = {"id": item["id"], "perm": "".join(perm), "gold": LETTERS[perm.index(item["answer"])]}
        lines.append(f"## {qid}")
        if mode == "full":
            lines.append(item["question"])
        lines += [f"{LETTERS[i]}. {item[perm[i]]}" for i in range(4)]
        lines.append("")
    return "\n".join(lines), key


def _sha256(path: Path) -> str:
    """The sampled split file's digest: which build a probe saw, even between two builds of one dataset version."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _version_of(data: str | Path) -> str | None:
    """The dataset version of a data folder: the package's own files carry ``DATASET_VERSION``; others are unknown."""
    return DATASET_VERSION if Path(data).resolve() == Path(DATASET_PATH).resolve() else None


def write_quiz(data: str | Path, task: str, out: str | Path, *, mode: str, n: int, seed: int, subset: str | None = None) -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    text, key = make_quiz(data, task, mode=mode, n=n, seed=seed, subset=subset)
    (out / "quiz.md").write_text(text, encoding="utf-8")
    (out / "key.json").write_text(json.dumps(key, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return out


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}, line {n}: not valid JSON: {e.msg}") from None
    return rows


def score(folder: str | Path) -> dict:
    """Score ``answers.jsonl`` against ``key.json`` and write ``summary.json`` (see the module docstring)."""
    folder = Path(folder)
    key = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    answers = {a["qid"]: a for a in _read_jsonl(folder / "answers.jsonl")}
    missing = sorted(set(key["items"]) - set(answers))
    unknown = sorted(set(answers) - set(key["items"]))
    if unknown:
        raise ValueError(f"{folder / 'answers.jsonl'}: answers to questions not in the quiz: {unknown[:5]}")
    right, review = 0, []
    for qid, k in sorted(key["items"].items()):
        a = answers.get(qid, {})
        ok = a.get("answer") == k["gold"]
        right += ok
        flag = str(a.get("flag") or "").strip()
        if key["mode"] == "full" and (not ok or flag):
            review.append({"qid": qid, "id": k["id"], "gold": k["gold"], "answer": a.get("answer"), "flag": flag})
    summary = {
        "task": key["task"], "subset": key.get("subset"), "mode": key["mode"], "n": key["n"], "made": key["made"], "seed": key["seed"],
        "dataset_version": key.get("dataset_version"),  # the data files the sample was drawn from (None: not recorded)
        **({"data_sha256": key["data_sha256"]} if key.get("data_sha256") else {}),
        "answered": key["n"] - len(missing), "correct": right, "accuracy": right / key["n"] if key["n"] else None,
        "to_adjudicate": review,
    }
    adj_path = folder / "adjudication.jsonl"
    if key["mode"] == "full" and adj_path.is_file():
        verdicts = {v["qid"]: v for v in _read_jsonl(adj_path)}
        open_items = [r["qid"] for r in review if r["qid"] not in verdicts]
        defects = [v for v in verdicts.values() if v.get("verdict") == "defect"]
        summary["adjudicated"] = not open_items
        summary["defects"] = len(defects)
        summary["defect_rate"] = len(defects) / key["n"] if key["n"] else None
    (folder / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return summary


def review_choices(folder: str | Path, data: str | Path, sheet: str | Path) -> dict[str, str]:
    """A full-mode probe's answers as a blind-review sheet's choices (``builders.review import --answers``):
    each answer is followed to its option text, then to the letter that text has on the reviewer's sheet."""
    folder = Path(folder)
    key = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    if key["mode"] != "full":
        raise ValueError(f"{folder}: only a full-question probe can stand for a blind review")
    items = {it["id"]: it for it in load_split(data, key["task"], "test")}
    answers = {a["qid"]: a for a in _read_jsonl(folder / "answers.jsonl")}
    by_item = {k["id"]: (qid, k) for qid, k in key["items"].items()}
    out: dict[str, str] = {}
    for row in _read_jsonl(Path(sheet)):
        found = by_item.get(f"{key['task']}-{row['key']}")
        if found is None or found[0] not in answers or answers[found[0]].get("answer") not in LETTERS:
            continue
        qid, k = found
        text = items[k["id"]][k["perm"][LETTERS.index(answers[qid]["answer"])]]
        letters = [L for L in LETTERS if row[L] == text]
        if len(letters) != 1:
            raise ValueError(f"{sheet}: item {row['key']!r}: the probe's chosen option is not exactly one option of the sheet")
        out[row["key"]] = letters[0]
    return out


def summaries(root: str | Path = PROBES_DIR) -> list[dict]:
    """Every probe summary under ``root``, sorted by task, mode and dataset version, oldest first (for the card)."""
    out = []
    for path in sorted(Path(root).glob("*/summary.json")):
        s = json.loads(path.read_text(encoding="utf-8"))
        s["folder"] = path.parent.name
        out.append(s)
    def version(s: dict) -> tuple[int, ...]:  # unrecorded first: those records predate the field
        return tuple(int(x) for x in (s.get("dataset_version") or "").split(".") if x.isdigit())

    return sorted(out, key=lambda s: (s["task"], s["mode"], version(s), s["made"]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ancientbench.quality.probes", description=__doc__.strip().splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("make", help="write quiz.md and key.json for one task")
    mk.add_argument("task")
    mk.add_argument("--mode", choices=MODES, required=True)
    mk.add_argument("--n", type=int, default=50)
    mk.add_argument("--seed", type=int, default=2026)
    mk.add_argument("--subset", default=None, help="only items of this subset (e.g. tradoc_word in_context)")
    mk.add_argument("--data", default=DATASET_PATH)
    mk.add_argument("--out", required=True)
    sc = sub.add_parser("score", help="score DIR/answers.jsonl against DIR/key.json, write DIR/summary.json")
    sc.add_argument("folder")
    rv = sub.add_parser("review-answers", help="a full probe's answers as key<TAB>letter for `builders.review import --answers`")
    rv.add_argument("folder")
    rv.add_argument("sheet", help="the sheet written by `python -m ancientbench.builders.review export`")
    rv.add_argument("--data", default=DATASET_PATH)
    rv.add_argument("--out", required=True)
    args = p.parse_args(argv)
    try:
        return _run(args)
    except (AncientBenchError, FileNotFoundError) as e:  # a wrong folder or file: one line, not a traceback
        print(f"error: {e}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.cmd == "make":
        print(write_quiz(args.data, args.task, args.out, mode=args.mode, n=args.n, seed=args.seed, subset=args.subset))
    elif args.cmd == "score":
        print(json.dumps(score(args.folder), ensure_ascii=False, indent=1))
    else:
        choices = review_choices(args.folder, args.data, args.sheet)
        Path(args.out).write_text("".join(f"{k}\t{v}\n" for k, v in sorted(choices.items())), encoding="utf-8")
        print(f"{len(choices)} choices -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
