"""The recorded ladder run (``records/ladder.json``, written by ``ancientbench ladder --record``): whether it holds
for the package's data (:func:`stale`: the data version and the data files' sha256 it ran on), one figure of it
(:func:`figure`, what hand-written pages quote) and its Markdown tables (:func:`render_markdown`, what the dataset
card and the mini-LM card show). Below both cards and the ladder command, so each reads one format."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ..dataset import file_sha256
from ..letters import describe, top_cell
from ..paths import DATASET_PATH, LADDER_RECORD_FILE
from ..schema import SPLITS, split_file
from ..tasks import COMPETENCIES, DATASET_VERSION, TASK_NAMES


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _ci(ci) -> str:
    return f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else ""


def data_sha256(data: str | Path | None = None) -> dict[str, str]:
    """sha256 of every split file of the bundled dataset (or ``data``): what a recorded run's figures hold for."""
    root = Path(data or DATASET_PATH)
    return {f"{t}/{s}.jsonl": file_sha256(split_file(root, t, s)) for t in TASK_NAMES for s in SPLITS if split_file(root, t, s).is_file()}


def load_record(path: str | Path | None = None) -> dict | None:
    """The recorded ladder run (``records/ladder.json``), None where there is none (an installed package)."""
    path = Path(path or LADDER_RECORD_FILE)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def stale(rec: dict) -> str | None:
    """Why a recorded run's figures no longer hold for the package's data (one line), or None when they do."""
    rerun = "rerun `ancientbench ladder --record`"
    if rec.get("dataset_version") != DATASET_VERSION:
        return f"the recorded ladder run is on data {rec.get('dataset_version')}, the data is {DATASET_VERSION}: {rerun}"
    now = data_sha256()
    changed = sorted(f for f in set(now) | set(rec.get("data_sha256", {})) if now.get(f) != rec.get("data_sha256", {}).get(f))
    if changed:
        return f"data files changed since the recorded ladder run ({', '.join(changed[:3])}{' …' if len(changed) > 3 else ''}): {rerun}"
    return None


def figure(rec: dict, shots: int, label: str, column: str) -> float:
    """One recorded figure in %: a row's accuracy on a task, a competency's score (``competency:NAME``, as
    ``--tasks`` writes it: ``pronunciation`` is a task and a competency), or its ``average``."""
    row = next((r for r in rec["settings"][str(shots)] if r["label"] == label), None)
    if row is None:
        raise KeyError(f"no row {label!r} in the recorded {shots}-shot table")
    if column == "average":
        return 100 * row["average"]["score"]
    if column.startswith("competency:"):
        return 100 * row["competencies"][column.removeprefix("competency:")]["score"]
    return 100 * row["tasks"][column]["accuracy"]


def render_markdown(rec: dict) -> str:
    n = rec["limit_per_task"]
    sizes = Counter(r.get("n_items", 0) for rows in rec["settings"].values() for r in rows)  # a sampled row (AI examinee) differs
    questions = sizes.most_common(1)[0][0] if sizes else 0
    described = "; ".join(f"**{label}**: {text}" for label, text in rec.get("reference_rows", {}).items())
    lines = [f"Measured by `ancientbench ladder --record` on data version {rec.get('dataset_version', '(not recorded)')}, "
             f"{f'the first {n} test items of every task' if n else 'every test item'} ({questions:,} questions); "
             "accuracy in %, 95% bootstrap intervals over items. Letter mode is the paper's scoring, ppl mode option "
             "likelihood. Reference rows (from their results files): " + (described or "none") + ". Rows marked "
             "shot-independent read no exemplars and appear once, in the 0-shot tables. Top answer: the most frequent "
             "answer and its share of the items; `!` flags a row that is not answering (module `ancientbench.letters`).", ""]
    for k, rows in sorted(rec["settings"].items(), key=lambda kv: int(kv[0])):
        lines += [f"**{k}-shot**", "", "| row | " + " | ".join(c for c in COMPETENCIES) + " | average | top answer % |",
                  "|---|" + "---:|" * (len(COMPETENCIES) + 2)]
        for r in rows:
            comp = r["competencies"]  # a sampled row (the AI examinee) may lack whole competencies
            cells = [f"{_pct(comp.get(c, {}).get('score'))} {_ci(comp.get(c, {}).get('ci'))}".strip() for c in COMPETENCIES]
            avg = r["average"] or {}
            lines.append(f"| {r['label']} | " + " | ".join(cells) + f" | {_pct(avg.get('score'))} {_ci(avg.get('ci'))} | "
                         f"{top_cell(r.get('answer_letters'))} |")
        lines += ["", "| row | " + " | ".join(TASK_NAMES) + " |", "|---|" + "---:|" * len(TASK_NAMES)]
        for r in rows:
            lines.append(f"| {r['label']} | " + " | ".join(_pct(r["tasks"].get(t, {}).get("accuracy")) for t in TASK_NAMES) + " |")
        lines.append("")
        flagged = [r for r in rows if (r.get("answer_letters") or {}).get("not_answering")]
        lines += [f"**Not answering**: {r['label']} {describe(r['answer_letters'])}." for r in flagged] + ([""] if flagged else [])
    lines += _paired_table(rec["compare_with_tiny_random"], "mini-LM setting", "mini", "tiny-random",
                           "**ancientbench-mini against tiny-random** (paired over the same items; average difference in "
                           "points with its 95% paired bootstrap interval; pooled McNemar p):")
    lines += _paired_table(rec.get("compare_finetuned"), "setting", "mini-Ancient", "ancientbench-mini",
                           "**mini-Ancient against ancientbench-mini**: the paper's fine-tuning recipe in miniature "
                           "(`ancientbench finetune` on `finetune-data`'s instruction pairs, test items held out; commands "
                           "in docs/reference-results.md), paired over the same items as above:")
    lines += _paired_table(rec.get("compare_inject"), "setting", "inject-b", "inject-a",
                           "**ancientbench-inject-b against ancientbench-inject-a**: the knowledge-injection pair (same "
                           "architecture, tokenizer, seed and tokens seen; (b) also read the knowledge sources as reference "
                           "text; per task: `ancientbench inject`), paired over the same items as above:")
    return "\n".join(lines)


def _paired_table(compares: dict | None, first: str, a: str, b: str, title: str) -> list[str]:
    """Markdown of ``compare`` results (one row per setting: A %, B %, difference, interval, pooled McNemar p)."""
    if not compares:
        return []
    lines = [title, "", f"| {first} | {a} % | {b} % | difference | interval | p |", "|---|---:|---:|---:|---:|---:|"]
    for name, c in compares.items():
        avg, micro = c["average"], c["micro_accuracy"]
        lines.append(f"| {name.replace('_', ', ')} | {_pct(avg['a'])} | {_pct(avg['b'])} | {100 * avg['diff']:+.1f} | "
                     f"{_ci(avg['ci'])} | {micro['mcnemar']['p_value']:.3g} |")
    return [*lines, ""]
