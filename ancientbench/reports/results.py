"""Reading results files and their predictions files, for every report: ``report``, ``compare``, suites.

A :class:`Result` is one ``results_<k>shot.json`` with the predictions it was computed from, checked against
each other task by task (figures recomputed with :func:`ancientbench.aggregate.aggregate`), and a row label
unique within its shot setting. A results file whose model is "Human" (``ancientbench human``) is a reference row.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..aggregate import aggregate
from ..backends.base import DEFAULT_BACKEND, non_default_backend
from ..errors import AncientBenchError
from ..evaluation.layout import RESULTS_GLOB, predictions_path
from ..letters import from_predictions
from ..paths import HUMAN_NAME
from ..schema import not_utf8
from ..tasks import LETTERS, TASK_BY_NAME, user_task_problem


class ReportError(AncientBenchError, ValueError):
    """A results or predictions file that cannot be used; the message names the file (and line/field)."""


@dataclass
class Result:
    """One results file with its predictions, as read from disk."""

    path: Path
    data: dict
    predictions: list[dict]
    label: str = ""
    figures: dict = field(default_factory=dict)  # aggregate() recomputed from the predictions
    ci: dict = field(default_factory=dict)  # aggregate.bootstrap_ci() of the same
    letters: dict = field(default_factory=dict)  # letters.from_predictions(): answer shares and the not-answering flag

    @property
    def shots(self) -> int:
        return int(self.data["setting"]["shots"])

    @property
    def is_human(self) -> bool:
        return self.data["model"].get("name_or_path") == HUMAN_NAME

    @property
    def shot_independent(self) -> bool:
        """A row that reads no exemplars (the reference rows: chance, Mandarin reader, the options-only and stem-reading predictors, AI examinee):
        its figures are the same at every shot setting, so it is reported once."""
        return bool(self.data["model"].get("reference_row")) or self.data["setting"].get("mode") == "reference"

    @property
    def model_key(self) -> tuple:
        """What identifies 'the same model and scoring convention' across shot settings."""
        m, s = self.data["model"], self.data["setting"]
        return (m.get("name_or_path"), m.get("revision"), m.get("weights_sha256"), s.get("letter_style"), s.get("chat"),
                bool(s.get("circular")), s.get("backend", DEFAULT_BACKEND), s.get("mode", "letter"))


# ----------------------------------------------------------------------------------------------------
# Reading results


def collect_result_files(paths: list[str | Path]) -> list[Path]:
    """Expand the command line's RESULTS (files, or folders searched recursively) into results files."""
    found: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            hits = sorted(p.rglob(RESULTS_GLOB))
            if not hits:
                raise ReportError(f"{p}: folder holds no {RESULTS_GLOB} file")
            found.extend(hits)
        elif p.is_file():
            found.append(p)
        else:
            raise ReportError(f"{p}: no such file or folder")
    unique: list[Path] = []
    seen: set[Path] = set()
    for p in found:
        r = p.resolve()
        if r not in seen:
            seen.add(r)
            unique.append(p)
    return unique


def _predictions_path(results_path: Path, data: dict) -> Path:
    """Where a results file's predictions are: as recorded (absolute, or relative to the results file's
    folder or the current folder), else ``predictions_<k>shot.jsonl`` beside it."""
    shots = data.get("setting", {}).get("shots")
    name = data.get("predictions_file")
    candidates = []
    if name:
        p = Path(name)
        candidates += [p] if p.is_absolute() else [results_path.parent / p.name, results_path.parent / p, p]
    candidates.append(predictions_path(results_path.parent, shots))
    for c in candidates:
        if c.is_file():
            return c
    return candidates[0]


def read_predictions(path: Path) -> list[dict]:
    """Read a predictions JSONL, checking each line's fields; errors name the file, line and field."""
    if not path.is_file():
        raise ReportError(f"{path}: predictions file not found")
    rows: list[dict] = []
    ids: dict[str, int] = {}
    with path.open("rb") as fh:
        for line_no, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ReportError(f"{path}, line {line_no}: {not_utf8(e, of_line=True)}") from None
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ReportError(f"{path}, line {line_no}: not valid JSON ({e.msg})") from None
            if not isinstance(row, dict):
                raise ReportError(f"{path}, line {line_no}: expected a JSON object")
            for f in ("id", "task", "gold", "pred"):
                if f not in row:
                    raise ReportError(f"{path}, line {line_no}, field {f!r}: missing")
            if row["task"] not in TASK_BY_NAME and user_task_problem(row["task"]) is not None:  # a user task's row passes
                raise ReportError(f"{path}, line {line_no}, field 'task': unknown task {row['task']!r}")
            if row["gold"] not in LETTERS:
                raise ReportError(f"{path}, line {line_no}, field 'gold': {row['gold']!r} is not one of A-D")
            if row["pred"] is not None and row["pred"] not in LETTERS:  # null: no answer (e.g. too long), counted wrong
                raise ReportError(f"{path}, line {line_no}, field 'pred': {row['pred']!r} is not one of A-D or null")
            lp = row.get("logprobs")
            if lp is not None and not (
                isinstance(lp, list) and len(lp) == 4 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in lp)
            ):
                raise ReportError(f"{path}, line {line_no}, field 'logprobs': expected four numbers or null")
            if row["id"] in ids:
                raise ReportError(f"{path}, line {line_no}, field 'id': duplicate id {row['id']!r} (first at line {ids[row['id']]})")
            ids[row["id"]] = line_no
            rows.append(row)
    if not rows:
        raise ReportError(f"{path}: predictions file is empty")
    return rows


