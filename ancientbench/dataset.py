"""Reading question sets for evaluation: the bundled dataset folder, another folder, or a JSONL file.

- ``load_task(task, split="test", data=None)``: one config's split from a dataset folder (default: the
  bundled ``DATASET_PATH``) or, for ``split="test"``, the task's rows of a JSONL question file.
- ``load_questions(tasks, data, shots)``: what an evaluation run reads - per task the test items and the
  dev exemplars, the files used and their sha256. Few-shot exemplars come from the ``dev`` split of the same
  folder; for a JSONL question set, from the ``dev`` split of the bundled dataset (or of ``fewshot_data``,
  a folder or a JSONL of dev rows, when given). The first k dev rows, in file order, are the k shots.
- user tasks (``tasks`` entries that are paths): a JSONL of rows whose ``task`` is outside the ten, or a folder with
  ``test.jsonl`` and ``dev.jsonl`` (the exemplars; a k > 0 setting without one is an error). Scored like the ten,
  reported apart (:data:`ancientbench.tasks.USER_TASK_NOTE`).
- ``cache_dataset()``: loads all ten configs through ``datasets.load_dataset(DATASET_PATH, cfg)`` so that
  ``load_dataset("ancientbench", cfg)`` then works by name from the local datasets cache (offline too).

Every row goes through the schema validator (:mod:`ancientbench.schema`); ids are unique across the whole
question set (every task's test file of a folder, selected or not; the dev files read; one JSONL file), since
predictions are keyed by id.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Sequence

from .errors import AncientBenchError
from .paths import DATASET_PATH
from .schema import (
    FIELDS,
    DataError,
    load_question_file,
    load_split,
    load_user_file,
    option_key,
    read_jsonl,
    reject_duplicate_ids,
    split_file,
)
from .tasks import COMPETENCY_TASKS, TASK_BY_NAME, TASK_NAMES, get_task, resolve_tasks


class DataNotFoundError(AncientBenchError, FileNotFoundError):
    """The dataset folder or question file given does not exist."""


class DataOptionError(AncientBenchError, ValueError):
    """A question-set option (``limit``) with a value it cannot take."""


def default_data() -> Path:
    return Path(DATASET_PATH)


def _is_jsonl(data: str | Path) -> bool:
    return Path(data).is_file()


def load_task(task: str, split: str = "test", data: str | Path | None = None) -> list[dict[str, str]]:
    """Validated rows of one task's split, from a dataset folder (default: bundled) or a JSONL question file."""
    get_task(task)
    data = Path(data) if data is not None else default_data()
    if _is_jsonl(data):
        if split != "test":
            raise DataError(data, None, None, f"a single question file has no {split!r} split")
        return load_question_file(data).get(task, [])
    return load_split(data, task, split)


def count_items(split: str = "test", data: str | Path | None = None) -> int:
    """Items of one split over every task of a dataset folder (default: the bundled one), by counting rows without
    parsing them (cheap enough for a ``--help`` text; equal to ``len(load_split(...))`` summed, which a test checks)."""
    root = Path(data) if data is not None else default_data()
    files = [split_file(root, t, split) for t in TASK_NAMES]
    return sum(len(f.read_bytes().removeprefix(b"\xef\xbb\xbf").rstrip().split(b"\n")) for f in files if f.is_file() and f.stat().st_size)


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class QuestionSet:
    """The test items and dev exemplars of an evaluation run, with the files they came from."""

    data_path: str
    items: dict[str, list[dict[str, str]]]  # task -> test items, registry order
    exemplars: dict[str, list[dict[str, str]]]  # task -> dev rows (all of them; the first k are the k shots)
    files_sha256: dict[str, str] = field(default_factory=dict)  # test files: path (relative to the data folder) -> sha
    dev_files_sha256: dict[str, str] = field(default_factory=dict)  # exemplar files read for few-shot settings
    missing_tasks: list[str] = field(default_factory=list)  # tasks asked for (implicitly) but without test data
    limit: int | None = None  # items per task kept (the first ``limit``), None = all
    n_available: dict[str, int] = field(default_factory=dict)  # task -> test items in the file before ``limit``
    user_tasks: tuple[str, ...] = ()  # tasks read from --tasks paths (after the ten in ``items``), reported apart

    @property
    def n_items(self) -> int:
        return sum(len(v) for v in self.items.values())

    def files_for(self, shots: int) -> dict[str, str]:
        """The files a setting reads: the test files, plus the exemplar files when ``shots > 0``."""
        return dict(sorted({**self.files_sha256, **(self.dev_files_sha256 if shots else {})}.items()))


