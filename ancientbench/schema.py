"""The one item schema shared by all ten configs, its validator, and the readers of dataset files.

A dataset folder holds ``data/<task>/<split>.jsonl`` (splits ``test`` and ``dev``); a question set may
also be a single JSONL file in the same schema. Every reader goes through :func:`validate_rows`, so a bad
row is rejected with an error naming the file, the row (1-based line) and the field.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .errors import AncientBenchError
from .paths import data_file
from .tasks import LETTERS, TASK_NAMES, user_task_problem

# Every row of every config has exactly these string columns, in this order.
FIELDS: tuple[str, ...] = (
    "id",  # stable, unique across the whole benchmark, e.g. "radical-河"
    "task",  # config name (ancientbench.tasks)
    "question",
    "A",
    "B",
    "C",
    "D",
    "answer",  # the gold letter, one of A B C D
    "subset",  # optional finer label inside a task (e.g. phonetic_loan: excavated / transmitted), else ""
    "source",  # where the answer comes from: package and version, or "team-curated"
    "citation",  # the source record id, or work/chapter, or document and slip
    "explanation",  # why the answer is right (the check or rationale), shown in reports
)
REQUIRED_NONEMPTY: tuple[str, ...] = ("id", "task", "question", "A", "B", "C", "D", "answer", "source")
SPLITS: tuple[str, ...] = ("test", "dev")


class DataError(AncientBenchError, ValueError):
    """A dataset file or row that breaks the schema; the message names file, row and field."""

    def __init__(self, file: str | Path, row: int | None, field: str | None, problem: str):
        self.file, self.row, self.field, self.problem = str(file), row, field, problem
        where = str(file)
        if row is not None:
            where += f", row {row}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {problem}")


def validate_row(row: object, file: str | Path, line: int, *, user: bool = False) -> dict[str, str]:
    """Check one row against the schema and return it with the schema's columns only. ``user``: a user task's file,
    whose ``task`` must name a task outside the ten (:func:`ancientbench.tasks.user_task_problem`)."""
    if not isinstance(row, dict):
        raise DataError(file, line, None, f"expected a JSON object, got {type(row).__name__}")
    for field in FIELDS:
        if field not in row:
            raise DataError(file, line, field, "missing field")
        if not isinstance(row[field], str):
            raise DataError(file, line, field, f"must be a string, got {type(row[field]).__name__}")
    extra_options = sorted(k for k in row if len(k) == 1 and k.isalpha() and k.isupper() and k not in LETTERS)
    if extra_options:
        raise DataError(file, line, extra_options[0], "not exactly four options: only A, B, C, D are allowed")
    for field in REQUIRED_NONEMPTY:
        what = "empty question" if field == "question" else "empty value"
        if not row[field].strip():
            raise DataError(file, line, field, what)
        if not visible(row[field]):
            raise DataError(file, line, field, f"{what}: nothing is left once format characters (zero-width spaces, "
                                               "joiners, byte-order marks), control characters and spaces are removed")
    if user and user_task_problem(row["task"]) is not None:
        raise DataError(file, line, "task", user_task_problem(row["task"]))
    if not user and row["task"] not in TASK_NAMES:
        raise DataError(file, line, "task", f"unknown task {row['task']!r}; valid: {', '.join(TASK_NAMES)} "
                                            "(a task of your own: pass its file to --tasks, docs/evaluation.md)")
    if row["answer"] not in LETTERS:
        raise DataError(file, line, "answer", f"answer must be one of A, B, C, D, got {row['answer']!r}")
    seen: dict[str, str] = {}
    for letter in LETTERS:
        opt = option_key(row[letter])
        if opt in seen:
            raise DataError(file, line, letter, f"duplicate option: same text as option {seen[opt]} ({row[letter].strip()!r}) "
                                                "once Unicode-normalised (NFKC, format characters such as zero-width spaces removed)")
        seen[opt] = letter
    return {f: row[f] for f in FIELDS}


def option_key(text: str) -> str:
    """What two options must not share: the text NFKC-normalised (豈 U+F900 = 豈 U+8C48, é = e + U+0301), with
    format characters (zero-width spaces and joiners, Cf) removed and outer whitespace stripped."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if unicodedata.category(ch) != "Cf").strip()


