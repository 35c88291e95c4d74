"""Running an evaluation: prompts -> fitting to the context -> the backend -> prediction records -> results.

This is the one place, for every backend and mode, where prompts are built (:mod:`ancientbench.prompts`),
few-shot exemplars are dropped (longest first) until a prompt fits the backend's context, an item whose
question alone does not fit becomes an error record (``pred: null``, counted wrong, never truncated),
letters are read (argmax of the letter log-probabilities; the option likelihoods; or the generated answer
through :mod:`ancientbench.evaluation.extract`), and predictions are saved as they come so a rerun resumes
(items scored in fixed blocks, so resumed log-probs are bit-identical; the output folder locked by
:mod:`ancientbench.evaluation.lock`).

- :func:`score_task` ``(backend, settings, task, items, exemplars) -> TaskRun``: one task's records.
- :func:`run_setting` ``(backend, questions, settings, ...) -> results``: one setting over a question set, in
  three steps: :func:`plan` (fingerprint, stored predictions, what is left; the shard of this process),
  :func:`score` (:func:`score_task` per task, appending to the store), :func:`assemble` (merge processes,
  rewrite the predictions in dataset order, build and write the results).
- the modes' requests and record fields: :mod:`ancientbench.evaluation.requests`; the Python entry point
  :func:`~ancientbench.evaluation.api.evaluate_model`: :mod:`ancientbench.evaluation.api`.

Prediction records: ``{"id", "task", "gold", "pred", "logprobs", "shots_used", "item_sha256",
"fewshot_sha256", "block_sha256"}`` plus, per mode: ``ppl`` - ``option_logprobs`` (summed), ``option_logprobs_norm`` (per
character; decides ``pred``), ``option_tokens``, ``pred_sum``; ``generate`` - ``extracted_by`` (rule) or
``extraction_failed: true``, ``finish_reason``; letters missing from a server's answer - ``missing_letters``;
no answer - ``error`` and ``error_type`` (``context_length``, ``backend``, ``missing_letters``). With
``log_samples``: ``prompt`` (the full prompt text; the user turn in chat mode) and in generate mode
``response`` (the raw answer).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from tqdm.auto import tqdm

from ..backends.base import (
    Backend,
    Prompt,
    UnsupportedModeError,
)
from ..errors import AncientBenchError
from ..fileio import atomic_write
from ..prompts import build_mode_prompt, format_mode_exemplar
from ..tasks import task_row
from . import distributed
from .circular import add_circular_figures
from .layout import predictions_path, results_path
from .lock import OutputLock, OutputLockedError
from .requests import MODES
from .results import build_results
from .settings import Settings
from .store import PredictionStore, ResumeError, fewshot_sha256, item_sha256, matches

log = logging.getLogger(__name__)


class EvaluationError(AncientBenchError, ValueError):
    """A setting that cannot be run as asked (too few exemplars, a model object without its tokenizer ...)."""


@dataclass
class TaskRun:
    """The records of one task (in the order of its items) and what the results report about them."""

    records: list[dict]
    fewshot_truncated_items: int = 0
    too_long_items: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------- fitting


def _drop_order(backend: Backend, mode: str, exemplars: Sequence[Mapping[str, str]], letter_style: str) -> list[int]:
    """Exemplars in the order they are dropped to fit the context: longest (in tokens) first, later ones on ties."""
    texts = [format_mode_exemplar(mode, e, letter_style) for e in exemplars]
    lengths = backend.count_tokens([Prompt("", t) for t in texts]) if texts else []
    if lengths is None:
        return list(range(len(exemplars)))[::-1]
    return sorted(range(len(exemplars)), key=lambda j: (-lengths[j], -j))


# ------------------------------------------------------------------------------------------ one task


def fit_to_context(backend: Backend, settings: Settings, items: Sequence[Mapping[str, str]],
                   prompt_for: Callable[[int, int], Prompt], limit: int | None) -> tuple[list[int], dict[int, int]]:
    """``(dropped, too_long)``: how many exemplars each item's prompt drops (longest first) to fit ``limit`` tokens,
    and the items that do not fit even with none (item -> tokens it needs). Nothing is dropped when the backend
    cannot count tokens or tell its context."""
    asking = MODES[settings.mode]
    dropped = [0] * len(items)
    too_long: dict[int, int] = {}
    pending = list(range(len(items))) if limit is not None else []
    while pending:
        needed = asking.needed_tokens(backend, settings, [prompt_for(i, dropped[i]) for i in pending], [items[i] for i in pending])
        if needed is None:
            break
        retry = []
        for i, n in zip(pending, needed):
            if n <= limit:
                continue
            if dropped[i] < settings.shots:
                dropped[i] += 1
                retry.append(i)
            else:
                too_long[i] = n
        pending = retry
    return dropped, too_long


def too_long_message(settings: Settings, n: int, limit: int | None) -> str:
    """The error record's words for a question that does not fit the context even zero-shot."""
    if settings.mode == "generate":
        return (f"question alone needs {n} tokens with the {settings.max_new_tokens} new tokens of the answer, "
                f"more than the model's context of {limit}")
    return f"question alone is {n} tokens, longer than the model's context of {limit}"


