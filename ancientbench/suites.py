"""``ancientbench run SUITE.yaml``: run models x backends x modes x shots from one file, resumable per cell,
and end with one combined report (the paper's Table 2 and Table 3 when the suite has 0- and 5-shot cells).

A suite file (YAML; layout and every key in ``docs/backends.md``, example ``configs/paper.yaml``)::

    output: results/paper            # results folder (relative paths: to the current folder, as for eval)
    report: {out: report/paper}      # the combined report's folder (default <output>/report)
    defaults: {shots: [0, 5], batch_size: auto}
    models:
      - {model: Qwen/Qwen2.5-7B}
      - {model: Qwen/Qwen2.5-7B-Instruct, backend: openai, base_url: "http://127.0.0.1:8000/v1", mode: generate}

Every model entry (over ``defaults``) is expanded into cells: one per backend x mode x shots (each of the
three may be a list). A cell is one ``evaluate_model`` setting with its own predictions and results files in
``<output>/``, so a rerun resumes it like ``ancientbench eval`` does (items already scored are kept). The
suite also keeps ``<output>/suite_state.json``: a cell found there with the same options, data files and
results file is skipped without loading its model. A cell that fails with a user error (a server down, a
model not found) is reported and the others still run; the command then exits with status 1 after writing
the report of the cells that finished. Rows are labelled ``label`` (default: the model's name, plus backend,
mode and chat where they differ from the default), the same label across shots, so the report pairs the
0-shot and 5-shot cells of one row.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, ValidationError, create_model

from . import evaluation
from .aggregate import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED
from .backends.base import BACKENDS, DEFAULT_BACKEND, MODES, backend_config, backend_for, get_backend, non_default_backend
from .backends.options import config_options
from .dataset import load_questions
from .errors import AncientBenchError
from .evaluation import results_path
from .evaluation.command import backend_options, unused_message
from .evaluation.layout import predictions_path
from .evaluation.settings import Settings, SettingsError
from .fileio import atomic_write
from .reports.report import build_report
from .reports.results import load_result
from .schema import not_utf8

STATE_FILE = "suite_state.json"
LISTABLE = ("backend", "mode", "shots")
# model-entry keys that are evaluate_model keywords; the backends' own options (BACKEND_KEYS) go to their config
EVAL_KEYS = ("tasks", "limit", "data", "fewshot_data", "chat", "letter_style", "max_new_tokens", "log_samples")


def backend_keys() -> dict[str, str]:
    """Suite key -> backend config field, for every option a registered backend declares (``backend_options`` is
    ``--backend-option``'s); derived from the backends' config classes."""
    return {opt.suite_key: name for name, (opt, _) in backend_options().items()}


def entry_keys() -> tuple[str, ...]:
    return ("model", "label", "output", *LISTABLE, *EVAL_KEYS, *backend_keys())



TOP_KEYS = ("name", "output", "report", "defaults", "models")
REPORT_KEYS = ("out", "plots", "resamples", "seed", "bins")
DEFAULTS = {"backend": DEFAULT_BACKEND, "mode": "letter", "shots": [0, 5]}
# what a cell may fail with that the user can fix (as cli.main; bugs keep their traceback); ANCIENTBENCH_DEBUG=1 raises
CELL_ERRORS = (AncientBenchError,)


class SuiteError(AncientBenchError, ValueError):
    """A suite file that cannot be run; the message names the file, the model entry and the key."""


@dataclass(frozen=True)
class Cell:
    """One setting of a suite: a model on a backend in a mode at a number of shots."""

    label: str
    model: str
    backend: str
    mode: str
    shots: int
    options: dict = field(default_factory=dict, hash=False, compare=False)  # EVAL_KEYS and backend keys given

    @property
    def key(self) -> str:
        return f"{self.label} | {self.backend} | {self.mode} | {self.shots}-shot"

    def spec_sha256(self) -> str:
        """Hash of everything the suite file says about this cell (a changed option re-enters the cell)."""
        spec = {"model": self.model, "backend": self.backend, "mode": self.mode, "shots": self.shots,
                **{k: v for k, v in self.options.items() if k != "api_key_env"}}
        text = json.dumps(spec, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Suite:
    path: Path
    output: Path
    report: dict
    cells: list[Cell]
    name: str = ""


def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _default_label(model: str, backend: str, mode: str, chat: bool) -> str:
    name = model.rstrip("/\\")
    if "/" in name and (Path(name).is_absolute() or name.startswith((".", "~"))):
        name = Path(name).name
    extra = [x for x in (non_default_backend(backend),
                         mode if mode != "letter" else None,
                         "chat" if chat and mode != "generate" else None) if x]
    return name + (f" ({', '.join(extra)})" if extra else "")


def _schemas():
    """The suite file's value types (pydantic, strict: ``chat: "no"`` or ``limit: "ten"`` is an error, not a truthy
    string or a crash after the cells ran); the backend options' types come from the backends' config classes."""

    class Entry(BaseModel):
        model_config = ConfigDict(strict=True, extra="forbid")
        model: str = Field(min_length=1)
        label: Optional[str] = None
        output: Optional[str] = None
        backend: Union[str, list[str]]
        mode: Union[str, list[str]]
        shots: Union[NonNegativeInt, list[NonNegativeInt]]
        tasks: Optional[Union[str, list[str]]] = None
        limit: Optional[PositiveInt] = None
        data: Optional[str] = None
        fewshot_data: Optional[str] = None
        chat: bool = False
        letter_style: Optional[str] = None
        max_new_tokens: Optional[PositiveInt] = None
        log_samples: bool = False

    declared = {opt.suite_key: (opt.suite_type, None) for opt, _ in backend_options().values()}
    entry = create_model("Entry", __base__=Entry, **declared)

    class Report(BaseModel):
        model_config = ConfigDict(strict=True, extra="forbid")
        out: Optional[str] = None
        plots: bool = True
        resamples: Optional[PositiveInt] = None
        seed: Optional[NonNegativeInt] = None
        bins: Optional[PositiveInt] = None

    return entry, Report


def _check_types(schema, value: dict, where: str) -> None:
    try:
        schema.model_validate(value)
    except ValidationError as e:
        err = e.errors()[0]
        key = str(err["loc"][0]) if err["loc"] else "?"
        raise SuiteError(f"{where}, key {key!r}: {err['msg']} (got {err.get('input')!r})") from None


def load_suite(path: str | Path, *, output: str | Path | None = None) -> Suite:
    """Read and check a suite file; errors name the file, the model entry and the key."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SuiteError(f"{path}: cannot read ({e.strerror})") from None
    except yaml.YAMLError as e:
        raise SuiteError(f"{path}: not valid YAML ({e})") from None
    except UnicodeDecodeError as e:
        raise SuiteError(f"{path}: {not_utf8(e)}") from None
    if not isinstance(raw, dict):
        raise SuiteError(f"{path}: expected a mapping with a 'models' list")
    unknown = sorted(set(raw) - set(TOP_KEYS))
    if unknown:
        raise SuiteError(f"{path}: unknown key(s) {', '.join(unknown)}; known: {', '.join(TOP_KEYS)}")
    models = raw.get("models")
    if not isinstance(models, list) or not models:
        raise SuiteError(f"{path}, key 'models': give a non-empty list of model entries")
    defaults = raw.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise SuiteError(f"{path}, key 'defaults': expected a mapping")
    report = raw.get("report") or {}
    if not isinstance(report, dict) or set(report) - set(REPORT_KEYS):
        raise SuiteError(f"{path}, key 'report': expected a mapping with keys among {', '.join(REPORT_KEYS)}")
    entry_schema, report_schema = _schemas()
    _check_types(report_schema, report, f"{path}, report")
    for key in ("output", "name"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise SuiteError(f"{path}, key {key!r}: expected a string, got {raw[key]!r}")
    out = Path(output if output is not None else raw.get("output") or "results")

    cells: list[Cell] = []
    for n, entry in enumerate(models, 1):
        where = f"{path}, models[{n}]"
        if isinstance(entry, str):
            entry = {"model": entry}
        if not isinstance(entry, dict):
            raise SuiteError(f"{where}: expected a mapping with at least 'model', or a model name")
        merged = {**DEFAULTS, **defaults, **entry}
        known = entry_keys()
        bad = sorted(set(merged) - set(known))
        if bad:
            raise SuiteError(f"{where}: unknown key(s) {', '.join(bad)}; known: {', '.join(known)}")
        model = merged.get("model")
        if not isinstance(model, str) or not model:
            raise SuiteError(f"{where}, key 'model': missing or not a string")
        for b in _as_list(merged["backend"]):
            if b not in BACKENDS:
                raise SuiteError(f"{where}, key 'backend': unknown backend {b!r}; choose one of {', '.join(BACKENDS)}")
        for m in _as_list(merged["mode"]):
            if m not in MODES:
                raise SuiteError(f"{where}, key 'mode': unknown mode {m!r}; choose one of {', '.join(MODES)}")
        for k in _as_list(merged["shots"]):
            if not isinstance(k, int) or isinstance(k, bool) or k < 0:
                raise SuiteError(f"{where}, key 'shots': expected non-negative integers, got {k!r}")
        opts = merged.get("backend_options", {})
        if not isinstance(opts, dict):
            raise SuiteError(f"{where}, key 'backend_options': expected a mapping of option -> value")
        _check_types(entry_schema, merged, where)
        if isinstance(merged.get("tasks"), str):  # one task or competency named on its own, not its letters
            merged["tasks"] = [merged["tasks"]]
        cells += _entry_cells(where, model, entry, merged)
    seen: dict[str, int] = {}
    for c in cells:
        if c.key in seen:
            raise SuiteError(f"{path}: two cells are both {c.key!r}; give the model entries different 'label's")
        seen[c.key] = 1
    _refuse_shared_files(path, out, cells)
    return Suite(path=path, output=out, report=report, cells=cells, name=str(raw.get("name") or path.stem))


def _entry_cells(where: str, model: str, entry: dict, merged: dict) -> list[Cell]:
    """The cells of one model entry (``merged`` over the defaults): one per backend x mode x shots."""
    backends = _as_list(merged["backend"])
    keys = backend_keys()

    def takes(b: str, key: str) -> bool:
        return keys[key] in config_options(get_backend(backend_for(b, model)).config_class)

    unused = [k for k in keys if k in entry and not any(takes(b, k) for b in backends)]
    if unused:  # as the command line refuses them; the same keys in 'defaults' are for the entries that take them
        raise SuiteError(f"{where}: {unused_message(unused, ', '.join(backends), suite=True)}")
    cells = []
    for b in backends:
        options = {k: merged[k] for k in ("output", *EVAL_KEYS, *keys) if k in merged and (k not in keys or takes(b, k))}
        for m in _as_list(merged["mode"]):
            label = merged.get("label") or _default_label(model, b, m, bool(merged.get("chat")))
            if len(backends) * len(_as_list(merged["mode"])) > 1 and merged.get("label"):
                label = f"{merged['label']} ({', '.join(x for x in (b, m))})"
            for k in _as_list(merged["shots"]):
                cells.append(Cell(label=str(label), model=model, backend=b, mode=m, shots=k, options=options))
    return cells


def cell_output(cell: Cell, output: Path) -> Path:
    """The results folder of a cell: the suite's, or the entry's own ``output`` (relative to the suite's)."""
    return output / cell.options["output"] if cell.options.get("output") else output


def _results_file(cell: Cell, output: Path) -> Path | None:
    """The results file ``evaluate_model`` will write for a cell (None where its options are invalid: the cell
    then fails with its own message when it runs)."""
    try:
        s = Settings(backend=cell.backend, mode=cell.mode, shots=cell.shots,
                     letter_style=cell.options.get("letter_style") or "bare", chat=bool(cell.options.get("chat")))
    except SettingsError:
        return None
    recorded = get_backend(backend_for(cell.backend, cell.model)).results_name(cell.model)
    return results_path(predictions_path(s.folder(cell_output(cell, output), recorded), cell.shots))


def _refuse_shared_files(path: Path, output: Path, cells: list[Cell]) -> None:
    """Two cells writing one results file would overwrite each other (and resume each other's predictions)."""
    owner: dict[Path, Cell] = {}
    for c in cells:
        f = _results_file(c, output)
        if f is None:
            continue
        if f in owner:
            raise SuiteError(f"{path}: cells {owner[f].key!r} and {c.key!r} would both write {f}; give one of the two "
                             f"model entries its own 'output' folder (inside the suite's), or score them in one entry")
        owner[f] = c


# ------------------------------------------------------------------------------------------------- state


def _read_state(output: Path) -> dict:
    p = output / STATE_FILE
    if not p.is_file():
        return {}
    try:
        state = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}  # a torn state file only costs re-entering the cells (eval resumes them from predictions)
    return state if isinstance(state, dict) else {}


