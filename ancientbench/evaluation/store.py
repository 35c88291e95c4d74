"""Predictions on disk: the append-only predictions JSONL, its sidecar fingerprint (another setting sets the old
files aside), ``--repair`` of corrupt lines, and the item hashes that decide which stored predictions a resumed
run may keep (see ``docs/evaluation.md``)."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from pathlib import Path
from typing import Mapping, Sequence

from ..backends.base import ORIGINAL_BACKEND
from ..errors import AncientBenchError
from ..fileio import append_whole, atomic_write
from ..schema import FIELDS
from .layout import RESULTS_FORMAT, part_path, results_path, sidecar_path

log = logging.getLogger(__name__)

# fingerprint keys a sidecar written before backends and modes existed lacks: it was made with these
FINGERPRINT_DEFAULTS = {"backend": ORIGINAL_BACKEND, "mode": "letter"}


class ResumeError(AncientBenchError, RuntimeError):
    """Stored predictions that cannot be read back (a corrupt line or sidecar, a file without its sidecar)."""


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


def matches(record: dict | None, expected: tuple[str, str] | None) -> bool:
    """Whether a stored record was made for exactly this item and exemplar set (records without hashes never are)
    and is well-formed enough to be reported (:func:`well_formed`)."""
    return (record is not None and expected is not None
            and (record.get("item_sha256"), record.get("fewshot_sha256")) == expected and well_formed(record))


def _numbers(value, n: int) -> bool:
    return isinstance(value, list) and len(value) == n and all(
        v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)) for v in value)


def well_formed(record: dict) -> bool:
    """A stored record ``report`` would accept: ``pred`` a letter or null, log-probabilities four finite numbers
    (or nulls) where present. Anything else (``pred: "Z"``, a hand-edited line) is scored again, never reused."""
    if record.get("pred") is not None and record.get("pred") not in ("A", "B", "C", "D"):
        return False
    return all(record.get(k) is None or _numbers(record.get(k), 4) for k in ("logprobs", "option_logprobs"))


# --------------------------------------------------------------------------------------------- storage


class PredictionStore:
    """Append-only predictions JSONL with a sidecar fingerprint, so interrupted runs resume exactly.

    Under several processes (:mod:`ancientbench.evaluation.distributed`) the main process appends to ``path`` and
    process ``r`` to ``<stem>.part<r>.jsonl`` beside it (``part=r``); :meth:`load` reads all of them and
    :meth:`finalize` merges them into ``path`` and removes the part files.
    """

    def __init__(self, path: Path, fingerprint: dict, files_sha256: dict[str, str], *, overwrite: bool = False,
                 part: int | None = None, repair: bool = False):
        self.path = Path(path)
        self.meta_path = sidecar_path(self.path)
        self.write_path = self.path if not part else part_path(self.path, part)
        self.fingerprint = fingerprint
        self.files_sha256 = dict(files_sha256)
        self.letter_token_ids: dict[str, int] | None = None
        self.repair = repair  # corrupt lines: drop them (keeping every valid record) instead of refusing
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
            try:
                meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as err:
                raise ResumeError(f"{self.meta_path}: not a valid sidecar ({err}); use --overwrite to score again, "
                                  f"or another --output") from None
            if not isinstance(meta, dict) or not isinstance(meta.get("fingerprint", {}), dict):
                raise ResumeError(f"{self.meta_path}: not a valid sidecar (no fingerprint object); use --overwrite "
                                  f"to score again, or another --output")
            if not isinstance(meta.get("files_sha256", {}), dict) or not isinstance(meta.get("letter_token_ids"), (dict, type(None))):
                raise ResumeError(f"{self.meta_path}: not a valid sidecar (files_sha256 and letter_token_ids must be objects); "
                                  f"use --overwrite to score again, or another --output")
            old = meta.get("fingerprint", {})
            old, new = {**FINGERPRINT_DEFAULTS, **old}, {**FINGERPRINT_DEFAULTS, **self.fingerprint}
            diff = [k for k in sorted({*old, *new}) if old.get(k) != new.get(k)]
            if diff:  # made under another setting: never reused, never deleted - set aside, and all scored again
                detail = "; ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in diff)
                kept = self._set_aside()
                log.warning(
                    f"{self.path} holds predictions of another setting ({detail}); scoring every item again "
                    f"(the old files are kept as {', '.join(p.name for p in kept)})")
                return {}
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
                if matches(done.get(rec["id"]), key) and not matches(rec, key):
                    continue
                done[rec["id"]] = rec
        return done

    def _set_aside(self) -> list[Path]:
        """Rename this setting's files (predictions, sidecar, part files, results) to ``<stem>.superseded-<UTC
        time><suffix>``: kept for the record, out of the way of resume and of report's ``results_*shot.json``.
        Two set-asides within one second get ``-2``, ``-3`` ... after the time: nothing is ever overwritten."""
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        paths = [p for p in (self.path, self.meta_path, *self.part_paths(), results_path(self.path)) if p.exists()]
        n = 1
        while True:  # one tag for the whole set, free for every file of it
            tag = stamp if n == 1 else f"{stamp}-{n}"
            targets = [p.with_name(f"{p.stem}.superseded-{tag}{p.suffix}") for p in paths]
            if not any(t.exists() for t in targets):
                break
            n += 1
        for p, target in zip(paths, targets):
            p.replace(target)
        return targets

    def _read(self, path: Path) -> list[dict]:
        done: list[dict] = []
        bad: list[int] = []
        raw = path.read_bytes()
        complete, _, fragment = raw.rpartition(b"\n")  # a torn last write leaves a fragment without newline
        if complete or raw.endswith(b"\n"):
            for n, line in enumerate(complete.split(b"\n"), start=1):
                try:
                    rec = json.loads(line.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                    rec = None
                if not isinstance(rec, dict) or not isinstance(rec.get("id"), str) or "pred" not in rec:
                    if not self.repair:
                        raise ResumeError(
                            f"{path}, line {n}: not a prediction record; rerun with --repair to keep the valid "
                            f"records and score only the rest again, or --overwrite to score everything again")
                    bad.append(n)
                    continue
                done.append(rec)
        if bad:  # rewritten at once, so records appended from now on follow valid lines only
            log.warning(f"{path}: --repair dropped {len(bad)} corrupt line(s) ({', '.join(map(str, bad[:10]))}"
                        f"{' ...' if len(bad) > 10 else ''}) and kept {len(done)} valid record(s); the dropped "
                        f"items are scored again")
            atomic_write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in done))
        elif fragment:
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
        atomic_write(self.meta_path, json.dumps(meta, ensure_ascii=False, indent=1))

    def append(self, records: Sequence[dict]) -> None:
        if not records:
            return
        append_whole(self.write_path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))

    def finalize(self, ordered: Sequence[dict], extra: Sequence[dict] = ()) -> None:
        """Rewrite the file in dataset order (records of items outside this run are kept after them); the part
        files of other processes, now merged into it, are removed."""
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [*ordered, *extra])
        atomic_write(self.path, text)
        for p in self.part_paths():
            p.unlink()