def check_task(backend: Backend, settings: Settings, task: str, exemplars: Sequence) -> None:
    """A known task with enough exemplars for the shots, on a backend that answers the mode."""
    task_row(task)  # one of the ten, or a user task's valid name
    if len(exemplars) < settings.shots:
        raise EvaluationError(f"task {task!r}: {settings.shots}-shot needs {settings.shots} dev exemplars, only "
                              f"{len(exemplars)} available")
    if not backend.supports(settings.mode):
        raise UnsupportedModeError(f"backend {backend.name!r} does not support --mode {settings.mode} "
                                   f"(it supports: {', '.join(backend.modes)})")


def score_task(
    backend: Backend,
    settings: Settings,
    task: str,
    items: Sequence[Mapping[str, str]],
    exemplars: Sequence[Mapping[str, str]] = (),
    *,
    progress=None,
    on_batch: Callable[[list[dict]], None] | None = None,
    log_samples: bool = False,
) -> TaskRun:
    """Score the items of one task with the first ``settings.shots`` of ``exemplars`` (its dev split).

    ``on_batch(records)`` receives each finished batch's records (items too long for the context first);
    ``progress`` is anything with ``update(n)``.
    """
    check_task(backend, settings, task, exemplars)
    shots, mode, style = settings.shots, settings.mode, settings.letter_style
    asking = MODES[mode]
    shots_list = list(exemplars[:shots])
    limit = backend.context_length()
    drop = _drop_order(backend, mode, shots_list, style) if limit is not None else []
    kept_by_dropped = [[e for j, e in enumerate(shots_list) if j not in set(drop[:d])] for d in range(shots + 1)]

    def prompt_for(i: int, dropped: int) -> Prompt:
        return Prompt.of(build_mode_prompt(mode, task, items[i], kept_by_dropped[dropped], style), settings.chat)

    dropped, too_long = fit_to_context(backend, settings, items, prompt_for, limit)
    records: list[dict | None] = [None] * len(items)
    prompts = {i: prompt_for(i, dropped[i]) for i in range(len(items))}

    def base(i: int) -> dict:
        it = items[i]
        rec = {"id": it["id"], "task": task, "gold": it["answer"], "pred": None, "logprobs": None,
               "shots_used": shots - dropped[i]}
        if log_samples:
            rec["prompt"] = prompts[i].text
        return rec

    def error(i: int, message: str, kind: str) -> dict:
        return {**base(i), "error": message, "error_type": kind}

    error_records = []
    for i, n in too_long.items():
        records[i] = error(i, too_long_message(settings, n, limit), "context_length")
        error_records.append(records[i])
    if error_records and on_batch is not None:
        on_batch(error_records)
    if progress is not None and error_records:
        progress.update(len(error_records))

    scored = [i for i in range(len(items)) if i not in too_long]
    names = [f"item {items[i]['id']!r}" for i in scored]

    def record(i: int, result) -> dict:
        return error(i, result.error, "backend") if result.error else asking.fill(base(i), result, items[i], log_samples)

    def on_done(chunk: list[int], results: list) -> None:
        batch = []
        for k, res in zip(chunk, results):
            records[scored[k]] = record(scored[k], res)
            batch.append(records[scored[k]])
        if on_batch is not None:
            on_batch(batch)
        if progress is not None:
            progress.update(len(chunk))

    if scored:
        asking.call(backend, asking.requests(settings, [prompts[i] for i in scored], [items[i] for i in scored], names), on_done)
    missing = [items[i]["id"] for i in scored if records[i] is None]
    if missing:  # a backend that skipped on_done for some request is a bug in that backend
        raise RuntimeError(f"backend {backend.name!r} returned no result for {len(missing)} item(s): {missing[:5]}")
    return TaskRun(
        records=records,  # type: ignore[arg-type]
        fewshot_truncated_items=sum(1 for d in dropped if d > 0),
        too_long_items=[items[i]["id"] for i in too_long],
    )


