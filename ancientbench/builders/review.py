"""Blind review of the team-curated tasks: export a blind sheet, import a reviewer's answers, report agreement.

Protocol (docs/curation.md): every entry is written by one author and answered blind by an independent
reviewer who sees only the question and the four options (shuffled, no answer, no rationale). The reviewer's
choice is recorded in the entry (``reviewer``, ``blind_answer``) and appended to the review log
(``curated/review_log.jsonl``), which keeps every blind answer ever given, so the agreement figures of the
dataset card are first-round figures even after items are fixed. Entries the reviewer answered differently
are listed for the author, who fixes them (then ``reopen`` clears the review so the entry goes back to a
blind reviewer) or drops them (``drop``). Builders leave out entries whose blind answer disagrees.

Commands (``python -m ancientbench.builders.review …``)::

    export TASK --reviewer NAME --out SHEET.jsonl [--all] [--limit N]   blind sheet (unreviewed entries)
    import TASK SHEET.jsonl --reviewer NAME [--answers KEYS.tsv]          record the answers, print agreement
    rationale TASK --reviewer NAME | KEY …                                 after answering: answers and rationales
    flag TASK KEY --reviewer NAME --reason TEXT                           a concern found on reading the rationale
    status [TASK …]                                                       agreement per task, open disagreements/flags
    reopen TASK KEY …   /   drop TASK KEY …                               after a fix / to remove an entry

A sheet line is ``{"key", "question", "A", "B", "C", "D", "choice": ""}``: fill ``choice`` with a letter,
or give ``--answers`` a file of ``key<TAB>letter`` lines.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import Counter
from importlib import import_module
from pathlib import Path

from ..paths import CURATED_DIR, record
from ..schema import DataError
from ..tasks import CURATED_TASKS, LETTERS
from .curated import curated_path, load_entries, parse_lines, write_entries

LOG_NAME = "review_log.jsonl"
LOG_KEYS = ("task", "key", "round", "reviewer", "author", "blind_answer", "answer", "agreed")


def _question(task: str, entry) -> str:
    return import_module(f"ancientbench.builders.{task}").question(entry)


def sheet_options(task: str, entry, reviewer: str) -> dict[str, str]:
    """The four options in a shuffled order private to (task, key, reviewer), independent of the build's."""
    digest = hashlib.sha256(f"review:{task}:{entry.key}:{reviewer}".encode()).digest()
    opts = list(entry.options)
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(opts)
    return dict(zip(LETTERS, opts))


def export_sheet(task: str, reviewer: str, out: str | Path, *, include_reviewed: bool = False, limit: int | None = None,
                 directory: str | Path | None = None) -> int:
    """Write a blind sheet (no answer, no rationale, no citation beyond what the question shows)."""
    entries = load_entries(task, directory)
    rows = []
    for e in entries:
        if e.reviewed and not include_reviewed:
            continue
        if e["author"] == reviewer:
            continue  # nobody reviews their own items
        rows.append({"key": e.key, "question": _question(task, e), **sheet_options(task, e, reviewer), "choice": ""})
        if limit and len(rows) >= limit:
            break
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", newline="\n") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return len(rows)


def read_answers(sheet: Path, answers: Path | None) -> dict[str, tuple[str, dict[str, str]]]:
    """key -> (letter, options) from a filled sheet, or from the sheet's options plus a key<TAB>letter file."""
    options: dict[str, dict[str, str]] = {}
    choices: dict[str, str] = {}
    for line_no, obj in parse_lines(sheet):
        if not isinstance(obj, dict) or "key" not in obj or any(L not in obj for L in LETTERS):
            raise DataError(sheet, line_no, None, "not a sheet line (key, question, A-D, choice)")
        options[obj["key"]] = {L: obj[L] for L in LETTERS}
        if str(obj.get("choice", "")).strip():
            choices[obj["key"]] = str(obj["choice"]).strip().upper()
    if answers is not None:
        for line_no, text in enumerate(answers.read_text(encoding="utf-8").splitlines(), start=1):
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            parts = text.split("\t") if "\t" in text else text.split()
            if len(parts) != 2:
                raise DataError(answers, line_no, None, "expected 'key<TAB>letter'")
            choices[parts[0].strip()] = parts[1].strip().upper()
    out = {}
    for key, letter in choices.items():
        if key not in options:
            raise DataError(answers or sheet, None, "key", f"answer for {key!r}, which is not on the sheet")
        if letter not in LETTERS:
            raise DataError(answers or sheet, None, "choice", f"{key}: choice {letter!r} is not one of A, B, C, D")
        out[key] = (letter, options[key])
    return out


