"""Reading question sets for evaluation: the bundled dataset folder, another folder, or a JSONL file.

- ``load_task(task, split="test", data=None)``: one config's split from a dataset folder (default: the
  bundled ``DATASET_PATH``) or, for ``split="test"``, the task's rows of a JSONL question file.
- ``load_questions(tasks, data, shots)``: what an evaluation run reads - per task the test items and the
  dev exemplars, the files used and their sha256. Few-shot exemplars come from the ``dev`` split of the same
  folder; for a JSONL question set, from the ``dev`` split of the bundled dataset (or of ``fewshot_data``,
  a folder or a JSONL of dev rows, when given). The first k dev rows, in file order, are the k shots.
- ``cache_dataset()``: loads all ten configs through ``datasets.load_dataset(DATASET_PATH, cfg)`` so that
  ``load_dataset("ancientbench", cfg)`` then works by name from the local datasets cache (offline too).

Every row goes through the schema validator (:mod:`ancientbench.schema`); ids are unique across the whole
question set (every task's test file of a folder, selected or not; the dev files read; one JSONL file), since
predictions are keyed by id.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .errors import AncientBenchError
from .schema import DataError, load_question_file, load_split, read_jsonl, reject_duplicate_ids, split_file
from .tasks import TASK_NAMES, get_task, resolve_tasks


class DataNotFoundError(AncientBenchError, FileNotFoundError):
    """The dataset folder or question file given does not exist."""


class DataOptionError(AncientBenchError, ValueError):
    """A question-set option (``limit``) with a value it cannot take."""


def default_data() -> Path:
    from . import DATASET_PATH

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
    """
    implicit = not tasks or list(tasks) == ["all"]
    wanted = resolve_tasks(tasks)
    data_path = Path(data) if data is not None else default_data()
    if not data_path.exists():
        raise DataNotFoundError(f"--data {data_path}: no such dataset folder or JSONL file")
    need_dev = max(shots, default=0) > 0
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
        if _is_jsonl(dev_source):
            grouped_dev = load_question_file(dev_source)
            dev_files[_rel(dev_source, base)] = file_sha256(dev_source)
            for t in items:
                exemplars[t] = grouped_dev.get(t, [])
        else:
            for t in items:
                path = split_file(dev_source, t, "dev")
                exemplars[t] = load_split(dev_source, t, "dev")
                dev_files[_rel(path, base)] = file_sha256(path)
            reject_duplicate_ids((split_file(dev_source, t, "dev"), rows) for t, rows in exemplars.items())
        k = max(shots)
        short = {t: len(rows) for t, rows in exemplars.items() if len(rows) < k}
        if short:
            detail = ", ".join(f"{t}: {n}" for t, n in short.items())
            raise DataError(dev_source, None, None, f"{k}-shot needs {k} dev rows per task; too few in {detail}")
        test_ids = {it["id"] for rows in items.values() for it in rows}
        for t, rows in exemplars.items():
            leaked = [r["id"] for r in rows[:k] if r["id"] in test_ids]
            if leaked:
                raise DataError(dev_source, None, "id", f"dev exemplar(s) {leaked} of task {t!r} are also test items")
    return QuestionSet(
        str(data_path), items, exemplars, dict(sorted(files.items())), dict(sorted(dev_files.items())), missing, limit,
        n_available,
    )


def cache_dataset(
    path: str | Path | None = None, configs: Sequence[str] | None = None, cache_dir: str | Path | None = None
) -> dict:
    """Load every config once with ``datasets.load_dataset`` so ``load_dataset("ancientbench", cfg)`` works by name.

    The datasets cache keys a local folder by its name, and the bundled folder is named ``ancientbench``; after
    this call ``load_dataset("ancientbench", cfg)`` finds the cached copy from any directory, offline too
    (pass the same ``cache_dir`` if you give one). Returns ``{config: DatasetDict}``; configs whose files are
    absent are skipped with a warning.
    """
    from datasets import get_dataset_config_names, load_dataset

    path = Path(path) if path is not None else default_data()
    declared = set(get_dataset_config_names(str(path)))  # the configs the dataset card lists
    out = {}
    for cfg in configs or TASK_NAMES:
        if cfg not in declared or not split_file(path, cfg, "test").is_file():
            warnings.warn(f"config {cfg!r} is not in the card of {path} or has no data there; not cached", stacklevel=2)
            continue
        out[cfg] = load_dataset(str(path), cfg, cache_dir=str(cache_dir) if cache_dir is not None else None)
    return out
