"""Where an evaluation's files are and which format they carry: the one home of these names, read by the
evaluation that writes them and by the reports that read them back.

Under ``<output>/<name>/`` for every shot setting k: ``predictions_<k>shot.jsonl`` (one record per item), its
sidecar ``predictions_<k>shot.meta.json`` (fingerprint, data hashes), ``predictions_<k>shot.part<r>.jsonl`` (process
r of a data-parallel run, merged at the end) and ``results_<k>shot.json`` (the self-describing results).
"""

from __future__ import annotations

from pathlib import Path

RESULTS_FORMAT = 1  # ``results_format`` of results files and ``ancientbench_results_format`` of sidecars
RESULTS_GLOB = "results_*shot.json"


def predictions_path(folder: str | Path, shots: int) -> Path:
    return Path(folder) / f"predictions_{shots}shot.jsonl"


def results_path(predictions_file: str | Path) -> Path:
    """The results file written beside a predictions file: ``predictions_<k>shot.jsonl`` -> ``results_<k>shot.json``."""
    p = Path(predictions_file)
    return p.with_name(p.name.replace("predictions_", "results_", 1).replace(".jsonl", ".json"))


def sidecar_path(predictions_file: str | Path) -> Path:
    p = Path(predictions_file)
    return p.with_name(p.name.replace(".jsonl", ".meta.json"))


def part_path(predictions_file: str | Path, rank: int) -> Path:
    p = Path(predictions_file)
    return p.with_name(f"{p.stem}.part{rank}{p.suffix}")