def log_path(directory: str | Path | None = None) -> Path:
    return Path(directory) / LOG_NAME if directory else record(CURATED_DIR) / LOG_NAME


def read_log(directory: str | Path | None = None) -> list[dict]:
    """Every log line: blind answers (with ``agreed``), and flag / reopen / drop events (with ``event``)."""
    p = log_path(directory)
    return [obj for _, obj in parse_lines(p)] if p.is_file() else []


def blind_answers(log: list[dict]) -> list[dict]:
    return [r for r in log if "agreed" in r]


def _append_log(lines: list[dict], directory=None) -> None:
    with log_path(directory).open("a", encoding="utf-8", newline="\n") as fh:
        for r in lines:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def flag(task: str, key: str, reviewer: str, reason: str, directory: str | Path | None = None) -> None:
    """Record a reviewer's concern after reading the rationale (two defensible options, a giveaway, a
    defective context …); the item stays open until the author reopens (after a fix) or drops it."""
    keys = {e.key: e for e in load_entries(task, directory)}
    if key not in keys:
        raise DataError(curated_path(task, directory), None, "key", f"no such entry: {key}")
    if keys[key]["author"] == reviewer:
        raise DataError(curated_path(task, directory), None, "reviewer", f"{reviewer} wrote {key} and cannot review it")
    if not reason.strip():
        raise DataError(curated_path(task, directory), None, "reason", "a flag needs a reason")
    _append_log([{"task": task, "key": key, "event": "flag", "reviewer": reviewer, "reason": reason.strip()}], directory)


def import_answers(task: str, sheet: str | Path, reviewer: str, *, answers: str | Path | None = None,
                   directory: str | Path | None = None, overwrite: bool = False) -> dict:
    """Fill ``reviewer``/``blind_answer`` from a reviewed sheet, append to the log, return the figures."""
    chosen = read_answers(Path(sheet), Path(answers) if answers else None)
    path = curated_path(task, directory)
    entries = load_entries(task, directory)
    by_key = {e.key: e for e in entries}
    rounds = Counter((r["task"], r["key"]) for r in blind_answers(read_log(directory)))
    rows = [dict(e.data) for e in entries]
    index = {r["key"]: i for i, r in enumerate(rows)}
    log_lines, disagreements, skipped = [], [], []
    for key, (letter, options) in chosen.items():
        if key not in by_key:
            raise DataError(sheet, None, "key", f"{key!r} is not an entry of {path}")
        e = by_key[key]
        if e["author"] == reviewer:
            raise DataError(sheet, None, "reviewer", f"{key}: {reviewer} wrote this entry and cannot review it")
        if sorted(options.values()) != sorted(e.options):
            raise DataError(sheet, None, key, "the sheet's options no longer match the entry (it changed since export)")
        if e.reviewed and not overwrite:
            skipped.append(key)
            continue
        text = options[letter]
        row = rows[index[key]]
        row["reviewer"], row["blind_answer"] = reviewer, text
        agreed = text.strip() == e["answer"].strip()
        rounds[(task, key)] += 1
        log_lines.append({"task": task, "key": key, "round": rounds[(task, key)], "reviewer": reviewer,
                          "author": e["author"], "blind_answer": text, "answer": e["answer"], "agreed": agreed})
        if not agreed:
            disagreements.append((key, text, e["answer"], e["rationale"]))
    write_entries(task, rows, path)
    load_entries(task, directory)  # the rewritten file must still validate
    _append_log([{k: r[k] for k in LOG_KEYS} for r in log_lines], directory)
    n = len(log_lines)
    agree = n - len(disagreements)
    return {"task": task, "answered": n, "agreed": agree, "skipped_already_reviewed": skipped, "disagreements": disagreements,
            "rate": agree / n if n else None}