def _run_items(predictions: list[dict], tasks: dict) -> list[dict]:
    """The predictions that belong to the results file's run.

    ``ancientbench eval`` writes a setting's predictions file in dataset order and keeps records of items
    outside the latest run (e.g. from an earlier run without ``--limit``) after them, so each task's run
    items are its first ``total`` records in the file; tasks the results file does not list are dropped.
    """
    taken: dict[str, int] = {}
    out = []
    for p in predictions:
        row = tasks.get(p["task"])
        if not isinstance(row, dict) or not isinstance(row.get("total"), int):
            continue
        if taken.get(p["task"], 0) < row["total"]:
            taken[p["task"]] = taken.get(p["task"], 0) + 1
            out.append(p)
    return out


def load_result(path: str | Path) -> Result:
    """Read one results file and its predictions, and check that the two agree task by task."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: not valid JSON ({e.msg}, line {e.lineno})") from None
    except UnicodeDecodeError as e:
        raise ReportError(f"{path}: {not_utf8(e)}") from None
    except OSError as e:
        raise ReportError(f"{path}: cannot read ({e.strerror})") from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: expected a JSON object")
    for key in ("model", "setting", "tasks"):
        if not isinstance(data.get(key), dict):
            raise ReportError(f"{path}, field {key!r}: missing or not an object (is this an ancientbench results file?)")
    if "name_or_path" not in data["model"]:
        raise ReportError(f"{path}, field 'model.name_or_path': missing")
    if not isinstance(data["setting"].get("shots"), int):
        raise ReportError(f"{path}, field 'setting.shots': missing or not an integer")
    predictions = _run_items(read_predictions(_predictions_path(path, data)), data["tasks"])
    figures = aggregate([p["pred"] == p["gold"] for p in predictions], [p["task"] for p in predictions])
    for task, row in data["tasks"].items():
        got = figures["tasks"].get(task)
        if got is None or (got["correct"], got["total"]) != (row.get("correct"), row.get("total")):
            have = f"{got['correct']}/{got['total']}" if got else "no items"
            raise ReportError(
                f"{path}, field 'tasks.{task}': results say {row.get('correct')}/{row.get('total')} correct but the "
                f"predictions file has {have}; the two files do not belong together"
            )
    if not predictions:
        raise ReportError(f"{path}: the predictions file holds none of the results' items")
    return Result(path=path, data=data, predictions=predictions, figures=figures, letters=from_predictions(predictions))


def display_name(data: dict) -> str:
    """A short row label: hub ids as they are, local folders by their last component."""
    name = str(data["model"]["name_or_path"]).rstrip("/\\")
    if os.path.isabs(name) or name.startswith((".", "~")):
        name = Path(name).name or name
    return name


def label_results(results: list[Result]) -> None:
    """Give each result a row label, unique within its shot setting (adding what tells them apart)."""
    for r in results:
        r.label = display_name(r.data) + (" (circular, all rotations)" if r.data.get("circular") else "")
    by_setting: dict[tuple[int, str], list[Result]] = {}
    for r in results:
        by_setting.setdefault((r.shots, r.label), []).append(r)
    for group in by_setting.values():
        if len(group) < 2:
            continue
        for r in group:
            s, m = r.data["setting"], r.data["model"]
            extra = []
            if non_default_backend(s.get("backend")):
                extra.append(s["backend"])
            if s.get("mode", "letter") != "letter":
                extra.append(f"{s['mode']} mode")
            if s.get("chat"):
                extra.append("chat")
            if s.get("letter_style") not in (None, "bare"):
                extra.append(f"letters {s.get('letter_style')!r}")
            if m.get("revision"):
                extra.append(f"rev {str(m['revision'])[:10]}")
            if extra:
                r.label += " (" + ", ".join(extra) + ")"
        seen: dict[str, int] = {}
        for r in group:
            seen[r.label] = seen.get(r.label, 0) + 1
            if seen[r.label] > 1:
                r.label += f" #{seen[r.label]}"


def figure(r: Result, kind: str, key: str) -> tuple[float | None, list[float] | None]:
    """A result's value and interval for a table cell: ``kind`` 'competency' (key: competency or 'average') or 'task'."""
    if kind == "competency":
        if key == "average":
            return r.figures["average"], r.ci.get("average")
        return r.figures["competencies"].get(key), r.ci.get("competencies", {}).get(key)
    row = r.figures["tasks"].get(key)
    return (row["accuracy"] if row else None), r.ci.get("tasks", {}).get(key)
