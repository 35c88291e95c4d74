"""``ancientbench eval``: score a causal LM on the tasks zero-shot and few-shot, write results, print the table.

Python: ``evaluate_model(model, tokenizer=None, tasks=None, shots=(0, 5), ...)`` returns ``{shots: results}``.
For every (model, shots) setting it writes, under ``<output>/<model_slug>/``:

- ``predictions_<k>shot.jsonl``: one line per item ``{"id", "task", "gold", "pred", "logprobs": [lA, lB, lC,
  lD], "shots_used", "item_sha256", "fewshot_sha256"}`` (plus ``"error"`` for an item whose question alone
  exceeds the model's context; its ``pred`` is null and it counts as wrong). ``item_sha256`` hashes the item's
  row (all schema fields), ``fewshot_sha256`` the exemplars it was offered (:func:`item_sha256`,
  :func:`fewshot_sha256`). Lines are appended and flushed batch by batch; when the setting is complete the
  file is rewritten in dataset order.
- ``predictions_<k>shot.meta.json``: the setting's fingerprint (model, revision/weights hash, dtype, shots,
  letter style, chat, prompt template hash, context limit) and the data files' hashes. A rerun with the same
  ``--output`` resumes: it keeps a prediction already written (a torn last line is cut off) only when its
  ``item_sha256`` and ``fewshot_sha256`` equal this run's for that id, scores the other items (with a warning
  naming the ids whose stored record did not match), and the final results equal an uninterrupted run's. A
  rerun whose setting differs stops with an error (``--overwrite`` starts afresh).
- ``results_<k>shot.json``: the self-describing results (layout in ``docs/evaluation.md``; arithmetic from
  :mod:`ancientbench.aggregate`: task accuracy -> competency mean -> average of the four competencies).

``<model_slug>`` is the Hub id with ``/`` -> ``__`` or the local folder's name, plus ``-chat`` in chat mode,
``-space`` for the space letter style and ``-circular`` for ``--circular`` (every item under the four cyclic
rotations of its options, :mod:`ancientbench.circular`), so differently scored runs never share files.
"""

from __future__ import annotations

from .errors import AncientBenchError

import datetime as _dt
import hashlib
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path
from typing import Mapping, Sequence

from .aggregate import aggregate
from .schema import FIELDS
from .prompts import TEMPLATE_SHA256, TEMPLATE_VERSION, letter_prefix
from .tasks import COMPETENCIES, COMPETENCY_DISPLAY, TASK_NAMES, TASK_TO_COMPETENCY, get_task

RESULTS_FORMAT = 1
FINGERPRINT_KEYS = (
    "name_or_path", "revision", "weights_sha256", "dtype", "shots", "letter_style", "chat",
    "template_version", "template_sha256", "max_length",
)


class ResumeError(AncientBenchError, RuntimeError):
    """Existing predictions were made under a different setting or data; they are never mixed in."""


HASH_CHARS = 16  # 64 bits of sha256: plenty to tell the items of one id apart


def _rows_sha256(obj) -> str:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


def item_sha256(item: Mapping[str, str]) -> str:
    """Short sha256 of an item's canonical row: its schema fields in ``schema.FIELDS`` order, as JSON."""
    return _rows_sha256([item.get(f, "") for f in FIELDS])


def fewshot_sha256(exemplars: Sequence[Mapping[str, str]], shots: int) -> str:
    """Short sha256 of the few-shot setting of a task: ``shots`` and the canonical rows of the first ``shots``
    exemplars (the ones a prompt is built from; dropping some to fit the context is recorded in shots_used)."""
    return _rows_sha256([shots, [[e.get(f, "") for f in FIELDS] for e in list(exemplars)[:shots]]])


def _matches(record: dict | None, expected: tuple[str, str] | None) -> bool:
    """Whether a stored record was made for exactly this item and exemplar set (records without hashes never are)."""
    return (record is not None and expected is not None
            and (record.get("item_sha256"), record.get("fewshot_sha256")) == expected)


# --------------------------------------------------------------------------------------------- storage