def agreement(directory: str | Path | None = None, tasks=CURATED_TASKS) -> dict[str, dict]:
    """Per task: entries, reviewed now, agreeing now, first-round blind agreement (from the log, so items fixed
    or dropped later still count), open disagreements and open flags (flagged, not yet reopened or dropped)."""
    log = read_log(directory)
    answers = blind_answers(log)
    out = {}
    for task in tasks:
        p = curated_path(task, directory)
        entries = load_entries(task, directory) if p.is_file() else []
        present = {e.key for e in entries}
        first = [r for r in answers if r["task"] == task and r["round"] == 1]
        fa = sum(1 for r in first if r["agreed"])
        open_ = [e.key for e in entries if e.agreed is False]
        flagged: dict[str, str] = {}
        for r in log:  # in log order: a flag opens, a later reopen/drop closes
            if r.get("task") != task or "event" not in r:
                continue
            if r["event"] == "flag":
                flagged[r["key"]] = r["reason"]
            else:
                flagged.pop(r["key"], None)
        reviewed_keys = {r["key"] for r in answers if r["task"] == task}
        out[task] = {
            "entries": len(entries),
            "reviewed": sum(1 for e in entries if e.reviewed),
            "agreed": sum(1 for e in entries if e.agreed),
            "open_disagreements": open_,
            "open_flags": {k: v for k, v in flagged.items() if k in present},
            "first_round": {"answered": len(first), "agreed": fa, "rate": (fa / len(first)) if first else None},
            "dropped_after_review": len(reviewed_keys - present),
            "fixed_or_dropped_after_review": len({r["key"] for r in answers if r["task"] == task and not r["agreed"]}) - len(open_),
        }
    return out