# ------------------------------------------------------------------------------------------- setting

# Items per scoring block: the backend sorts and batches within a block only. Large enough that length
# sorting keeps batches tight (bundled set, 0-shot, batch 128: +1.2% padded tokens vs one sort per task; 256
# would be +9%); small enough that a resume rescores little (at most one block per partly done task).
BLOCK_ITEMS = 1024


def _blocks(rows: Sequence[dict]) -> list[list[dict]]:
    return [list(rows[i:i + BLOCK_ITEMS]) for i in range(0, len(rows), BLOCK_ITEMS)]


def block_sha256(block: Sequence[Mapping]) -> str:
    """Short sha256 of a block's item ids, in order: a record made in another block is never reused."""
    return hashlib.sha256("\n".join(it["id"] for it in block).encode("utf-8")).hexdigest()[:16]


def _split_by_block(rows: Sequence[dict], blocks: Mapping[str, str]) -> list[list[dict]]:
    """Consecutive runs of rows of one block (a process's shard may cut a block)."""
    out: list[list[dict]] = []
    for it in rows:
        if out and blocks[out[-1][-1]["id"]] == blocks[it["id"]]:
            out[-1].append(it)
        else:
            out.append([it])
    return out


@dataclass
class Plan:
    """Step 1 of a setting: what is stored, what is left to score (this process's shard), where it goes."""

    settings: Settings
    fingerprint: dict
    expected: dict[str, tuple[str, str]]  # id -> (item_sha256, fewshot_sha256) of this run
    done: dict[str, dict]
    todo: dict[str, list[dict]]
    wanted_ids: list[str]
    store: PredictionStore | None
    pred_file: Path | None
    letter_ids: dict | None = None
    lock: OutputLock | None = None  # held by the main process from plan to the end of assemble
    blocks: dict[str, str] = field(default_factory=dict)  # id -> block_sha256 of its block in this run
    retried: int = 0  # stored error records (no answer from the backend) scored again


def plan(backend: Backend, questions, settings: Settings, *, output_dir=None, overwrite=False, repair=False,
         procs) -> Plan:
    """Fingerprint the setting, load (and check) the stored predictions, and shard what is left."""
    fingerprint = settings.fingerprint(backend.fingerprint())
    main = procs.is_main_process
    shots = settings.shots
    # what each record is checked against on resume: its item's row and its task's exemplar set
    task_fewshot = {t: fewshot_sha256(questions.exemplars.get(t, []), shots) for t in questions.items}
    expected = {it["id"]: (item_sha256(it), task_fewshot[t]) for t, rows in questions.items.items() for it in rows}
    store, done, pred_file, letter_ids, lock = None, {}, None, None, None
    stale: list[str] = []
    retried: list[str] = []
    whole_blocks = settings.mode != "generate" and type(backend).batches_in_process
    if output_dir is not None:
        folder = settings.folder(output_dir, backend.info()["name_or_path"])
        pred_file = predictions_path(folder, shots)
        error = None
        if main:  # only the main process reads, checks and repairs the files; the others learn what is done
            try:
                lock = OutputLock(folder).acquire()  # before anything in the folder is read or changed
                store = PredictionStore(pred_file, fingerprint, questions.files_for(shots), overwrite=overwrite,
                                        repair=repair)
                done = store.load(expected)
                store.write_meta()
            except (ResumeError, OutputLockedError) as err:
                if lock is not None:
                    lock.release()
                if procs.num_processes == 1:
                    raise
                error = str(err)
            letter_ids = store.letter_token_ids if store is not None else None
            stale, retried = _unusable(done, expected, questions, settings.mode, whole_blocks, pred_file)
        if procs.num_processes > 1:
            error, done, letter_ids, stale, retried = procs.broadcast((error, done, letter_ids, stale, retried))
            if error:
                raise ResumeError(error)
            if not main:
                store = PredictionStore(pred_file, fingerprint, questions.files_for(shots), part=procs.process_index)
    wanted_ids = [it["id"] for t in questions.items for it in questions.items[t]]
    # A task's items are scored in fixed blocks (see BLOCK_ITEMS): a block with any item missing, or stored
    # from another block (another --limit), is scored again whole, so every block reaches the backend exactly
    # as in an uninterrupted run and its log-probs are bit-identical (same batches, same padding). Items
    # stored for another version of their row (stale) are scored alone; so is everything in generate mode
    # and on a server (one request per item: no batches to keep; and a server must not be asked twice).
    stale_ids = set(stale)
    block_of: dict[str, str] = {}
    todo: dict[str, list[dict]] = {}
    for t, rows in questions.items.items():
        again: list[dict] = []
        for blk in _blocks(rows):
            sig = block_sha256(blk)
            for it in blk:
                block_of[it["id"]] = sig
            if whole_blocks and any((it["id"] not in done and it["id"] not in stale_ids)
                                    or (it["id"] in done and done[it["id"]].get("block_sha256", sig) != sig)
                                    for it in blk):
                again.extend(blk)
            else:
                again.extend(it for it in blk if it["id"] not in done)
        for it in again:
            done.pop(it["id"], None)
        todo[t] = procs.shard(again)  # each process scores a contiguous shard of every task's remaining items
    return Plan(settings, fingerprint, expected, done, todo, wanted_ids, store, pred_file, letter_ids, lock,
                block_of, len(retried))