class PredictionStore:
    """Append-only predictions JSONL with a sidecar fingerprint, so interrupted runs resume exactly.

    Under several processes (:mod:`ancientbench.distributed`) the main process appends to ``path`` and
    process ``r`` to ``<stem>.part<r>.jsonl`` beside it (``part=r``); :meth:`load` reads all of them and
    :meth:`finalize` merges them into ``path`` and removes the part files.
    """

    def __init__(self, path: Path, fingerprint: dict, files_sha256: dict[str, str], *, overwrite: bool = False,
                 part: int | None = None):
        self.path = Path(path)
        self.meta_path = self.path.with_name(self.path.name.replace(".jsonl", ".meta.json"))
        self.write_path = self.path if not part else self.path.with_name(f"{self.path.stem}.part{part}.jsonl")
        self.fingerprint = fingerprint
        self.files_sha256 = dict(files_sha256)
        self.letter_token_ids: dict[str, int] | None = None
        if overwrite:
            for p in (self.path, self.meta_path, *self.part_paths()):
                if p.exists():
                    p.unlink()

    def part_paths(self) -> list[Path]:
        """Predictions other processes of a multi-process run appended (merged by :meth:`finalize`)."""
        return sorted(self.path.parent.glob(f"{self.path.stem}.part*.jsonl"))

    def load(self, expected: Mapping[str, tuple[str, str]] | None = None) -> dict[str, dict]:
        """Check the sidecar against this run and return the records already written (part files too), by id.

        An id written more than once keeps its last record, except that a record matching ``expected`` (id ->
        ``(item_sha256, fewshot_sha256)`` of this run) is never replaced by a later one that does not. Whether
        a record may be reused is the caller's check (:func:`run_setting` drops those that do not match).
        """
        files = [p for p in (self.path, *self.part_paths()) if p.exists()]
        if self.meta_path.exists():
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
            old = meta.get("fingerprint", {})
            diff = [k for k in FINGERPRINT_KEYS if old.get(k) != self.fingerprint.get(k)]
            if diff:
                detail = "; ".join(f"{k}: {old.get(k)!r} -> {self.fingerprint.get(k)!r}" for k in diff)
                raise ResumeError(
                    f"{self.path} holds predictions of another setting ({detail}); "
                    f"use --overwrite to replace them or another --output"
                )
            # a changed data file is no error: every record carries its item's hash and is checked by the caller
            self.files_sha256 = {**meta.get("files_sha256", {}), **self.files_sha256}
            self.letter_token_ids = meta.get("letter_token_ids")
        else:
            written = [p for p in files if p.stat().st_size > 0]
            if written:
                raise ResumeError(f"{written[0]} exists without its {self.meta_path.name}; use --overwrite or another --output")
        done: dict[str, dict] = {}
        expected = expected or {}
        for path in files:
            for rec in self._read(path):
                key = expected.get(rec["id"])
                if _matches(done.get(rec["id"]), key) and not _matches(rec, key):
                    continue
                done[rec["id"]] = rec
        return done

    @staticmethod
    def _read(path: Path) -> list[dict]:
        done: list[dict] = []
        raw = path.read_bytes()
        complete, _, fragment = raw.rpartition(b"\n")  # a torn last write leaves a fragment without newline
        if complete or raw.endswith(b"\n"):
            for n, line in enumerate(complete.split(b"\n"), start=1):
                try:
                    rec = json.loads(line.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    rec = None
                if not isinstance(rec, dict) or "id" not in rec or "pred" not in rec:
                    raise ResumeError(f"{path}, line {n}: not a prediction record; use --overwrite")
                done.append(rec)
        if fragment:
            with path.open("r+b") as fh:
                fh.truncate(len(raw) - len(fragment))
        return done

    def write_meta(self) -> None:
        meta = {
            "ancientbench_results_format": RESULTS_FORMAT,
            "fingerprint": self.fingerprint,
            "files_sha256": self.files_sha256,
            "letter_token_ids": self.letter_token_ids,
        }
        _atomic_write(self.meta_path, json.dumps(meta, ensure_ascii=False, indent=1))

    def append(self, records: Sequence[dict]) -> None:
        if not records:
            return
        with self.write_path.open("a", encoding="utf-8", newline="\n") as fh:
            fh.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
            fh.flush()

    def finalize(self, ordered: Sequence[dict], extra: Sequence[dict] = ()) -> None:
        """Rewrite the file in dataset order (records of items outside this run are kept after them); the part
        files of other processes, now merged into it, are removed."""
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [*ordered, *extra])
        _atomic_write(self.path, text)
        for p in self.part_paths():
            p.unlink()


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8", newline="\n")
    tmp.replace(path)