def _set_review(task: str, keys: list[str], *, drop: bool, directory=None) -> int:
    path = curated_path(task, directory)
    entries = load_entries(task, directory)
    have = {e.key for e in entries}
    missing = [k for k in keys if k not in have]
    if missing:
        raise DataError(path, None, "key", f"no such entries: {', '.join(missing)}")
    rows = []
    for e in entries:
        row = dict(e.data)
        if e.key in keys:
            if drop:
                continue
            row["reviewer"], row["blind_answer"] = "", ""
        rows.append(row)
    write_entries(task, rows, path)
    load_entries(task, directory)
    _append_log([{"task": task, "key": k, "event": "drop" if drop else "reopen"} for k in keys], directory)
    return len(keys)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ancientbench.builders.review", description=__doc__.strip().splitlines()[0])
    p.add_argument("--dir", default=None, help="curated folder (default: the package's curated/)")
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="write a blind sheet")
    e.add_argument("task", choices=CURATED_TASKS)
    e.add_argument("--reviewer", required=True)
    e.add_argument("--out", required=True)
    e.add_argument("--all", action="store_true", help="include entries already reviewed")
    e.add_argument("--limit", type=int, default=None)
    i = sub.add_parser("import", help="record a reviewer's blind answers")
    i.add_argument("task", choices=CURATED_TASKS)
    i.add_argument("sheet")
    i.add_argument("--reviewer", required=True)
    i.add_argument("--answers", default=None, help="key<TAB>letter file (else the sheet's 'choice' column)")
    i.add_argument("--overwrite", action="store_true", help="replace existing reviews (a new round)")
    s = sub.add_parser("status", help="agreement per task and open disagreements")
    s.add_argument("tasks", nargs="*", default=list(CURATED_TASKS))
    s.add_argument("--json", action="store_true")
    ra = sub.add_parser("rationale", help="after answering blind: show answers and rationales of the items you reviewed")
    ra.add_argument("task", choices=CURATED_TASKS)
    ra.add_argument("keys", nargs="*")
    ra.add_argument("--reviewer", default=None, help="every entry this reviewer answered")
    f = sub.add_parser("flag", help="record a concern about an entry after reading its rationale")
    f.add_argument("task", choices=CURATED_TASKS)
    f.add_argument("key")
    f.add_argument("--reviewer", required=True)
    f.add_argument("--reason", required=True)
    for name, help_ in (("reopen", "clear the review of fixed entries (back to blind review)"), ("drop", "remove entries")):
        c = sub.add_parser(name, help=help_)
        c.add_argument("task", choices=CURATED_TASKS)
        c.add_argument("keys", nargs="+")
    args = p.parse_args(argv)
    try:
        if args.cmd == "export":
            n = export_sheet(args.task, args.reviewer, args.out, include_reviewed=args.all, limit=args.limit, directory=args.dir)
            print(f"{args.task}: wrote {n} blind items to {args.out} (fill 'choice' with A-D, then run import)")
        elif args.cmd == "import":
            r = import_answers(args.task, args.sheet, args.reviewer, answers=args.answers, directory=args.dir, overwrite=args.overwrite)
            rate = f"{r['rate'] * 100:.1f}%" if r["rate"] is not None else "n/a"
            print(f"{args.task}: {r['answered']} answered blind by {args.reviewer}, {r['agreed']} agree ({rate})")
            if r["skipped_already_reviewed"]:
                print(f"  skipped {len(r['skipped_already_reviewed'])} already reviewed (use --overwrite for a new round)")
            for key, got, want, why in r["disagreements"]:
                print(f"  DISAGREE {key}: reviewer chose {got!r}, author's answer {want!r} — {why}")
            print("  now read the rationales of the answered items (python -m ancientbench.builders.review rationale ...)"
                  " and flag any item with two defensible options, a giveaway or a defective context")
        elif args.cmd == "status":
            figs = agreement(args.dir, tuple(args.tasks))
            if args.json:
                print(json.dumps(figs, ensure_ascii=False, indent=1))
            for task, f in figs.items():
                fr = f["first_round"]
                rate = f"{fr['rate'] * 100:.1f}%" if fr["rate"] is not None else "n/a"
                print(f"{task}: {f['entries']} entries, reviewed {f['reviewed']}, agreeing {f['agreed']}; first-round blind "
                      f"agreement {fr['agreed']}/{fr['answered']} ({rate}); fixed or dropped after review "
                      f"{f['fixed_or_dropped_after_review']}; reviewed then dropped {f['dropped_after_review']}; "
                      f"open disagreements {len(f['open_disagreements'])}; open flags {len(f['open_flags'])}")
                for key in f["open_disagreements"]:
                    print(f"  fix or drop (disagreement): {task} {key}")
                for key, why in f["open_flags"].items():
                    print(f"  fix or drop (flag): {task} {key} — {why}")
        elif args.cmd == "flag":
            flag(args.task, args.key, args.reviewer, args.reason, directory=args.dir)
            print(f"{args.task}: flagged {args.key}")
        elif args.cmd == "rationale":
            for e in load_entries(args.task, args.dir):
                if e.key in set(args.keys) or (args.reviewer and e["reviewer"] == args.reviewer):
                    print(f"{e.key}\t{e['answer']}\t{e['rationale']}\t{e['citation']}")
        else:
            n = _set_review(args.task, args.keys, drop=args.cmd == "drop", directory=args.dir)
            print(f"{args.task}: {args.cmd} {n} entries")
    except DataError as err:
        print(f"error: {err}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
