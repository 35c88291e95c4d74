"""The quiz session: the seeded sample of test items, every answer appended and fsync'd as it is given, and the
results rewritten after each answer in a model's format (``<out>/Human/``). Resuming reads the same files back."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import secrets
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from .. import __version__
from ..aggregate import aggregate
from ..errors import AncientBenchError, DiskFullError
from ..fileio import atomic_write, disk_full
from ..paths import DATASET_PATH, HUMAN_NAME
from ..schema import load_question_file, read_jsonl, reject_duplicate_ids, split_file, validate_rows
from ..tasks import LETTERS, TASK_NAMES

log = logging.getLogger(__name__)

SESSION_VERSION = 1
DEFAULT_N_PER_TASK = 10
PAGE = (Path(__file__).parent / "page.html").read_text(encoding="utf-8")  # what the participant sees (its hash is the "prompt")


class SessionError(AncientBenchError, ValueError):
    """A session that cannot start or resume; the message says what and where."""


def _read_session(path: Path) -> dict:
    """``session.json``, checked field by field (pydantic, strict): a corrupt or hand-edited file is one line."""
    from pydantic import (  # lazy: pydantic costs start-up time; only a human session's files need it
        BaseModel,
        ConfigDict,
        NonNegativeInt,
        PositiveInt,
        ValidationError,
    )

    class Stored(BaseModel):
        model_config = ConfigDict(strict=True, extra="allow")
        version: int
        created: str
        data: str
        data_sha256: str
        n_per_task: PositiveInt
        seed: NonNegativeInt
        items: list[str]

    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        Stored.model_validate(stored)
    except (UnicodeDecodeError, json.JSONDecodeError, ValidationError) as err:
        detail = str(err).splitlines()[0] if not isinstance(err, ValidationError) else "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'top level'}: {e['msg']}" for e in err.errors()[:3])
        raise SessionError(f"{path}: not a valid quiz session ({detail}); move it away to start a new session "
                           f"there, or use another --out") from None
    return stored


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def load_test_items(data: str | Path) -> tuple[dict[str, list[dict]], str]:
    """Test items by task from a dataset folder (``data/<task>/test.jsonl``) or a JSONL question file,
    and a sha256 over the files read."""
    data = Path(data)
    h = hashlib.sha256()
    if data.is_file():
        grouped = load_question_file(data)
        h.update(data.read_bytes())
    elif data.is_dir():
        grouped = {}
        for t in TASK_NAMES:
            path = split_file(data, t, "test")
            if path.is_file():
                grouped[t] = validate_rows(read_jsonl(path), path, task=t)
                h.update(f"{t}/test.jsonl\n".encode())
                h.update(path.read_bytes())
        reject_duplicate_ids((split_file(data, t, "test"), rows) for t, rows in grouped.items())
    else:
        raise SessionError(f"{data}: no such dataset folder or question file")
    if not grouped:
        raise SessionError(f"{data}: no test questions found (expected data/<task>/test.jsonl files or a JSONL question file)")
    return grouped, h.hexdigest()


def sample_plan(grouped: dict[str, list[dict]], n_per_task: int, seed: int) -> list[str]:
    """Item ids to ask: up to n per task, drawn with random.Random(seed), tasks in registry order."""
    rng = random.Random(seed)
    plan: list[str] = []
    for t in TASK_NAMES:
        items = grouped.get(t, [])
        if items:
            plan += [it["id"] for it in rng.sample(items, min(n_per_task, len(items)))]
    return plan


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # some platforms cannot open folders; the file itself was fsync'd
        return
    try:
        os.fsync(fd)
    except OSError:  # fsync on a folder is not supported everywhere (e.g. some network filesystems)
        pass
    finally:
        os.close(fd)




def _append_line(path: Path, line: str) -> None:
    """Append one line, flushed and fsync'd; on any failure (a full disk) the file is cut back to what it was, so
    no partial line is left to be mistaken for an answer."""
    size = path.stat().st_size if path.exists() else 0
    try:
        with disk_full(path), path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        if path.exists():
            os.truncate(path, size)
        raise


class HumanSession:
    """The sampled questions, the answers given so far (on disk), and the results written from them."""

    def __init__(self, out: str | Path, data: str | Path | None = None, n_per_task: int | None = None, seed: int | None = None):
        self.folder = Path(out) / HUMAN_NAME
        self.session_file = self.folder / "session.json"
        self.answers_file = self.folder / "answers.jsonl"
        self.results_file = self.folder / "results_0shot.json"
        self.predictions_file = self.folder / "predictions_0shot.jsonl"
        self.lock = threading.Lock()
        self.served_at: dict[str, float] = {}
        self.token = secrets.token_urlsafe(24)  # per server start; the page carries it, other sites cannot read it
        self.resumed = self.session_file.is_file()
        if self.resumed:
            stored = _read_session(self.session_file)
            given_data = None if data is None else str(Path(data).resolve())
            for name, given in (("data", given_data), ("n_per_task", n_per_task), ("seed", seed)):
                if given is not None and str(given) != str(stored[name]):
                    raise SessionError(
                        f"{self.session_file}: this session was started with {name}={stored[name]!r}, not {given!r}; "
                        "run without that option (or with the same value) to resume, or use another --out for a new session"
                    )
            self.data_path, self.n_per_task, self.seed = stored["data"], stored["n_per_task"], stored["seed"]
            grouped, self.data_sha256 = load_test_items(self.data_path)
            self.data_changed = self.data_sha256 != stored["data_sha256"]
            if self.data_changed:
                log.warning("warning: %s changed since this session started; the sampled questions are kept "
                            "and the answers are scored against the data as it is now", self.data_path)
            self.plan = list(stored["items"])
            self.created = stored["created"]
        else:
            self.data_changed = False
            self.data_path = str(Path(data if data is not None else DATASET_PATH).resolve())
            self.n_per_task = DEFAULT_N_PER_TASK if n_per_task is None else n_per_task
            self.seed = secrets.randbelow(2**31) if seed is None else seed  # unpredictable sample unless asked
            if self.n_per_task < 1:
                raise SessionError(f"--n-per-task must be at least 1, got {self.n_per_task}")
            grouped, self.data_sha256 = load_test_items(self.data_path)
            self.plan = sample_plan(grouped, self.n_per_task, self.seed)
            self.created = _now()
        self.items = {it["id"]: it for rows in grouped.values() for it in rows}
        missing = [i for i in self.plan if i not in self.items]
        if missing:
            raise SessionError(f"{self.session_file}: {len(missing)} sampled questions are no longer in {self.data_path} (e.g. {missing[0]!r})")
        self.index = {item_id: k for k, item_id in enumerate(self.plan)}
        self.folder.mkdir(parents=True, exist_ok=True)
        if not self.resumed:
            atomic_write(
                self.session_file,
                json.dumps(
                    {"version": SESSION_VERSION, "created": self.created, "data": self.data_path, "data_sha256": self.data_sha256,
                     "n_per_task": self.n_per_task, "seed": self.seed, "items": self.plan},
                    ensure_ascii=False, indent=1,
                ),
            )
            _fsync_dir(self.folder)
        self.answers: dict[str, dict] = self._read_answers()
        if self.answers:
            self.write_results()

    # -- answers on disk ---------------------------------------------------------------------------

    def _read_answers(self) -> dict[str, dict]:
        answers: dict[str, dict] = {}
        if not self.answers_file.is_file():
            return answers
        raw = self.answers_file.read_bytes()
        good_end = 0
        lines = raw.split(b"\n")
        for n, line in enumerate(lines, start=1):
            last = n == len(lines)
            if not line.strip():
                if not last:
                    good_end += len(line) + 1
                continue
            try:
                rec = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                if last:  # a line cut short by a crash during the write: it was never acknowledged, drop it
                    log.warning("warning: %s: dropping an incomplete last line (never confirmed to the page)", self.answers_file)
                    with self.answers_file.open("r+b") as fh:
                        fh.truncate(good_end)
                        fh.flush()
                        os.fsync(fh.fileno())
                    break
                raise SessionError(f"{self.answers_file}, line {n}: not valid JSON") from None
            if last:  # valid JSON without its newline: keep it, and finish the line
                with self.answers_file.open("ab") as fh:
                    fh.write(b"\n")
                    fh.flush()
                    os.fsync(fh.fileno())
            if not isinstance(rec, dict) or rec.get("id") not in self.index or rec.get("pred") not in LETTERS:
                raise SessionError(f"{self.answers_file}, line {n}: not an answer to a question of this session")
            if rec["id"] in answers:
                raise SessionError(f"{self.answers_file}, line {n}: question {rec['id']!r} answered twice")
            answers[rec["id"]] = self._checked_answer(rec, n)
            good_end += len(line) + 1
        return answers

    def _checked_answer(self, rec: dict, n: int) -> dict:
        """A stored answer as the data scores it: its task, gold and correctness must be the item's (a hand-edited
        line is refused); where the data changed since the session started, the data's gold decides (warning)."""
        item = self.items[rec["id"]]
        truth = {"task": item["task"], "gold": item["answer"], "correct": rec["pred"] == item["answer"]}
        differ = [k for k, v in truth.items() if rec.get(k) != v]
        if differ and (not self.data_changed or "task" in differ):
            k = differ[0]
            raise SessionError(f"{self.answers_file}, line {n}: {k} {rec.get(k)!r} of question {rec['id']!r} is not what "
                               f"{self.data_path} says ({truth[k]!r}); the file was edited: restore that line")
        if differ:
            log.warning("warning: question %r: the gold letter is now %s (it was %r when answered); scored against the "
                        "data as it is now", rec["id"], item["answer"], rec.get("gold"))
        return {**rec, **truth}

    def next_item(self) -> dict | None:
        for item_id in self.plan:
            if item_id not in self.answers:
                return self.items[item_id]
        return None

    def record(self, item_id: str, letter: str, elapsed_ms: float | None) -> dict:
        """Append the answer to answers.jsonl (flush + fsync), then rewrite the results. Raises KeyError for
        an unknown item and ValueError for one answered already."""
        with self.lock:
            if item_id not in self.index:
                raise KeyError(item_id)
            if item_id in self.answers:
                raise ValueError(item_id)
            item = self.items[item_id]
            if elapsed_ms is not None:
                seconds, source = elapsed_ms / 1000.0, "page"
            elif item_id in self.served_at:
                seconds, source = time.monotonic() - self.served_at[item_id], "server"
            else:
                seconds, source = None, None
            rec = {
                "id": item_id,
                "task": item["task"],
                "gold": item["answer"],
                "pred": letter,
                "correct": letter == item["answer"],
                "seconds": None if seconds is None else round(seconds, 3),
                "seconds_source": source,
                "answered_at": _now(),
                "position": self.index[item_id] + 1,
            }
            _append_line(self.answers_file, json.dumps(rec, ensure_ascii=False))
            self.answers[item_id] = rec
            try:
                self.write_results()
            except DiskFullError as e:  # the answer itself is on disk: the results follow at the next answer or resume
                log.warning("warning: %s (the answer is saved in %s)", e, self.answers_file)
            return rec

    # -- results in the models' format -------------------------------------------------------------

    def write_results(self) -> None:
        answered = [self.answers[i] for i in self.plan if i in self.answers]
        preds = [
            {"id": a["id"], "task": a["task"], "gold": a["gold"], "pred": a["pred"], "logprobs": None, "shots_used": 0, "seconds": a["seconds"]}
            for a in answered
        ]
        agg = aggregate([p["pred"] == p["gold"] for p in preds], [p["task"] for p in preds])
        times = sorted(a["seconds"] for a in answered if a["seconds"] is not None)
        results = {
            "ancientbench_version": __version__,
            "created": _now(),
            "model": {"name_or_path": HUMAN_NAME, "revision": None, "weights_sha256": None, "num_parameters": None, "dtype": None, "device": "human", "smoke_model": False},
            "setting": {"shots": 0, "letter_style": None, "letter_token_ids": None, "chat": False, "batch_size": None, "prefix_cache": False},
            "prompt": {"template_version": "human-quiz-1", "template_sha256": hashlib.sha256(PAGE.encode("utf-8")).hexdigest()},
            "data": {"path": self.data_path, "files_sha256": self.data_sha256, "n_items": len(self.plan)},
            "tasks": {t: {**v, "fewshot_truncated_items": 0} for t, v in agg["tasks"].items()},
            "competencies": agg["competencies"],
            "average": agg["average"],
            "micro_accuracy": agg["micro_accuracy"],
            "complete": agg["complete"],
            "packages": {"ancientbench": __version__},
            "timing": {
                "started": self.created,
                "answers_seconds_total": round(sum(times), 3) if times else None,
                "answers_seconds_median": times[len(times) // 2] if times else None,
            },
            "predictions_file": self.predictions_file.name,
            "human": {"seed": self.seed, "n_per_task": self.n_per_task, "planned": len(self.plan), "answered": len(answered), "finished": len(answered) == len(self.plan)},
        }
        atomic_write(self.predictions_file, "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in preds))
        atomic_write(self.results_file, json.dumps(results, ensure_ascii=False, indent=1) + "\n")

    def status(self) -> dict:
        return {"answered": len(self.answers), "planned": len(self.plan), "finished": len(self.answers) == len(self.plan),
                "results_file": str(self.results_file) if self.answers else None}


# ------------------------------------------------------------------------------------------------------
# HTTP