def _write_state(output: Path, state: dict) -> None:
    atomic_write(output / STATE_FILE, json.dumps(state, ensure_ascii=False, indent=1, sort_keys=True))


def _data_sha256(cell: Cell) -> dict[str, str]:
    """The data files this cell reads, with their hashes (cheap: no model is loaded)."""
    o = cell.options
    with warnings.catch_warnings():  # eval itself warns about tasks without data once, when it runs
        warnings.simplefilter("ignore")
        qs = load_questions(o.get("tasks"), o.get("data"), shots=[cell.shots], fewshot_data=o.get("fewshot_data"),
                            limit=o.get("limit"))
    return {**qs.files_for(cell.shots), "limit": str(o.get("limit"))}


def _is_done(cell: Cell, state: dict) -> Path | None:
    entry = state.get(cell.key)
    if not entry or entry.get("spec_sha256") != cell.spec_sha256():
        return None
    results = Path(entry.get("results_file", ""))
    if not results.is_file() or entry.get("data_sha256") != _data_sha256(cell):
        return None
    return results


# -------------------------------------------------------------------------------------------------- run


def run_cell(cell: Cell, output: Path, *, progress: bool = True) -> Path:
    """Score one cell with ``evaluate_model`` (which resumes from its predictions) and return its results file."""
    o = dict(cell.options)
    kwargs: dict[str, Any] = {k: o[k] for k in EVAL_KEYS if k in o}
    # only what differs from eval's defaults is passed, so a plain hf letter suite needs nothing more
    if cell.mode != "letter":
        kwargs["mode"] = cell.mode
    values = {field: o[key] for key, field in backend_keys().items() if o.get(key) is not None}
    config = backend_config(backend_for(cell.backend, cell.model), cell.model, values)
    results = evaluation.evaluate_model(cell.model, shots=[cell.shots], output_dir=cell_output(cell, output), progress=progress,
                             backend=cell.backend, backend_config=config, **kwargs)
    return results_path(results[cell.shots]["predictions_file"])