def _shown(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def _unusable(done: dict[str, dict], expected: Mapping, questions, mode: str, whole_blocks: bool,
              pred_file: Path) -> tuple[list[str], list[str]]:
    """Drop from ``done`` what a resumed run must score again, with a warning each: stale records (made for
    another item or exemplar set, malformed, or disagreeing with their item) and error records it retries."""
    asking, item_of = MODES[mode], {it["id"]: it for rows in questions.items.values() for it in rows}
    stale = [i for i in expected if i in done and not (matches(done[i], expected[i]) and asking.agrees(done[i], item_of[i]))]
    for i in stale:  # scored again; the rewrite at the end replaces them
        del done[i]
    if stale:
        log.warning(
            f"{pred_file}: {len(stale)} stored prediction(s) were made for other items or few-shot "
            f"exemplars under the same id (question, options, answer or another field changed, other "
            f"exemplars, or written before items were hashed), are malformed (a prediction that is no "
            f"letter, log-probabilities that are not four numbers), or disagree with their item (a gold "
            f"that is not its answer, a prediction that is not what the stored log-probabilities give): "
            f"{_shown(stale)}; scoring them again")
    # Records without an answer (a server error, no letter) are scored again: the server may answer now. An item
    # too long for the context is retried only where that costs no scoring of its block (the context limit is
    # part of the fingerprint; a server's may have grown).
    retried = [i for i in expected if i in done and done[i].get("error") and not (
        whole_blocks and done[i].get("error_type", "context_length") == "context_length")]
    for i in retried:
        del done[i]
    if retried:
        log.warning(f"{pred_file}: retrying {len(retried)} item(s) the backend gave no answer for last time: "
                    f"{_shown(retried)}")
    return stale, retried


def score(backend: Backend, questions, p: Plan, *, progress=True, log_samples=False, procs) -> tuple[dict, list, float]:
    """Score what the plan left, appending each finished batch to the store; returns the new records by id,
    the backend's batch sizes reached per task, and the seconds it took."""
    main = procs.is_main_process
    new: dict[str, dict] = {}
    batch_used: list[int] = []
    n_todo = sum(len(v) for v in p.todo.values())
    label = f"{p.settings.output_name(backend.info()['name_or_path'])} {p.settings.shots}-shot"
    if procs.num_processes > 1:
        label += f" [process {procs.process_index + 1}/{procs.num_processes}]"

    def remember_letter_ids(ids: dict | None) -> None:
        """Record the letter token ids in the sidecar as soon as known (a resumed run checks them)."""
        if ids and p.letter_ids and p.letter_ids != ids:
            raise ResumeError(f"letter token ids changed: {p.letter_ids} -> {ids}")
        if ids:
            p.letter_ids = ids
        if main and p.store is not None and ids and p.store.letter_token_ids != ids:
            p.store.letter_token_ids = ids
            p.store.write_meta()

    t0 = time.perf_counter()
    show = progress and main and n_todo > 0
    with tqdm(total=n_todo, desc=label, unit="q", disable=not show, file=sys.stderr) as bar:
        for task, rows in p.todo.items():
            if not rows:
                continue
            bar.set_postfix_str(task)

            def on_batch(recs: list[dict]) -> None:
                for r in recs:
                    r["item_sha256"], r["fewshot_sha256"] = p.expected[r["id"]]
                    r["block_sha256"] = p.blocks[r["id"]]
                    new[r["id"]] = r
                if p.store is not None:
                    p.store.append(recs)

            for blk in _split_by_block(rows, p.blocks):  # one backend call per block: its batches never vary
                score_task(backend, p.settings, task, blk, questions.exemplars.get(task, []), progress=bar,
                           on_batch=on_batch, log_samples=log_samples)
            stats = backend.stats()
            if stats.get("batch_size_used") is not None:
                batch_used.append(stats["batch_size_used"])
            remember_letter_ids(stats.get("letter_token_ids"))
    return new, batch_used, time.perf_counter() - t0


def assemble(backend: Backend, questions, p: Plan, new: dict, batch_used: list, seconds: float, *, procs) -> dict:
    """Merge the processes' records, rewrite the predictions in dataset order, build and write the results."""
    per_process = None
    if procs.num_processes > 1:  # every process gets every process's records
        shards = procs.gather([(list(new.values()), p.letter_ids, batch_used)])
        new = {r["id"]: r for recs, _, _ in shards for r in recs}
        per_process = [len(recs) for recs, _, _ in shards]
        seen_ids = {json.dumps(ids, sort_keys=True) for _, ids, _ in shards if ids}
        if len(seen_ids) > 1:
            raise ResumeError(f"processes resolved different letter token ids: {sorted(seen_ids)}")
        ids = next((ids for _, ids, _ in shards if ids), p.letter_ids)
        batch_used = [b for _, _, used in shards for b in used]
        if ids:  # resolved by another process when the main one had nothing to score
            p.letter_ids = ids
            if procs.is_main_process and p.store is not None and p.store.letter_token_ids != ids:
                p.store.letter_token_ids = ids
                p.store.write_meta()
    all_records = {**p.done, **new}
    ordered = [all_records[i] for i in p.wanted_ids]
    if procs.is_main_process and p.store is not None:
        wanted = set(p.wanted_ids)
        p.store.finalize(ordered, [r for i, r in p.done.items() if i not in wanted])
    stats = backend.stats()
    setting = {
        **p.settings.block(),
        **{k: v for k, v in stats.items() if k not in ("batch_size_used", "letter_token_ids")},
        "letter_token_ids": p.letter_ids if p.settings.mode == "letter" else None,
        "batch_size_used": min(batch_used) if batch_used else None,  # smaller after out-of-memory back-off
        "max_length": backend.context_length(),
    }
    data = {
        "path": questions.data_path,
        "files_sha256": questions.files_for(p.settings.shots),
        "n_items": len(ordered),
        "limit": questions.limit,
        "missing_tasks": questions.missing_tasks,
    }
    resumed = sum(1 for i in p.wanted_ids if i in p.done)
    timing = {
        "seconds": round(seconds, 3),
        "items_scored": len(new),
        "items_resumed": resumed,
        "items_retried": p.retried,
        "items_per_second": round(len(new) / seconds, 3) if new and seconds > 0 else None,
    }
    results = build_results(
        ordered, model_info=backend.info(), setting=setting, data=data, timing=timing,
        predictions_file=str(p.pred_file) if p.pred_file else None, n_available=questions.n_available,
        prompt=p.settings.prompt,
    )
    if questions.missing_tasks:
        results["complete"] = False
    if p.settings.circular:  # items were expanded into their rotations: add plain and circular accuracy

        add_circular_figures(results, ordered)
    if procs.num_processes > 1:
        results["setting"]["processes"] = procs.num_processes
        results["timing"]["items_per_process"] = per_process
    if p.pred_file is not None:
        if procs.is_main_process:
            atomic_write(results_path(p.pred_file), json.dumps(results, ensure_ascii=False, indent=2))
    else:
        results["predictions"] = ordered
    return results


def run_setting(backend: Backend, questions, settings: Settings, *, output_dir: str | Path | None = None,
                progress: bool = True, overwrite: bool = False, log_samples: bool = False, processes=None,
                repair: bool = False) -> dict:
    """Score one setting over a :class:`~ancientbench.dataset.QuestionSet`, resuming from disk: plan -> score ->
    assemble. Under several processes every process scores a shard of each task's remaining items and gets
    the merged results; only the main process writes the predictions and results files."""
    procs = processes or distributed.init()
    p = plan(backend, questions, settings, output_dir=output_dir, overwrite=overwrite, repair=repair, procs=procs)
    try:
        new, batch_used, seconds = score(backend, questions, p, progress=progress, log_samples=log_samples, procs=procs)
        return assemble(backend, questions, p, new, batch_used, seconds, procs=procs)
    finally:
        if p.lock is not None:
            p.lock.release()


# --------------------------------------------------------------------------------------------- entry