def _rel(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def _folder_ids(folder: Path, loaded: dict[str, list[dict[str, str]]]):
    """(file, rows) of every task's test file in a dataset folder: the loaded rows, else just the ids read."""
    for t in TASK_NAMES:
        path = split_file(folder, t, "test")
        if t in loaded:
            yield path, loaded[t]
        elif path.is_file():
            yield path, [r for r in read_jsonl(path) if isinstance(r, dict) and isinstance(r.get("id"), str)]


def _set_ids(data: Path, loaded: dict[str, list[dict[str, str]]]):
    """(file, rows) of the question set the ids of user tasks must not repeat: a folder's every test file, or the
    JSONL file."""
    return _folder_ids(data, loaded) if not _is_jsonl(data) else [(data, [r for rows in load_question_file(data).values()
                                                                           for r in rows])]


def _content(row: dict[str, str]) -> tuple[str, tuple[str, ...]]:
    """What makes two rows one question: the question and the set of options (order aside), compared as options are."""
    return option_key(row["question"]), tuple(sorted(option_key(row[x]) for x in "ABCD"))


def _refuse_copied_items(items, exemplars, k: int, dev_source: Path, dev_paths: dict[str, Path]) -> None:
    """An exemplar that is a test item under another id would show that item with its answer in its own prompt."""
    test = {_content(it): it["id"] for rows in items.values() for it in rows}
    for t, rows in exemplars.items():
        for e in rows[:k]:
            if _content(e) in test:
                path = dev_paths.get(t) or (dev_source if _is_jsonl(dev_source) else split_file(dev_source, t, "dev"))
                row = next(n for n, r in enumerate(read_jsonl(path), 1) if isinstance(r, dict) and r.get("id") == e["id"])
                raise DataError(path, row, None, f"exemplar {e['id']!r} is test item {test[_content(e)]!r} under another "
                                                 f"id (same question and options): it would show the item with its "
                                                 f"answer in its own prompt; remove it from the exemplars")


def is_user_source(spec: str | Path) -> bool:
    """Whether a ``--tasks`` entry is a user task's question file or folder (a path) rather than a task, a competency
    or ``all``: a ``Path``, or a name that exists, ends in .jsonl/.json, or holds a path separator."""
    if isinstance(spec, Path):
        return True
    if spec == "all" or spec.startswith("competency:") or spec in TASK_BY_NAME or spec in COMPETENCY_TASKS:
        return False
    return Path(spec).exists() or spec.endswith(_FILE_SUFFIXES) or "/" in spec or os.sep in spec


@dataclass
class UserTasks:
    """The user tasks of a run, read from their files: test items and exemplars by task, the files and their sha256."""

    items: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    exemplars: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    test_files: list[tuple[Path, list[dict[str, str]]]] = field(default_factory=list)
    dev_paths: dict[str, Path] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    dev_files: dict[str, str] = field(default_factory=dict)


def load_user_tasks(sources: Sequence[str | Path], shots: int, base: Path) -> UserTasks:
    """Read each user task's source (a JSONL file, or a folder with test.jsonl and dev.jsonl); ``shots``: the largest
    k of the run, whose exemplars come from the dev file (none there for k > 0 is an error, not a zero-shot run)."""
    out = UserTasks()
    for spec in sources:
        src = Path(spec)
        if not src.exists():
            raise DataNotFoundError(f"--tasks {spec}: no such question file or folder (a user task is a JSONL file, "
                                    "or a folder with test.jsonl and dev.jsonl)")
        test, dev = (src / "test.jsonl", src / "dev.jsonl") if src.is_dir() else (src, None)
        if not test.is_file():
            raise DataError(test, None, None, "missing file: a user task's folder holds test.jsonl (and dev.jsonl)")
        grouped = load_user_file(test)
        for name in grouped:
            if name in out.items:
                raise DataError(test, None, "task", f"user task {name!r} is read from two --tasks paths")
        out.items.update(grouped)
        out.test_files.append((test, [r for rows in grouped.values() for r in rows]))
        out.files[_rel(test, base)] = file_sha256(test)
        if shots:
            _user_exemplars(out, grouped, dev, shots, base)
    return out


def _user_exemplars(out: UserTasks, grouped: dict, dev: Path | None, shots: int, base: Path) -> None:
    """A user source's dev rows, by task: at least ``shots`` for each of its tasks, none of another task."""
    names = ", ".join(repr(n) for n in grouped)
    if dev is None or not dev.is_file():
        raise DataError(dev or out.test_files[-1][0], None, None,
                        f"{shots}-shot needs dev rows of user task {names}: give a folder with test.jsonl and dev.jsonl "
                        "(docs/evaluation.md), or run --shots 0")
    rows = load_user_file(dev)
    for name in rows:
        if name not in grouped:
            raise DataError(dev, None, "task", f"dev rows of user task {name!r}, which the test file beside it lacks")
    for name in grouped:
        have = rows.get(name, [])
        if len(have) < shots:
            raise DataError(dev, None, None, f"{shots}-shot needs {shots} dev rows of user task {name!r}; "
                                             f"this file has {len(have)}")
        out.exemplars[name], out.dev_paths[name] = have, dev
    out.dev_files[_rel(dev, base)] = file_sha256(dev)


def load_questions(
    tasks: Sequence[str] | None = None,
    data: str | Path | None = None,
    *,
    shots: Sequence[int] = (0,),
    fewshot_data: str | Path | None = None,
    limit: int | None = None,
) -> QuestionSet:
    """Test items (first ``limit`` per task) and dev exemplars for the tasks of a run.

    Task selection: ``tasks=None``/``["all"]`` means every task that has test data - tasks without a test file
    are skipped and listed in ``missing_tasks`` (a warning is issued; results then say ``complete: false``);
    a task named explicitly (or through its competency) without data is an error naming the missing file.
    An entry that is a path names a user task's file or folder (:func:`load_user_tasks`); given alone, only user tasks run.
    """
    names = [t for t in tasks or () if not is_user_source(t)]
    user_sources = [t for t in tasks or () if is_user_source(t)]
    implicit = not names or names == ["all"]
    wanted = resolve_tasks(names) if names or not user_sources else ()
    data_path = Path(data) if data is not None else default_data()
    if not data_path.exists():
        raise DataNotFoundError(f"--data {data_path}: no such dataset folder or JSONL file")
    need_dev = max(shots, default=0) > 0
    user = load_user_tasks(user_sources, max(shots, default=0), data_path if data_path.is_dir() else data_path.parent)
    files: dict[str, str] = {}
    dev_files: dict[str, str] = {}
    items: dict[str, list[dict[str, str]]] = {}
    missing: list[str] = []

    if _is_jsonl(data_path):
        grouped = load_question_file(data_path)
        files[data_path.name] = file_sha256(data_path)
        base = data_path.parent
        for t in wanted:
            if t in grouped:
                items[t] = grouped[t]
            elif not implicit:
                raise DataError(data_path, None, "task", f"no rows of task {t!r} in this question file")
        dev_source = Path(fewshot_data) if fewshot_data is not None else default_data()
    else:
        base = data_path
        for t in wanted:
            path = split_file(data_path, t, "test")
            if not path.is_file():
                if implicit:
                    missing.append(t)
                    continue
                raise DataError(path, None, None, f"missing file: no test split for task {t!r} in {data_path}")
            items[t] = load_split(data_path, t, "test")
            if not items[t]:  # an empty file would score nothing and still write a normal-looking results file
                raise DataError(path, None, None, f"empty test split: no items of task {t!r}")
            files[_rel(path, base)] = file_sha256(path)
        # one id in two task files would make one record overwrite the other in predictions and resume (also
        # across runs of different --tasks into one output), so ids are checked over every test file of the folder
        reject_duplicate_ids(_folder_ids(data_path, items))
        dev_source = Path(fewshot_data) if fewshot_data is not None else data_path
    if user.items:  # predictions are keyed by id: a user item must not share one with the question set's
        reject_duplicate_ids(chain(_set_ids(data_path, items), user.test_files))
        items.update(user.items)
        files.update(user.files)
        dev_files.update(user.dev_files)
    if missing:
        warnings.warn(f"no test data for task(s) {', '.join(missing)} in {data_path}; scoring the others", stacklevel=2)
    if not items:
        raise DataError(data_path, None, None, "no test items for the selected tasks")
    n_available = {t: len(rows) for t, rows in items.items()}
    if limit is not None:
        if limit < 1:
            raise DataOptionError(f"limit must be >= 1, got {limit}")
        items = {t: rows[:limit] for t, rows in items.items()}

    exemplars: dict[str, list[dict[str, str]]] = {}
    if need_dev:
        exemplars = _exemplars(items, user, dev_source, base, max(shots), dev_files)
    return QuestionSet(
        str(data_path), items, exemplars, dict(sorted(files.items())), dict(sorted(dev_files.items())), missing, limit,
        n_available, tuple(user.items),
    )


def _exemplars(items: dict[str, list[dict[str, str]]], user: UserTasks, dev_source: Path, base: Path, k: int,
               dev_files: dict[str, str]) -> dict[str, list[dict[str, str]]]:
    """Every task's dev rows for a run of up to ``k`` shots (the ten's from ``dev_source``, a user task's from its own
    dev file), checked: at least ``k`` each, none of the first ``k`` a test item; the files read go into ``dev_files``."""
    exemplars: dict[str, list[dict[str, str]]] = {}
    ten = [t for t in items if t not in user.items]
    if _is_jsonl(dev_source):
        grouped_dev = load_question_file(dev_source)
        dev_files[_rel(dev_source, base)] = file_sha256(dev_source)
        for t in ten:
            exemplars[t] = grouped_dev.get(t, [])
    elif ten:
        for t in ten:
            path = split_file(dev_source, t, "dev")
            exemplars[t] = load_split(dev_source, t, "dev")
            dev_files[_rel(path, base)] = file_sha256(path)
        reject_duplicate_ids((split_file(dev_source, t, "dev"), rows) for t, rows in exemplars.items())
    exemplars.update(user.exemplars)
    short = {t: len(rows) for t, rows in exemplars.items() if len(rows) < k}
    if short:
        detail = ", ".join(f"{t}: {n}" for t, n in short.items())
        raise DataError(dev_source, None, None, f"{k}-shot needs {k} dev rows per task; too few in {detail}")
    test_ids = {it["id"] for rows in items.values() for it in rows}
    for t, rows in exemplars.items():
        leaked = [r["id"] for r in rows[:k] if r["id"] in test_ids]
        if leaked:
            raise DataError(user.dev_paths.get(t, dev_source), None, "id", f"dev exemplar(s) {leaked} of task {t!r} are also test items")
    _refuse_copied_items(items, exemplars, k, dev_source, user.dev_paths)
    return exemplars


def cache_dataset(
    path: str | Path | None = None, configs: Sequence[str] | None = None, cache_dir: str | Path | None = None
) -> dict:
    """Load every config once with ``datasets.load_dataset`` so ``load_dataset("ancientbench", cfg)`` works by name.

    The datasets cache keys a local folder by its name and its card's YAML (which records each data file's
    sha256), and the bundled folder is named ``ancientbench``; after this call ``load_dataset("ancientbench", cfg)``
    finds the cached copy from any directory, offline too (pass the same ``cache_dir`` if you give one). A cached
    copy whose rows differ from the files (another folder with the same card wrote it) is rebuilt, with a warning.
    Returns ``{config: DatasetDict}``; configs the card does not list or whose files are absent are skipped with a
    warning (``"all"``, every task in one config, is taken when asked for and listed).
    """
    from datasets import get_dataset_config_names  # lazy: datasets takes seconds to import

    path = Path(path) if path is not None else default_data()
    declared = set(get_dataset_config_names(str(path)))  # the configs the dataset card lists
    out = {}
    for cfg in configs or TASK_NAMES:
        has_data = cfg == "all" or split_file(path, cfg, "test").is_file()
        if cfg not in declared or not has_data:
            warnings.warn(f"config {cfg!r} is not in the card of {path} or has no data there; not cached", stacklevel=2)
            continue
        out[cfg] = load_checked(path, cfg, cache_dir)
    return out


def load_checked(path: str | Path, config: str, cache_dir: str | Path | None = None):
    """``load_dataset(path, config)``, rebuilt from the files when the cached copy's rows are not the files' rows."""
    from datasets import load_dataset_builder  # lazy: datasets takes seconds to import

    builder = load_dataset_builder(str(path), config, cache_dir=str(cache_dir) if cache_dir is not None else None)
    builder.download_and_prepare()
    ds = builder.as_dataset()
    files = builder.config.data_files  # resolved: split -> the files in card order
    if any(ds[s].to_list() != [r for f in files[s] for r in read_jsonl(f)] for s in ds):
        warnings.warn(f"the datasets cache of {path} config {config!r} held other rows than its files; rebuilt it", stacklevel=2)
        builder.download_and_prepare(download_mode="force_redownload")
        ds = builder.as_dataset()
    return ds


HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")  # a Hub dataset id (or a registered bare name)
_FILE_SUFFIXES = (".jsonl", ".json")  # a missing question file is a typo, not a Hub id


@contextmanager
def data_source(data):
    """``(path, label, fewshot)`` for what ``evaluate_model(data=...)`` was given, as :func:`load_questions` reads it.

    A path (folder or JSONL) is used as it is (label None). What Hugging Face users hold is written to a
    temporary dataset folder for the duration: a ``datasets.DatasetDict`` (its ``test`` split, and ``dev`` when
    present), a ``datasets.Dataset`` (test rows, like a JSONL question file) or a Hub id / registered name, loaded
    with ``load_dataset(id, "all")``. Rows keep the schema's column order, so the shipped data written back is
    byte-identical and records the same file hashes. The label says what the data was in the results;
    ``fewshot`` is the bundled dataset for a DatasetDict without ``dev`` (as for a question file), else None.
    """
    if data is None or isinstance(data, Path) or (isinstance(data, str) and (
            Path(data).exists() or not HUB_ID.match(data) or data.endswith(_FILE_SUFFIXES))):
        yield data, None, None
        return
    label = None
    if isinstance(data, str):
        label, data = data, _load_hub(data)
    kind = type(data).__name__
    if kind not in ("Dataset", "DatasetDict") or not type(data).__module__.startswith("datasets"):
        raise DataOptionError(f"data: expected a path, a Hub id, a datasets.Dataset or a datasets.DatasetDict, got {kind}")
    with tempfile.TemporaryDirectory(prefix="ancientbench-data-") as tmp:
        fewshot = default_data() if kind == "DatasetDict" and "dev" not in data else None
        yield _write_hf(data, Path(tmp)), label or f"datasets.{kind}", fewshot


def _load_hub(name: str):
    import datasets  # lazy: heavy, and only for a Hub id

    try:
        return datasets.load_dataset(name, "all")
    except Exception as err:  # offline, unknown id, no such config: one line naming the id
        why = f"{type(err).__name__}: {str(err).splitlines()[0]}" if str(err) else type(err).__name__
        raise DataNotFoundError(f"--data {name}: no such dataset folder or JSONL file, and no Hugging Face dataset of that "
                                f"id could be loaded (load_dataset({name!r}, 'all'): {why})") from None


def _write_hf(data, root: Path) -> Path:
    """Write a Dataset (one JSONL question file) or a DatasetDict (a dataset folder) under ``root``."""
    def dump(path: Path, rows) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                ordered = {**{f: row[f] for f in FIELDS if f in row}, **row}
                fh.write(json.dumps(ordered, ensure_ascii=False) + "\n")

    if type(data).__name__ == "Dataset":
        dump(root / "questions.jsonl", data.to_list())
        return root / "questions.jsonl"
    unknown = sorted(set(data) - {"test", "dev"})
    if "test" not in data or unknown:
        raise DataOptionError(f"data: a DatasetDict needs a 'test' split (and optionally 'dev'); it has {sorted(data)}")
    for split in data:
        by_task: dict[str, list[dict]] = {}
        for row in data[split].to_list():
            if not isinstance(row.get("task"), str) or row["task"] not in TASK_NAMES:
                raise DataError(f"datasets.DatasetDict[{split!r}]", None, "task", f"not a task name: {row.get('task')!r}")
            by_task.setdefault(row["task"], []).append(row)
        for task, rows in by_task.items():
            dump(split_file(root, task, split), rows)
    return root