def run_suite(suite: Suite, *, progress: bool = True, only: list[str] | None = None, report: bool = True,
              out=None) -> dict:
    """Run every cell not already done, then write the combined report; returns a summary dict with
    ``cells`` (key -> results file or error) and ``report`` (the report's summary, if written). ``out``: where the
    progress lines go (default: the ``sys.stdout`` of the call, not of the import)."""
    out = out or sys.stdout
    state = _read_state(suite.output)
    status: dict[str, dict] = {}
    cells = [c for c in suite.cells if not only or c.label in only]
    if only and not cells:
        raise SuiteError(f"{suite.path}: no cell is labelled {', '.join(only)}; labels: "
                         f"{', '.join(sorted({c.label for c in suite.cells}))}")
    for n, cell in enumerate(cells, 1):
        head = f"[{n}/{len(cells)}] {cell.key}"
        done = _is_done(cell, state)
        if done is not None:
            print(f"{head}: done ({done})", file=out)
            status[cell.key] = {"results_file": str(done), "skipped": True}
            continue
        print(f"{head}: running", file=out, flush=True)
        try:
            results_file = run_cell(cell, suite.output, progress=progress)
        except CELL_ERRORS as err:
            if os.environ.get("ANCIENTBENCH_DEBUG"):
                raise
            print(f"{head}: failed: {err}", file=out)
            status[cell.key] = {"error": str(err)}
            continue
        state[cell.key] = {"spec_sha256": cell.spec_sha256(), "data_sha256": _data_sha256(cell),
                           "results_file": str(results_file), "label": cell.label}
        _write_state(suite.output, state)
        status[cell.key] = {"results_file": str(results_file), "skipped": False}
    summary: dict = {"cells": status}
    finished = [(c, Path(status[c.key]["results_file"])) for c in cells if "results_file" in status[c.key]]
    if report and finished:
        summary["report"] = combined_report(suite, finished, out=out)
    return summary


