"""``ancientbench export-lm-eval DIR``: lm-evaluation-harness (0.4.x) task YAMLs for AncientBench.

Writes one task per config (``ancientbench_<task>``), one group per competency
(``ancientbench_competency_<competency>``: the unweighted mean of its tasks) and the group ``ancientbench``
(every task). Run them with ``lm_eval --include_path DIR --tasks ancientbench --num_fewshot 5 ...``.

How lm-eval averages: a group's score is computed over its *leaf tasks* (lm-eval 0.4.13), here unweighted
(``weight_by_size: false``). So each competency group is exactly the paper's competency score (the mean of
its tasks), but the ``ancientbench`` group is the mean of the ten task accuracies, not the paper's average
(the mean of the four competencies, whose task counts differ: 2, 3, 2, 3). :func:`scores_from_lm_eval` turns
lm-eval's results into the paper's figures with :mod:`ancientbench.aggregate`.

The prompts are :mod:`ancientbench.prompts`' text, character for character: the instruction line is the
task's ``description``, ``doc_to_text`` is the question block ending in ``答案是：``, exemplars are the first k
rows of the ``dev`` split (``first_n`` sampler) joined with a blank line, and the scored continuation is the
bare letter (``target_delimiter: ""``, the paper's convention; ``--letter-style space`` writes lm-eval's
``" A"`` instead). lm-eval's ``acc`` (argmax of the letters' log-likelihoods) then picks the same letter as
``ancientbench eval`` (tests/test_lm_eval_export.py checks this item by item on a tiny model).

The folder is portable: the task files are copied into ``DIR/data/<task>/`` and read by a small loader
``DIR/ancientbench_data.py`` (lm-eval's ``custom_dataset: !function``) that finds them beside itself, so the
folder can be moved to another machine or path; no path of this machine is written. Alternatively the data come
from a Hub dataset repository with ``--hub-id ORG/NAME`` (published with ``ancientbench push-to-hub``).

DIR must be new, empty, or an earlier export: ``.ancientbench-export.json`` lists the files an export wrote (with
their sha256), and a later export replaces or removes only those, refusing (before writing anything) a folder of
the user's, a file of the user's where it would write, or one of its files edited since.

:func:`scores_from_lm_eval` marks a run made with ``--limit`` (fewer items evaluated than the task has) as not
``complete`` and lists the shortfall under ``limited``, as ``ancientbench eval`` does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path, PurePosixPath

import yaml

from ..aggregate import aggregate
from ..argtypes import add_export_arguments
from ..fileio import atomic_write
from ..paths import DATASET_PATH
from ..prompts import EXEMPLAR_SEPARATOR, QUESTION_TEMPLATE, TEMPLATE_SHA256, TEMPLATE_VERSION, instruction, letter_prefix
from ..schema import split_file
from ..tasks import COMPETENCIES, COMPETENCY_TASKS, LETTERS, TASK_NAMES, get_task
from .exporting import ExportError, checked_letter_prefix, present_tasks, run_export

TASK_PREFIX = "ancientbench_"
GROUP = "ancientbench"
VERSION = 1.0
LOADER_MODULE = "ancientbench_data"
LOADER_SOURCE = '''"""Loads the AncientBench task data copied beside these YAMLs (written by `ancientbench export-lm-eval`)."""

from pathlib import Path

import datasets

HERE = Path(__file__).resolve().parent


def load(ancientbench_task, **_metadata):
    """lm-eval's custom_dataset hook: the task's test and dev splits from data/<task>/ next to this file."""
    files = {split: str(HERE / "data" / ancientbench_task / f"{split}.jsonl") for split in ("test", "dev")}
    return datasets.load_dataset("json", data_files=files)
'''


MANIFEST = ".ancientbench-export.json"  # the files an export wrote: the only ones a later export may replace or remove


def task_name(task: str) -> str:
    return f"{TASK_PREFIX}{task}"


def competency_group(competency: str) -> str:
    return f"{TASK_PREFIX}competency_{competency}"


def doc_to_text_template() -> str:
    """The question block of :mod:`ancientbench.prompts` as a Jinja template over the item's columns."""
    return QUESTION_TEMPLATE.format(question="{{question}}", A="{{A}}", B="{{B}}", C="{{C}}", D="{{D}}")