def visible(text: str) -> str:
    """What a reader sees of ``text``: NFKC, without format (Cf), control (Cc) and space-separator (Z*) characters
    (private-use and unassigned code points stay: rare characters are written with them)."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text)
                   if unicodedata.category(ch) not in ("Cf", "Cc") and unicodedata.category(ch)[0] != "Z")


class DuplicateKey(ValueError):
    """A key repeated in one JSON object (``.key``), raised by :func:`no_duplicate_keys`."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    """``json.loads`` hook: a key repeated in one object is an error (JSON would silently keep the last)."""
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise DuplicateKey(k)
        out[k] = v
    return out


def validate_rows(rows: Iterable[object], file: str | Path, *, task: str | None = None,
                  user: bool = False) -> list[dict[str, str]]:
    """Validate rows (in file order) and reject duplicate ids and, when ``task`` is given, rows of another task."""
    out: list[dict[str, str]] = []
    ids: dict[str, int] = {}
    for line, row in enumerate(rows, start=1):
        item = validate_row(row, file, line, user=user)
        if task is not None and item["task"] != task:
            raise DataError(file, line, "task", f"row of task {item['task']!r} in the file of task {task!r}")
        if item["id"] in ids:
            raise DataError(file, line, "id", f"duplicate id {item['id']!r} (first at row {ids[item['id']]})")
        ids[item["id"]] = line
        out.append(item)
    return out


def not_utf8(err: UnicodeDecodeError, *, of_line: bool = False) -> str:
    """The one wording of a decoding error: the first bad byte, counted from 1, and what to do."""
    where = " of the line" if of_line else ""
    return f"not UTF-8 (byte {err.start + 1}{where} is 0x{err.object[err.start]:02x}); save the file as UTF-8"


def read_jsonl(path: str | Path) -> list[object]:
    """Parse a UTF-8 JSONL file (a leading BOM and trailing blank lines are accepted); any line that is not UTF-8,
    not JSON, holds a lone surrogate, or is blank between rows raises a DataError naming the file and line."""
    path = Path(path)
    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    elif raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise DataError(path, 1, None, "UTF-16 text (byte-order mark found); save the file as UTF-8")
    lines = raw.split(b"\n")
    while lines and not lines[-1].strip():
        lines.pop()  # trailing newline(s) at the end of the file
    rows: list[object] = []
    for line_no, line in enumerate(lines, start=1):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DataError(path, line_no, None, not_utf8(e, of_line=True)) from None
        if not text.strip():
            raise DataError(path, line_no, None, "empty line between rows")
        try:
            row = json.loads(text, object_pairs_hook=no_duplicate_keys)
        except DuplicateKey as e:
            raise DataError(path, line_no, e.key, "key appears twice in the row (which one is meant?)") from None
        except json.JSONDecodeError as e:
            raise DataError(path, line_no, None, f"not valid JSON: {e.msg} (column {e.colno})") from None
        except RecursionError:
            raise DataError(path, line_no, None, "not valid JSON: nested too deeply") from None
        bad = _lone_surrogate(row)
        if bad is not None:
            raise DataError(path, line_no, bad, "contains a lone surrogate (\\ud800-\\udfff escape): not valid Unicode text")
        rows.append(row)
    return rows


_SURROGATE = re.compile("[\ud800-\udfff]")  # one lone UTF-16 surrogate


def _lone_surrogate(row: object) -> str | None:
    """The field of a parsed row whose text holds a lone UTF-16 surrogate (json accepts "\\ud800"), or None."""
    if isinstance(row, dict):
        for k, v in row.items():
            if isinstance(v, str) and _SURROGATE.search(v):
                return str(k)
    return None


def reject_duplicate_ids(files: Iterable[tuple[str | Path, Sequence[Mapping[str, str]]]]) -> None:
    """Ids must be unique across a whole question set (every task file of a folder, or one mixed file): two
    rows with one id would overwrite each other in predictions and resume."""
    seen: dict[str, tuple[str, int]] = {}
    for path, rows in files:
        for row_no, row in enumerate(rows, start=1):
            prev = seen.get(row["id"])
            if prev is not None:
                raise DataError(
                    path, row_no, "id",
                    f"duplicate id {row['id']!r}: also {prev[0]}, row {prev[1]}; ids must be unique across the whole question set",
                )
            seen[row["id"]] = (str(path), row_no)


def write_jsonl(path: str | Path, rows: Iterable[dict]) -> None:
    """Write rows in schema column order, UTF-8, one object per line: byte-identical for identical rows."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps({f: row[f] for f in FIELDS}, ensure_ascii=False) + "\n")


def split_file(folder: str | Path, task: str, split: str) -> Path:
    """Path of one config's split inside a dataset folder."""
    return data_file(folder, task, split)


def load_split(folder: str | Path, task: str, split: str) -> list[dict[str, str]]:
    """Read and validate one config's split from a dataset folder."""
    path = split_file(folder, task, split)
    if not path.is_file():
        raise DataError(path, None, None, f"missing file: no {split} split for task {task!r} in {folder}")
    return validate_rows(read_jsonl(path), path, task=task)


def read_config(folder: str | Path, config: str, split: str) -> list[dict[str, str]]:
    """One split of a config, validated; ``[]`` when the folder has no such file. Variant configs
    (``radical_shuowen``) are checked as rows of any task, since their rows keep the base task's name."""
    path = split_file(folder, config, split)
    if not path.is_file():
        return []
    return validate_rows(read_jsonl(path), path, task=config if config in TASK_NAMES else None)


def load_question_file(path: str | Path) -> dict[str, list[dict[str, str]]]:
    """Read a JSONL question set in the shared schema (any mix of tasks), grouped by task in registry order."""
    items = validate_rows(read_jsonl(path), path)
    grouped: dict[str, list[dict[str, str]]] = {}
    for t in TASK_NAMES:
        rows = [it for it in items if it["task"] == t]
        if rows:
            grouped[t] = rows
    return grouped


def load_user_file(path: str | Path) -> dict[str, list[dict[str, str]]]:
    """Read a user task's JSONL (rows of one or more tasks outside the ten, the shared schema), grouped by task in
    file order; an empty file is an error."""
    items = validate_rows(read_jsonl(path), path, user=True)
    if not items:
        raise DataError(path, None, None, "empty question file: no items of a user task")
    grouped: dict[str, list[dict[str, str]]] = {}
    for it in items:
        grouped.setdefault(it["task"], []).append(it)
    return grouped