def combined_report(suite: Suite, finished: list[tuple[Cell, Path]], *, out=None) -> dict:
    """One ``ancientbench report`` over the suite's cells, rows labelled by cell label (see module doc)."""
    out = out or sys.stdout

    results = []
    for cell, path in finished:
        r = load_result(path)
        # the report labels rows by model name; the cell label also tells backend/mode apart (files unchanged)
        results.append(replace(r, data={**r.data, "model": {**r.data["model"], "name_or_path": cell.label}}))
    cfg = suite.report
    report_dir = Path(cfg.get("out") or suite.output / "report")
    summary = build_report(results, report_dir, n_resamples=int(cfg.get("resamples", DEFAULT_BOOTSTRAP_RESAMPLES)),
                           seed=int(cfg.get("seed", DEFAULT_BOOTSTRAP_SEED)), bins=int(cfg.get("bins", 10)),
                           plots=bool(cfg.get("plots", True)))
    print("\n" + summary["markdown"], file=out)
    print(f"\nwrote {', '.join(summary['files'])} to {report_dir}/", file=out)
    return summary


# ---------------------------------------------------------------------------------------------- command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("suite", metavar="SUITE.yaml", help="suite file: models x backends x modes x shots (docs/backends.md)")
    parser.add_argument("--output", "--out", dest="output", default=None, help="results folder (default: the suite's 'output', else ./results)")
    parser.add_argument("--only", nargs="+", default=None, metavar="LABEL", help="run only the cells of these row labels")
    parser.add_argument("--list", action="store_true", help="list the cells and whether each is done; run nothing")
    parser.add_argument("--no-report", action="store_true", help="run the cells, write no combined report")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    suite = load_suite(args.suite, output=args.output)
    if args.list:
        state = _read_state(suite.output)
        for cell in suite.cells:
            print(f"{cell.key}: {'done' if _is_done(cell, state) else 'to run'}")
        return 0
    summary = run_suite(suite, progress=not args.no_progress, only=args.only, report=not args.no_report)
    failed = [k for k, v in summary["cells"].items() if "error" in v]
    if failed:
        print(f"\n{len(failed)} cell(s) failed: {'; '.join(failed)}. Fix the cause and run the same command again: "
              "finished cells are kept.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # python -m ancientbench.suites SUITE.yaml, until `run` is in cli.COMMANDS
    _parser = argparse.ArgumentParser(prog="ancientbench run", description=__doc__.strip().splitlines()[0])
    add_arguments(_parser)
    _args = _parser.parse_args()
    try:
        sys.exit(run(_args))
    except AncientBenchError as _err:
        if os.environ.get("ANCIENTBENCH_DEBUG"):
            raise
        print(f"error: {_err}", file=sys.stderr)
        sys.exit(2)