def task_config(task: str, *, hub_id: str | None = None, letter_style: str = "bare") -> dict:
    """The lm-eval config of one task: config ``task`` of ``hub_id``, else the copy in ``data/<task>/`` beside the
    YAML, read by ``ancientbench_data.load`` (the ``custom_dataset`` line is added when the YAML is written)."""
    get_task(task)
    cfg: dict = {"task": task_name(task)}
    if hub_id:
        cfg.update(dataset_path=hub_id, dataset_name=task)
    else:
        cfg.update(dataset_kwargs={"ancientbench_task": task})
    cfg.update(
        test_split="test",
        fewshot_split="dev",
        fewshot_config={"sampler": "first_n"},
        output_type="multiple_choice",
        description=instruction(task),
        doc_to_text=doc_to_text_template(),
        doc_to_choice=list(LETTERS),
        doc_to_target="answer",
        target_delimiter=letter_prefix(letter_style),
        fewshot_delimiter=EXEMPLAR_SEPARATOR,
        metric_list=[{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
        metadata={
            "version": VERSION,
            "prompt_template": TEMPLATE_VERSION,
            "prompt_template_sha256": TEMPLATE_SHA256,
            "letter_style": letter_style,
        },
    )
    return cfg


def _group(name: str, members: list[str]) -> dict:
    return {
        "group": name,
        "task": members,
        # unweighted: a competency is the mean of its tasks, the benchmark the mean of its competencies
        "aggregate_metric_list": [{"metric": "acc", "aggregation": "mean", "weight_by_size": False}],
        "metadata": {"version": VERSION},
    }


def export(
    out_dir: str | Path,
    *,
    data: str | Path | None = None,
    hub_id: str | None = None,
    letter_style: str = "bare",
    tasks: list[str] | None = None,
) -> dict[str, Path]:
    """Write the YAMLs (and, for local data, the data copy and its loader); returns ``{task or group name: path}``.
    Tasks without both split files are left out. ``out_dir`` must be new, empty, or an earlier export: only the files
    its manifest lists are replaced or removed (so another --tasks or a Hub export leaves no stale task behind, and
    a file of the user's is never touched)."""
    checked_letter_prefix(letter_style)
    folder = Path(data or DATASET_PATH)
    present = present_tasks(folder, hub_id, tasks)
    out = Path(out_dir)
    previous, complete = _previous_export(out)
    files, written = _export_files(present, folder, hub_id, letter_style)
    _refuse_what_is_not_ours(out, files, previous, complete)
    _write_manifest(out, {**previous, **{rel: _sha(text) for rel, text in files.items()}}, complete=False)
    for rel, text in files.items():
        atomic_write(out / rel, text)
    for rel in sorted(set(previous) - set(files)):
        _remove(out, rel)
    _write_manifest(out, {rel: _sha(text) for rel, text in files.items()}, complete=True)
    return {name: out / rel for name, rel in written.items()}


def _export_files(present: list[str], folder: Path, hub_id: str | None, letter_style: str) -> tuple[dict[str, str], dict[str, str]]:
    """Every file of the export as ``{relative path: text}``, and ``{task or group name: relative path}`` of the YAMLs."""


    files: dict[str, str] = {}
    written: dict[str, str] = {}

    def dump(name: str, cfg: dict, extra: str = "") -> None:
        files[f"{name}.yaml"] = yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False, width=10_000) + extra
        written[name] = f"{name}.yaml"

    if not hub_id:
        files[f"{LOADER_MODULE}.py"] = LOADER_SOURCE
        for t in present:
            for split in ("test", "dev"):  # byte for byte: decoded and written back unchanged (no newline translation)
                files[f"data/{t}/{split}.jsonl"] = split_file(folder, t, split).read_bytes().decode("utf-8")
    loader_line = "" if hub_id else f"custom_dataset: !function {LOADER_MODULE}.load\n"
    for t in present:
        dump(task_name(t), task_config(t, hub_id=hub_id, letter_style=letter_style), loader_line)
    groups = []
    for comp in COMPETENCIES:
        members = [task_name(t) for t in COMPETENCY_TASKS[comp] if t in present]
        if members:
            dump(f"_{competency_group(comp)}", _group(competency_group(comp), members))
            groups.append(competency_group(comp))
    dump(f"_{GROUP}", _group(GROUP, groups))
    return files, written


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _previous_export(out: Path) -> tuple[dict[str, str], bool]:
    """The files an earlier export into ``out`` wrote (``{relative path: sha256}``) and whether it finished; an
    error for a folder that is neither new, empty nor an export."""
    if not out.exists():
        return {}, True
    if not out.is_dir():
        raise ExportError(f"{out}: exists and is not a folder; choose a new or empty folder")
    manifest = out / MANIFEST
    if not manifest.is_file():
        entries = sorted(p.name for p in out.iterdir())
        if entries:
            raise ExportError(f"{out}: not empty ({', '.join(entries[:3])}{', …' if len(entries) > 3 else ''}) and not a "
                              f"folder written by `ancientbench export-lm-eval` (no {MANIFEST}); choose a new or empty folder")
        return {}, True
    try:
        stored = json.loads(manifest.read_text(encoding="utf-8"))
        files = stored["files"]
        bad = [r for r in files if not isinstance(r, str) or not isinstance(files[r], str) or _unsafe(r)]
        if bad or not isinstance(stored.get("complete"), bool):
            raise ValueError(f"entry {bad[0]!r}" if bad else "no 'complete' flag")
    except (ValueError, KeyError, TypeError, AttributeError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ExportError(f"{manifest}: not a valid export manifest ({e}); move it away, or export into another folder") from None
    return dict(files), stored["complete"]


def _unsafe(rel: str) -> bool:
    p = PurePosixPath(rel)
    return p.is_absolute() or not p.parts or any(x in ("", ".", "..") for x in p.parts) or "\\" in rel


def _refuse_what_is_not_ours(out: Path, files: dict[str, str], previous: dict[str, str], complete: bool) -> None:
    """Refuse before writing anything when a file to be written is the user's, or one of ours was edited since."""
    for rel in files:
        path = out / rel
        if path.exists() and rel not in previous:
            raise ExportError(f"{path}: not written by an earlier export (not in {out / MANIFEST}); move it away, "
                              "or export into another folder")
    for rel, sha in previous.items():
        path = out / rel
        if complete and path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() != sha:
            raise ExportError(f"{path}: changed since the export wrote it; move it away (or restore it), "
                              "or export into another folder")
        if path.exists() and not path.is_file():
            raise ExportError(f"{path}: a folder where the export wrote a file; move it away")


def _remove(out: Path, rel: str) -> None:
    """Remove a file of an earlier export, and the folders it leaves empty (never ``out`` itself)."""
    path = out / rel
    path.unlink(missing_ok=True)
    for parent in path.parents:
        if parent == out or not parent.is_relative_to(out) or any(parent.iterdir()):
            break
        parent.rmdir()


def _write_manifest(out: Path, files: dict[str, str], *, complete: bool) -> None:
    atomic_write(out / MANIFEST, json.dumps({"format": 1, "complete": complete, "files": dict(sorted(files.items()))},
                                            ensure_ascii=False, indent=1) + "\n")


def scores_from_lm_eval(results: dict | str | Path) -> dict:
    """The paper's figures (the :func:`ancientbench.aggregate.aggregate` dict) from lm-eval results of these tasks.

    ``results`` is what ``lm_eval.simple_evaluate`` returns, or the path of the ``results_*.json`` lm-eval
    writes with ``--output_path``. Each task's correct count is its ``acc`` times its evaluated items. A task
    evaluated on fewer items than it has (``--limit``) makes the result not ``complete``; ``limited`` lists
    ``{task: {"effective", "original"}}``.
    """


    if not isinstance(results, dict):
        results = json.loads(Path(results).read_text(encoding="utf-8"))
    correct: list[bool] = []
    tasks: list[str] = []
    limited: dict[str, dict[str, int]] = {}
    for task in TASK_NAMES:
        r = results.get("results", {}).get(task_name(task))
        if r is None:
            continue
        counts = results["n-samples"][task_name(task)]
        n = int(counts["effective"])
        if int(counts.get("original", n)) > n:
            limited[task] = {"effective": n, "original": int(counts["original"])}
        k = round(r["acc,none"] * n)
        correct += [True] * k + [False] * (n - k)
        tasks += [task] * n
    if not tasks:
        raise ExportError("no ancientbench_<task> results in these lm-eval results")
    out = aggregate(correct, tasks)
    out["limited"] = limited
    out["complete"] = bool(out["complete"] and not limited)
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_export_arguments(p, "folder to write the task YAMLs into (give it to lm_eval --include_path)")


def run(args: argparse.Namespace) -> int:
    groups = lambda written: [n[1:] for n in written if n.startswith("_")]  # noqa: E731
    return run_export(
        args, lambda: export(args.out_dir, data=args.data, hub_id=args.hub_id, letter_style=args.letter_style, tasks=args.tasks),
        tasks=lambda written: [t for t in TASK_NAMES if f"ancientbench_{t}" in written],
        wrote=lambda written, tasks: f"wrote {len(tasks)} tasks and {len(groups(written))} groups to {args.out_dir}: "
                                     f"{', '.join(groups(written))}",
        how_to_run=lambda written, tasks: f"run: lm_eval --model hf --model_args pretrained=MODEL --include_path {args.out_dir} "
                                          "--tasks ancientbench --num_fewshot 5" if len(tasks) == len(TASK_NAMES) else None,
        left_out_note="; the groups average the tasks present")