# --------------------------------------------------------------------------------------------- results


def package_versions() -> dict[str, str | None]:
    """Versions of the packages that can change a score, plus Python and the platform."""
    from importlib import metadata

    out: dict[str, str | None] = {"python": platform.python_version(), "platform": platform.platform()}
    for name in ("ancientbench", "torch", "transformers", "tokenizers", "accelerate", "datasets", "numpy", "torch_npu"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            if name == "ancientbench":
                from . import __version__

                out[name] = __version__
            elif name != "torch_npu":
                out[name] = None
    try:
        import torch

        out["cuda"] = torch.version.cuda
    except Exception:  # torch missing is reported above as None
        out["cuda"] = None
    return out


def build_results(
    records: Sequence[dict],
    *,
    model_info: dict,
    setting: dict,
    data: dict,
    timing: dict,
    predictions_file: str | None,
    n_available: dict[str, int] | None = None,
) -> dict:
    """The results JSON of one setting from its prediction records (``records`` = exactly the run's items)."""
    from . import __version__

    agg = aggregate([r["pred"] == r["gold"] for r in records], [r["task"] for r in records])
    shots = setting["shots"]
    tasks = {}
    for t, row in agg["tasks"].items():
        mine = [r for r in records if r["task"] == t]
        tasks[t] = {
            **row,
            "fewshot_truncated_items": sum(1 for r in mine if r.get("pred") is not None and r["shots_used"] < shots),
            "too_long_items": [r["id"] for r in mine if r.get("error")],
        }
    limited = bool(n_available) and any(tasks[t]["total"] < n_available.get(t, 0) for t in tasks)
    return {
        "ancientbench_version": __version__,
        "results_format": RESULTS_FORMAT,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "model": model_info,
        "setting": setting,
        "prompt": {"template_version": TEMPLATE_VERSION, "template_sha256": TEMPLATE_SHA256},
        "data": data,
        "tasks": tasks,
        "competencies": agg["competencies"],
        "average": agg["average"],
        "micro_accuracy": agg["micro_accuracy"],
        "complete": bool(agg["complete"] and not limited),
        "packages": package_versions(),
        "timing": timing,
        "predictions_file": predictions_file,
    }


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def format_table(results: Sequence[dict]) -> str:
    """The paper's table: a row per setting (model, shots), columns glyph, pronunciation, meaning, context,
    average; then the per-task accuracies (rows tasks, columns settings). Percentages."""
    if not results:
        return ""
    labels = []
    for r in results:
        name = r["model"]["name_or_path"]
        flags = [f"{r['setting']['shots']}-shot"]
        if r["setting"].get("chat"):
            flags.append("chat")
        if r["setting"].get("letter_style") != "bare":
            flags.append(f"letter={r['setting']['letter_style']}")
        if r["model"].get("smoke_model"):
            flags.append("smoke model")
        labels.append((name, ", ".join(flags)))
    head = ["model", "setting", *[COMPETENCY_DISPLAY[c][1] for c in COMPETENCIES], "Average"]
    rows = [[n, s, *[_pct(r["competencies"].get(c)) for c in COMPETENCIES], _pct(r["average"])] for (n, s), r in zip(labels, results)]
    lines = _grid(head, rows)
    present = [t for t in TASK_NAMES if any(t in r["tasks"] for r in results)]
    head2 = ["task", "competency", "n", *[s for _, s in labels]]
    rows2 = []
    for t in present:
        n = next(r["tasks"][t]["total"] for r in results if t in r["tasks"])
        rows2.append([f"{t} {get_task(t).display_zh}", TASK_TO_COMPETENCY[t], str(n),
                      *[_pct(r["tasks"][t]["accuracy"]) if t in r["tasks"] else "-" for r in results]])
    notes = []
    for (name, s), r in zip(labels, results):
        if not r["complete"]:
            notes.append(f"note: {name} {s}: not all ten tasks in full - 'Average' is not the paper's average")
        trunc = sum(v.get("fewshot_truncated_items", 0) for v in r["tasks"].values())
        if trunc:
            notes.append(f"note: {name} {s}: {trunc} item(s) had few-shot exemplars dropped to fit the context")
        long_ = sum(len(v.get("too_long_items", [])) for v in r["tasks"].values())
        if long_:
            notes.append(f"note: {name} {s}: {long_} item(s) longer than the context were counted wrong")
    return "\n".join([*lines, "", *_grid(head2, rows2), *([""] + notes if notes else [])])


def _width(s: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def _grid(head: list[str], rows: list[list[str]]) -> list[str]:
    cols = list(zip(head, *rows))
    widths = [max(_width(c) for c in col) for col in cols]

    def fmt(cells):
        return "  ".join(c + " " * (w - _width(c)) for c, w in zip(cells, widths)).rstrip()

    return [fmt(head), "  ".join("-" * w for w in widths), *[fmt(r) for r in rows]]


# ------------------------------------------------------------------------------------------------- run


def results_path(predictions_file: str | Path) -> Path:
    """The results file written beside a predictions file: ``predictions_<k>shot.jsonl`` -> ``results_<k>shot.json``."""
    p = Path(predictions_file)
    return p.with_name(p.name.replace("predictions_", "results_", 1).replace(".jsonl", ".json"))


def _slug(info: dict, chat: bool, letter_style: str, circular: bool = False) -> str:
    from .models import model_slug

    s = model_slug(info["name_or_path"])
    if chat:
        s += "-chat"
    if letter_style != "bare":
        s += f"-{letter_style}"
    if circular:
        s += "-circular"
    return s


def run_setting(
    model,
    tokenizer,
    info: dict,
    questions,
    shots: int,
    *,
    output_dir: str | Path | None = None,
    batch_size: int = 8,
    letter_style: str = "bare",
    chat: bool = False,
    prefix_cache: bool | str = "auto",
    max_length: int | None = None,
    progress: bool = True,
    overwrite: bool = False,
    circular: bool = False,
    processes=None,
) -> dict:
    """Score one (model, shots) setting over a :class:`~ancientbench.dataset.QuestionSet`, resuming from disk.

    Under several processes (``processes``, default :func:`ancientbench.distributed.init`) every process
    scores a shard of each task's remaining items and gets the merged results; only the main process writes
    the predictions and results files.
    """
    from tqdm.auto import tqdm

    from . import distributed
    from .scoring import _resolve_prefix_cache, check_batch_size, context_limit, score_task

    letter_prefix(letter_style)  # validates the name
    batch = check_batch_size(batch_size)  # "auto": one AutoBatchSize shared by all tasks of the setting
    batch_used: list[int] = []
    limit = context_limit(model, tokenizer, max_length)
    fingerprint = {
        "name_or_path": info["name_or_path"], "revision": info.get("revision"),
        "weights_sha256": info.get("weights_sha256"), "dtype": info.get("dtype"), "shots": shots,
        "letter_style": letter_style, "chat": chat, "template_version": TEMPLATE_VERSION,
        "template_sha256": TEMPLATE_SHA256, "max_length": limit,
    }
    procs = processes or distributed.init(str(next(model.parameters()).device))
    main = procs.is_main_process
    # what each record is checked against on resume: its item's row and its task's exemplar set
    task_fewshot = {t: fewshot_sha256(questions.exemplars.get(t, []), shots) for t in questions.items}
    expected = {it["id"]: (item_sha256(it), task_fewshot[t]) for t, rows in questions.items.items() for it in rows}
    store = None
    done: dict[str, dict] = {}
    pred_file = None
    letter_ids = None
    if output_dir is not None:
        folder = Path(output_dir) / _slug(info, chat, letter_style, circular)
        pred_file = folder / f"predictions_{shots}shot.jsonl"
        error = None
        if main:  # only the main process reads, checks and repairs the files; the others learn what is done
            folder.mkdir(parents=True, exist_ok=True)
            store = PredictionStore(pred_file, fingerprint, questions.files_for(shots), overwrite=overwrite)
            try:
                done = store.load(expected)
                store.write_meta()
            except ResumeError as err:
                if procs.num_processes == 1:
                    raise
                error = str(err)
            letter_ids = store.letter_token_ids
            stale = [i for i in expected if i in done and not _matches(done[i], expected[i])]
            for i in stale:  # scored again below; the rewrite at the end replaces them
                del done[i]
            if stale:
                shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
                warnings.warn(
                    f"{pred_file}: {len(stale)} stored prediction(s) were made for other items or few-shot "
                    f"exemplars under the same id (question, options, answer or another field changed, other "
                    f"exemplars, or written before items were hashed): {shown}; scoring them again",
                    stacklevel=3,
                )
        if procs.num_processes > 1:
            error, done, letter_ids = procs.broadcast((error, done, letter_ids))
            if error:
                raise ResumeError(error)
            if not main:
                store = PredictionStore(pred_file, fingerprint, questions.files_for(shots), part=procs.process_index)

    wanted_ids = [it["id"] for t in questions.items for it in questions.items[t]]
    resumed = sum(1 for i in wanted_ids if i in done)
    # each process scores a contiguous shard of every task's remaining items
    todo = {t: procs.shard([it for it in rows if it["id"] not in done]) for t, rows in questions.items.items()}
    n_todo = sum(len(v) for v in todo.values())
    new: dict[str, dict] = {}
    t0 = time.perf_counter()
    label = f"{_slug(info, chat, letter_style, circular)} {shots}-shot"
    if procs.num_processes > 1:
        label += f" [process {procs.process_index + 1}/{procs.num_processes}]"

    def remember_letter_ids(ids: dict[str, int] | None) -> None:
        """Record the letter token ids in the sidecar as soon as known (a resumed run checks them)."""
        if main and store is not None and ids and store.letter_token_ids != ids:
            store.letter_token_ids = ids
            store.write_meta()

    show = progress and main and n_todo > 0
    with tqdm(total=n_todo, desc=label, unit="q", disable=not show, file=sys.stderr) as bar:
        for task, rows in todo.items():
            if not rows:
                continue
            bar.set_postfix_str(task)

            def on_batch(recs: list[dict]) -> None:
                for r in recs:
                    r["item_sha256"], r["fewshot_sha256"] = expected[r["id"]]
                    new[r["id"]] = r
                if store is not None:
                    store.append(recs)

            scored = score_task(
                model, tokenizer, task, rows, questions.exemplars.get(task, []), shots=shots,
                batch_size=batch, letter_style=letter_style, chat=chat, prefix_cache=prefix_cache,
                max_length=max_length, progress=bar, on_batch=on_batch,
            )
            if scored.batch_size is not None:
                batch_used.append(scored.batch_size)
            if scored.letter_token_ids:
                if letter_ids and letter_ids != scored.letter_token_ids:
                    raise ResumeError(f"letter token ids changed: {letter_ids} -> {scored.letter_token_ids}")
                letter_ids = scored.letter_token_ids
                remember_letter_ids(letter_ids)
    if procs.num_processes > 1:  # every process gets every process's records
        shards = procs.gather([(list(new.values()), letter_ids, batch_used)])
        new = {r["id"]: r for recs, _, _ in shards for r in recs}
        per_process = [len(recs) for recs, _, _ in shards]
        seen_ids = {json.dumps(ids, sort_keys=True) for _, ids, _ in shards if ids}
        if len(seen_ids) > 1:
            raise ResumeError(f"processes resolved different letter token ids: {sorted(seen_ids)}")
        letter_ids = next((ids for _, ids, _ in shards if ids), letter_ids)
        batch_used = [b for _, _, used in shards for b in used]
        remember_letter_ids(letter_ids)  # resolved by another process when the main one had nothing to score
    seconds = time.perf_counter() - t0

    all_records = {**done, **new}
    ordered = [all_records[i] for i in wanted_ids]
    if main and store is not None:
        wanted = set(wanted_ids)
        store.finalize(ordered, [r for i, r in done.items() if i not in wanted])
    setting = {
        "shots": shots,
        "letter_style": letter_style,
        "letter_token_ids": letter_ids,
        "chat": chat,
        "batch_size": "auto" if not isinstance(batch, int) else batch,
        "batch_size_used": min(batch_used) if batch_used else None,  # smaller after out-of-memory back-off
        "prefix_cache": _resolve_prefix_cache(model, prefix_cache),
        "max_length": limit,
        "fewshot_source": "first k rows of each task's dev split" if shots else None,
    }
    data = {
        "path": questions.data_path,
        "files_sha256": questions.files_for(shots),
        "n_items": len(ordered),
        "limit": questions.limit,
        "missing_tasks": questions.missing_tasks,
    }
    timing = {
        "seconds": round(seconds, 3),
        "items_scored": len(new),
        "items_resumed": resumed,
        "items_per_second": round(len(new) / seconds, 3) if new and seconds > 0 else None,
    }
    results = build_results(
        ordered, model_info=info, setting=setting, data=data, timing=timing,
        predictions_file=str(pred_file) if pred_file else None, n_available=questions.n_available,
    )
    if questions.missing_tasks:
        results["complete"] = False
    if circular:  # items were expanded into their rotations: add plain and circular accuracy
        from .circular import add_circular_figures

        add_circular_figures(results, ordered)
    if procs.num_processes > 1:
        results["setting"]["processes"] = procs.num_processes
        results["timing"]["items_per_process"] = per_process
    if pred_file is not None:
        if main:
            _atomic_write(results_path(pred_file), json.dumps(results, ensure_ascii=False, indent=2))
    else:
        results["predictions"] = ordered
    return results


def evaluate_model(
    model,
    tokenizer=None,
    tasks: Sequence[str] | None = None,
    shots: Sequence[int] | int = (0, 5),
    batch_size: int = 8,
    device: str | None = None,
    dtype: str | None = None,
    limit: int | None = None,
    data: str | Path | None = None,
    output_dir: str | Path | None = None,
    letter_style: str = "bare",
    chat: bool = False,
    *,
    prefix_cache: bool | str = "auto",
    revision: str | None = None,
    trust_remote_code: bool = False,
    device_map: str | None = None,
    max_length: int | None = None,
    fewshot_data: str | Path | None = None,
    overwrite: bool = False,
    progress: bool = True,
    circular: bool = False,
) -> dict[int, dict]:
    """Evaluate a model on AncientBench; returns ``{shots: results}`` (the dicts written as ``results_<k>shot.json``).

    ``model`` is a Hub id, a local folder, ``"tiny-random"`` (the built-in chance-level smoke model), or an
    already loaded ``AutoModelForCausalLM`` (then pass its ``tokenizer``; ``device``/``dtype`` are applied
    only if given, ``"auto"`` choosing as for a model loaded by name). ``tasks``: task or competency names
    (default all with data). ``data``: dataset folder or JSONL question file (default: the bundled dataset). Without ``output_dir`` nothing is written and each
    results dict carries its records under ``"predictions"``. ``circular``: score every test item under the
    four cyclic rotations of its options and add plain and circular accuracy (:mod:`ancientbench.circular`).
    """
    from . import distributed
    from .dataset import load_questions
    from .models import load_model, model_info, prepare_tokenizer, select_device, select_dtype

    shots_list = [shots] if isinstance(shots, int) else list(shots)
    if not shots_list:
        raise ValueError("shots: give at least one number of shots")
    letter_prefix(letter_style)
    questions = load_questions(tasks, data, shots=shots_list, fewshot_data=fewshot_data, limit=limit)
    if circular:
        from .circular import expand_questions

        questions = expand_questions(questions)
    # launched with several processes (torchrun / accelerate launch): data parallel, one shard each, on the
    # process's own device
    if isinstance(model, (str, Path)):
        procs = distributed.init(device, device_map)
        device = distributed.process_device(procs, device)
        loaded = load_model(model, device=device, dtype=dtype, revision=revision,
                            trust_remote_code=trust_remote_code, device_map=device_map)
        model_obj, tok, info = loaded.model, loaded.tokenizer, loaded.info
        if tokenizer is not None:
            tok = prepare_tokenizer(tokenizer)
    else:
        procs = distributed.init(device or str(next(model.parameters()).device), device_map)
        if device is not None:  # "auto" -> cuda/npu/mps/cpu
            device = select_device(distributed.process_device(procs, device))
        if tokenizer is None:
            raise ValueError("pass the tokenizer together with a loaded model")
        model_obj, tok = model, prepare_tokenizer(tokenizer)
        if dtype is not None:  # "auto" depends on where the model will run
            model_obj = model_obj.to(select_dtype(dtype, device or str(next(model_obj.parameters()).device)))
        if device is not None:
            model_obj = model_obj.to(device)
        name = getattr(model_obj, "name_or_path", None) or getattr(model_obj.config, "_name_or_path", "") or "model"
        # its folder on disk says nothing about weights changed in memory: hash the tensors themselves (one
        # full pass over the weights, see models.tensors_sha256) - only when files are written that a later
        # run could resume from
        info = model_info(model_obj, name, revision=revision, weights="tensors" if output_dir is not None else None)
    if info.get("smoke_model") and progress and procs.is_main_process:
        print("note: tiny-random is a random-weight smoke model; its scores are chance level (~25%).", file=sys.stderr)
    out = {}
    for k in shots_list:
        out[k] = run_setting(
            model_obj, tok, info, questions, k, output_dir=output_dir, batch_size=batch_size,
            letter_style=letter_style, chat=chat, prefix_cache=prefix_cache, max_length=max_length,
            progress=progress, overwrite=overwrite, circular=circular, processes=procs,
        )
    return out


# ------------------------------------------------------------------------------------------------- CLI


def _batch_size_arg(value: str):
    import argparse

    if value == "auto":
        return value
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'auto', got {value!r}")
    return n


def add_arguments(parser) -> None:
    parser.add_argument("--model", required=True, help="Hub id, local model folder, or 'tiny-random' (built-in smoke model)")
    parser.add_argument("--tasks", nargs="+", default=None, help="task or competency names (default: all tasks with data)")
    parser.add_argument("--shots", nargs="+", type=int, default=[0, 5], help="numbers of few-shot exemplars (default: 0 5)")
    parser.add_argument("--batch-size", type=_batch_size_arg, default=8,
                        help="prompts per forward pass (default 8), or 'auto': start at 128 on a GPU/NPU (16 on CPU) "
                             "and halve on out-of-memory")
    parser.add_argument("--device", default="auto", help="auto (cuda > npu > mps > cpu), cpu, cuda, cuda:1, npu:0, mps")
    parser.add_argument("--dtype", default="auto", help="auto (bf16 on cuda/npu, fp32 on cpu), float32, bfloat16, float16")
    parser.add_argument("--limit", type=int, default=None, help="score only the first N test items of each task")
    parser.add_argument("--data", default=None, help="dataset folder (data/<task>/{test,dev}.jsonl) or JSONL question file")
    parser.add_argument("--fewshot-data", default=None,
                        help="where exemplars come from (folder or JSONL of dev rows); default: --data folder, "
                             "or the bundled dataset for a JSONL --data")
    parser.add_argument("--output", default="results", help="results folder (default ./results)")
    parser.add_argument("--letter-style", choices=["bare", "space"], default="bare",
                        help="score 'A' (bare, the paper's/CMMLU's) or ' A' (space, lm-eval's)")
    parser.add_argument("--chat", action="store_true", help="wrap each prompt as a user turn with the chat template")
    parser.add_argument("--revision", default=None, help="Hub revision (branch, tag or commit)")
    parser.add_argument("--trust-remote-code", action="store_true", help="allow the model's own code (e.g. GLM, Baichuan)")
    parser.add_argument("--device-map", choices=["auto"], default=None, help="spread a large model over all devices")
    parser.add_argument("--max-length", type=int, default=None, help="context limit in tokens (default: the model's)")
    parser.add_argument("--no-prefix-cache", action="store_true", help="score every prompt from scratch (no KV reuse)")
    parser.add_argument("--overwrite", action="store_true", help="discard predictions already in --output for these settings")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--circular", action="store_true",
                        help="score each item under the 4 cyclic rotations of its options; add circular accuracy (CircularEval)")


def run(args) -> int:
    import warnings

    warnings.formatwarning = lambda message, category, *a, **k: f"warning: {message}\n"  # no source lines on a CLI
    results = evaluate_model(
        args.model, tasks=args.tasks, shots=args.shots, batch_size=args.batch_size, device=args.device,
        dtype=args.dtype, limit=args.limit, data=args.data, output_dir=args.output,
        letter_style=args.letter_style, chat=args.chat, prefix_cache=False if args.no_prefix_cache else "auto",
        revision=args.revision, trust_remote_code=args.trust_remote_code, device_map=args.device_map,
        max_length=args.max_length, fewshot_data=args.fewshot_data, overwrite=args.overwrite,
        progress=not args.no_progress, circular=args.circular,
    )
    from . import distributed

    procs = distributed.init()
    distributed.close()
    if not procs.is_main_process:  # the main process of a multi-process run prints and has written the files
        return 0
    print(format_table(list(results.values())))
    if args.circular:
        from .circular import format_table as circular_table

        print("\n" + circular_table(list(results.values())))
    files = [str(results_path(r["predictions_file"])) for r in results.values()]
    print("\nresults: " + ", ".join(files))
    return 0

