"""The team-curated source files (``records/curated/<task>.jsonl``): the shared format, reader, validator, writer.

Generic over the hand-written tasks (``translation``, ``phonetic_loan``, ``excdoc_word``; ``kind="curated"`` on
their rows): one JSON object per line, ``ensure_ascii=False``, keys in the fixed order of the task's
:class:`Format` (its ``FORMAT``, in the task's own builder module, with its own checks) so that diffs stay
readable. Every entry has

* ``key`` — unique, stable ascii slug (``[a-z0-9][a-z0-9._-]*``), used in the item id;
* ``citation`` — work and chapter, or document and slip/column;
* ``context`` — for transmitted texts verbatim from npm ``chinese-poetry`` in that corpus's own script;
  for excavated texts the short passage as commonly cited in the scholarship;
* ``answer``, ``distractors`` (a list of three), ``rationale`` (one line);
* ``author``, ``reviewer``, ``blind_answer`` (the option text the reviewer chose blind; "" until reviewed);

plus what each task's ``FORMAT`` adds: translation ``book`` and ``errors`` (per distractor its misreadings
joined by ``+``); phonetic_loan ``kind`` and ``loan`` (the written graph; ``answer`` is the intended graph,
本字); excdoc_word ``document``, ``word`` and ``gloss`` (an id of ``excdoc_glossary.jsonl``) in place of
``answer``/``distractors``/``rationale``, which its ``resolve`` fills in from the glossary on load.

:func:`load_entries` rejects a malformed file with a :class:`~ancientbench.schema.DataError` naming the
file, the line and the field: missing or unknown key, keys out of order, wrong types, empty values, a
duplicate key, a distractor equal to the answer, duplicate options, a bad ``kind`` or error label, a
loan/word absent from its context, a blind answer that is not an option, and an answer that stands out
by its length (:func:`length_giveaway`). ``python -m ancientbench.builders.curated [TASK …]`` validates the
files and prints counts; ``--format`` rewrites them in canonical key order.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from ..paths import CURATED_DIR, record
from ..quality.audit import corpus_frequencies, self_frequencies
from ..schema import DataError
from ..sources.classics import converter, to_traditional
from ..tasks import CURATED_TASKS
from .common import BuildResult, Candidate, length_giveaway, split_dev_test
from .debias import trim_to_bound

SOURCE = "AncientBench team-curated"
LIST_FIELDS = {"distractors", "errors"}
MAY_BE_EMPTY = {"reviewer", "blind_answer"}
KEY_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")



def _no_change(obj: dict, file: str | Path, line: int) -> dict:
    return obj


@dataclass(frozen=True)
class Format:
    """A curated task's file, as its builder module declares it (``FORMAT``): the keys in order, a ``resolve`` step
    run before the shared option checks (may fill fields), its own ``check`` run after them (raises DataError),
    what makes two entries one question, and the extra counts its summary line prints."""

    keys: tuple[str, ...]
    resolve: Callable[[dict, str | Path, int], dict] = _no_change
    check: Callable[[dict, str | Path, int], None] = lambda obj, file, line: None
    identity: Callable[[dict], tuple] = lambda data: (data["context"],)
    counts: Callable[[list], str] = lambda entries: ""


def format_of(task: str) -> Format:
    """The ``FORMAT`` of a curated task's builder module (found by name, as ``ancientbench build`` finds builders)."""
    if task not in CURATED_TASKS:
        raise ValueError(f"{task!r} is not a curated task; curated tasks: {', '.join(CURATED_TASKS)}")
    return importlib.import_module(f"{__package__}.{task}").FORMAT


@dataclass(frozen=True)
class Entry:
    """One validated curated entry, with where it came from."""

    task: str
    file: str
    line: int
    data: dict

    def __getitem__(self, name: str):
        return self.data[name]

    @property
    def key(self) -> str:
        return self.data["key"]

    @property
    def options(self) -> list[str]:
        return [self.data["answer"], *self.data["distractors"]]

    @property
    def reviewed(self) -> bool:
        return bool(self.data["reviewer"]) and bool(self.data["blind_answer"])

    @property
    def agreed(self) -> bool | None:
        """True/False once reviewed blind (did the reviewer pick the answer?), None before."""
        if not self.reviewed:
            return None
        return self.data["blind_answer"].strip() == self.data["answer"].strip()


