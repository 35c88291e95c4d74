"""Hand-made results + predictions files for the report / compare / calibration tests.

Writes the layout ``ancientbench eval`` produces (``<out>/<slug>/results_<k>shot.json`` beside
``predictions_<k>shot.jsonl``) from explicit rows, counting correct answers with a plain loop so the
fixtures never depend on the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

LETTERS = "ABCD"


def row(item_id: str, task: str, gold: str, correct: bool, logprobs=None, pred: str | None = None) -> dict:
    """One prediction; a wrong answer picks the letter after the gold one unless ``pred`` is given."""
    if pred is None:
        pred = gold if correct else LETTERS[(LETTERS.index(gold) + 1) % 4]
    assert (pred == gold) == correct
    return {"id": item_id, "task": task, "gold": gold, "pred": pred, "logprobs": logprobs, "shots_used": 0}


def task_rows(task: str, n: int, n_correct: int, prefix: str = "") -> list[dict]:
    """n items of a task, the first n_correct answered correctly; ids ``<prefix><task>-<i>``."""
    return [row(f"{prefix}{task}-{i}", task, LETTERS[i % 4], i < n_correct) for i in range(n)]


def write_run(out: Path, name: str, shots: int, rows: list[dict], slug: str | None = None) -> Path:
    """Write a results file and its predictions file; returns the results file's path."""
    folder = Path(out) / (slug or name.strip("/").replace("/", "__"))
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"predictions_{shots}shot.jsonl").open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps({**r, "shots_used": shots}, ensure_ascii=False) + "\n")
    tasks: dict[str, dict] = {}
    for r in rows:
        t = tasks.setdefault(r["task"], {"correct": 0, "total": 0})
        t["correct"] += r["pred"] == r["gold"]
        t["total"] += 1
    for t in tasks.values():
        t["accuracy"] = t["correct"] / t["total"]
        t["fewshot_truncated_items"] = 0
    results = {
        "ancientbench_version": "0.1.0",
        "created": "2025-01-01T00:00:00+00:00",
        "model": {"name_or_path": name, "revision": None, "weights_sha256": None, "num_parameters": 1000, "dtype": "float32", "device": "cpu", "smoke_model": False},
        "setting": {"shots": shots, "letter_style": "bare", "letter_token_ids": [1, 2, 3, 4], "chat": False, "batch_size": 4, "prefix_cache": False},
        "prompt": {"template_version": "1", "template_sha256": "0" * 64},
        "data": {"path": "fixture", "files_sha256": "0" * 64, "n_items": len(rows)},
        "tasks": tasks,
        "competencies": {},
        "average": None,
        "micro_accuracy": None,
        "complete": len(tasks) == 10,
        "packages": {},
        "timing": {},
        "predictions_file": f"predictions_{shots}shot.jsonl",
    }
    path = folder / f"results_{shots}shot.json"
    path.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    return path