def curated_path(task: str, directory: str | Path | None = None) -> Path:
    if task not in CURATED_TASKS:
        raise ValueError(f"{task!r} is not a curated task; curated tasks: {', '.join(CURATED_TASKS)}")
    return Path(directory) / f"{task}.jsonl" if directory else record(CURATED_DIR) / f"{task}.jsonl"



def validate_entry(task: str, obj: object, file: str | Path, line: int, *, check_order: bool = True) -> dict:
    """Check one parsed line of ``<task>.jsonl``; return it (a dict) or raise DataError(file, line, field)."""
    if not isinstance(obj, dict):
        raise DataError(file, line, None, f"expected a JSON object, got {type(obj).__name__}")
    fmt = format_of(task)
    order = fmt.keys
    for name in order:
        if name not in obj:
            raise DataError(file, line, name, "missing key")
    unknown = [k for k in obj if k not in order]
    if unknown:
        raise DataError(file, line, unknown[0], f"unknown key for {task} (allowed: {', '.join(order)})")
    if check_order and tuple(obj) != order:
        raise DataError(file, line, None, f"keys out of order; expected {', '.join(order)} "
                        f"(fix with: python -m ancientbench.builders.curated {task} --format)")
    for name in order:
        value = obj[name]
        if name in LIST_FIELDS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise DataError(file, line, name, f"must be a list of strings, got {type(value).__name__}")
            if len(value) != 3:
                raise DataError(file, line, name, f"must hold exactly 3 entries, got {len(value)}")
            for v in value:
                if not v.strip():
                    raise DataError(file, line, name, "empty entry in list")
            continue
        if not isinstance(value, str):
            raise DataError(file, line, name, f"must be a string, got {type(value).__name__}")
        if name not in MAY_BE_EMPTY and not value.strip():
            raise DataError(file, line, name, "empty context" if name == "context" else "empty value")
        if "\n" in value or "\r" in value:
            raise DataError(file, line, name, "must be a single line")
        if value != value.strip():
            raise DataError(file, line, name, "leading or trailing whitespace")
    if not KEY_RE.match(obj["key"]):
        raise DataError(file, line, "key", f"key {obj['key']!r} is not an ascii slug ([a-z0-9][a-z0-9._-]*)")
    obj = fmt.resolve(obj, file, line)
    answer = obj["answer"]
    for d in obj["distractors"]:
        if d.strip() == answer.strip():
            raise DataError(file, line, "distractors", f"distractor equal to the answer ({answer!r})")
    if len({d.strip() for d in obj["distractors"]}) != 3:
        raise DataError(file, line, "distractors", "duplicate options among the distractors")
    fmt.check(obj, file, line)
    why = length_giveaway(answer, obj["distractors"])
    if why:
        raise DataError(file, line, "answer", f"length giveaway: {why}")
    blind = obj["blind_answer"]
    if blind and blind.strip() not in {o.strip() for o in [answer, *obj["distractors"]]}:
        raise DataError(file, line, "blind_answer", f"blind answer {blind!r} is not one of the four options")
    if bool(blind) != bool(obj["reviewer"]):
        raise DataError(file, line, "reviewer" if blind else "blind_answer", "reviewer and blind_answer are filled together")
    if obj["reviewer"] and obj["reviewer"] == obj["author"]:
        raise DataError(file, line, "reviewer", "the reviewer must not be the author")
    return obj


def parse_lines(path: Path) -> list[tuple[int, object]]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for line_no, text in enumerate(fh, start=1):
            if not text.strip():
                raise DataError(path, line_no, None, "empty line")
            try:
                out.append((line_no, json.loads(text)))
            except json.JSONDecodeError as e:
                raise DataError(path, line_no, None, f"not valid JSON: {e.msg}") from None
    return out


def load_entries(task: str, directory: str | Path | None = None, *, path: str | Path | None = None,
                 check_order: bool = True) -> list[Entry]:
    """Read and validate one curated file (default: records/curated/ of a clone); duplicate keys and options rejected."""
    p = Path(path) if path else curated_path(task, directory)
    if not p.is_file():
        raise DataError(p, None, None, f"missing curated file for task {task!r}")
    entries: list[Entry] = []
    keys: dict[str, int] = {}
    items: dict[tuple, int] = {}
    for line_no, obj in parse_lines(p):
        data = validate_entry(task, obj, p, line_no, check_order=check_order)
        if data["key"] in keys:
            raise DataError(p, line_no, "key", f"duplicate key {data['key']!r} (first at line {keys[data['key']]})")
        keys[data["key"]] = line_no
        ident = item_identity(task, data)
        if ident in items:
            raise DataError(p, line_no, "context", f"duplicate item: same question as line {items[ident]}")
        items[ident] = line_no
        entries.append(Entry(task, str(p), line_no, data))
    return entries


def item_identity(task: str, data: dict) -> tuple:
    """What makes two entries the same question (whatever their keys)."""
    return format_of(task).identity(data)


def canonical(task: str, data: dict) -> dict:
    return {k: data[k] for k in format_of(task).keys}


def dump_line(task: str, data: dict) -> str:
    return json.dumps(canonical(task, data), ensure_ascii=False)


def write_entries(task: str, rows: list[dict], path: str | Path) -> None:
    """Write entries in canonical key order, one per line (what ``--format`` and the review import use)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(dump_line(task, row) + "\n")


# ---- script of an item (questions are worded in the script of their context) -----------------------

def _opencc(config: str):
    return converter(config)


def item_script(text: str) -> str:
    """``simplified`` when the text uses simplified graphs and no traditional ones, else ``traditional``."""
    s2t = _opencc("s2t").convert(text)
    t2s = _opencc("t2s").convert(text)
    simp = sum(1 for a, b in zip(text, s2t) if a != b)
    trad = sum(1 for a, b in zip(text, t2s) if a != b)
    return "simplified" if simp > trad else "traditional"


def in_script(text_traditional: str, script: str) -> str:
    """A fixed piece of question wording in the item's script."""
    return _opencc("t2s").convert(text_traditional) if script == "simplified" else text_traditional


def script_fixes(task: str, directory: str | Path | None = None) -> tuple[Path, dict[tuple[str, str], list[tuple[int, str, str, int]]]]:
    """``<task>_script.tsv`` beside the task's file: the reviewed corrections of the converter's output,
    {(key, field): [(position, converted, correct, line)]} (fields: context, answer, loan, distractor1..3,
    citation; an empty ``correct`` deletes the character, a stray space in the source text)."""
    path = curated_path(task, directory).with_name(f"{task}_script.tsv")
    out: dict = {}
    lines = record(path).read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines[1:], start=2):
        cells = line.split("\t")
        if len(cells) != 6 or not cells[2].isdigit() or len(cells[3]) != 1 or len(cells[4]) > 1:
            raise DataError(path, n, "fix", "expected key, field, position, converted character, correct character "
                            f"(empty: delete it), reason (tab-separated); got {line!r}")
        out.setdefault((cells[0], cells[1]), []).append((int(cells[2]), cells[3], cells[4], n))
    return path, out


def one_script(task: str, entries, fields: dict[str, str], simplified, directory: str | Path | None = None):
    """Items are traditional throughout: each entry for which ``simplified(entry)`` holds (it quotes a book that
    chinese-poetry prints in simplified script) is converted, a ``classical`` field as the corpus converts it
    (OpenCC s2t, :func:`ancientbench.sources.classics.to_traditional`, the forms cloze shows), a ``modern`` one
    with OpenCC s2tw (Taiwan standard forms, those of the entries written in traditional), an ``as written`` one
    (a citation) unchanged; a list field
    (``distractors``) becomes ``distractor1`` … for the fixes. Then the reviewed fixes of ``<task>_script.tsv``
    are applied: a reviewer read every converted entry, and every entry quoting a book converted upstream
    (古文觀止: 餘 for the pronoun 余, 範 for the surname 范), with each graph a conversion could have got wrong
    marked. A fix that does not meet its character, or names no entry, raises."""
    path, fixes = script_fixes(task, directory)
    convert = {"classical": to_traditional, "modern": converter("s2tw").convert, "as written": lambda text: text}
    fixed = {key for key, _ in fixes}
    out, used = [], set()
    for e in entries:
        converting = simplified(e)
        if not converting and e.key not in fixed:
            out.append(e)
            continue
        data = dict(e.data)
        for name, kind in fields.items():
            values = data[name] if isinstance(data[name], list) else [data[name]]
            labels = [f"distractor{i + 1}" for i in range(len(values))] if isinstance(data[name], list) else [name]
            done = []
            for label, value in zip(labels, values):
                chars = list(convert[kind](value) if converting else value)
                for pos, was, right, line in fixes.get((e.key, label), ()):  # "" keeps its slot: positions never shift
                    if pos >= len(chars) or chars[pos] != was:
                        raise DataError(path, line, label, f"{e.key}: expected {was!r} at {pos} of the built {label}")
                    chars[pos] = right
                used.add((e.key, label))
                done.append("".join(chars))
            data[name] = done if isinstance(data[name], list) else done[0]
        if e.data.get("blind_answer") in e.options:  # the reviewer's pick, as the option it was
            data["blind_answer"] = [data["answer"], *data["distractors"]][e.options.index(e.data["blind_answer"])]
        out.append(replace(e, data=data))
    stale = sorted(set(fixes) - used)
    if stale:
        raise DataError(path, fixes[stale[0]][0][3], "key", f"fixes for no entry or field of {task}: {stale[:3]}")
    return out


# ---- turning entries into schema rows (shared by the three builders) ---------------------------------

PRIVATE_USE = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff]")


def has_private_use(*texts: str) -> bool:
    """True when a text holds a Private Use Area code point: a source's stand-in for a rare glyph, which a reader
    sees as a blank or a box (睡虎地 「隸臣妾\ue1ca城旦舂」)."""
    return any(PRIVATE_USE.search(t) for t in texts)


def build_entries(task: str, ctx, question, dev_keys: tuple[str, ...], subset=None, directory: str | Path | None = None,
                  transform=None, trim: float | None = None):
    """BuildResult of a curated task: every entry whose blind review did not disagree becomes a candidate;
    the five ``dev_keys`` go to dev. ``question(entry) -> str``; ``subset(entry) -> str`` (default "");
    ``transform(entries) -> entries`` rewrites them first (translation: one script); with ``trim``, the fewest
    candidates are left out so that every per-item shortcut strategy is at or below it
    (:func:`ancientbench.builders.debias.trim_to_bound`)."""
    entries = load_entries(task, directory)
    if transform is not None:
        entries = transform(entries)
    dropped: Counter = Counter()
    cands = []
    for e in entries:
        if e.agreed is False:  # the reviewer answered differently: the author must fix or drop it first
            dropped["blind review disagreed (awaiting fix)"] += 1
            continue
        if has_private_use(question(e), e["answer"], *e["distractors"]):
            dropped["a private-use code point stands for a glyph (no font shows it)"] += 1
            continue
        cands.append(
            Candidate(
                key=e.key,
                question=question(e),
                answer=e["answer"],
                distractors=tuple(e["distractors"]),
                source=SOURCE,
                citation=e["citation"],
                explanation=e["rationale"],
                subset=subset(e) if subset else "",
            )
        )
    if trim is not None:
        freq = corpus_frequencies(ctx.sources_dir) or self_frequencies([{"question": c.question} for c in cands])
        cands, n = trim_to_bound(task, cands, freq, bound=trim, keep=frozenset(dev_keys))
        dropped["left out to keep every shortcut strategy within the bound"] += n
    dev, test = split_dev_test(task, cands, dev_keys, ctx.seed)
    return BuildResult(task=task, test=test, dev=dev, dropped=dropped, candidates=len(entries))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ancientbench.builders.curated", description=__doc__.strip().splitlines()[0])
    p.add_argument("tasks", nargs="*", default=list(CURATED_TASKS), help="curated tasks to check (default: all)")
    p.add_argument("--dir", default=None, help="folder with <task>.jsonl (default: the package's curated/)")
    p.add_argument("--format", action="store_true", help="rewrite the files with keys in canonical order first")
    args = p.parse_args(argv)
    status = 0
    for task in args.tasks:
        path = curated_path(task, args.dir)
        if not path.is_file():
            print(f"{task}: no file at {path}")
            continue
        try:
            if args.format:
                rows = [validate_entry(task, obj, path, n, check_order=False) for n, obj in parse_lines(path)]
                write_entries(task, rows, path)
            entries = load_entries(task, path=path)
        except DataError as e:
            print(f"error: {e}")
            status = 1
            continue
        reviewed = [e for e in entries if e.reviewed]
        agreed = sum(1 for e in reviewed if e.agreed)
        extra = format_of(task).counts(entries)
        print(f"{task}: {len(entries)} entries ok{extra}; reviewed {len(reviewed)}, agreed {agreed}")
    return status


if __name__ == "__main__":
    sys.exit(main())
