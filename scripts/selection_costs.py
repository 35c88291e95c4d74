"""What each single-rule bound costs ``phonetic_radical``: how many items the selection programme keeps with every
rule's bound, and with one rule's bound left out (decision 1 of issue 22; the card quotes the figures).

Stages the build up to its first selection programme (``glyphcheck.select_most_within_bound``), then solves it once
with every rule and once without each rule (about 20 s per solve). Writes
``records/selection/phonetic_radical_lp_costs.json``.

    .venv/bin/python scripts/selection_costs.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ancientbench.builders import BuildContext, build_task  # noqa: E402
from ancientbench.builders import glyphcheck as gc  # noqa: E402

OUT = REPO / "records" / "selection" / "phonetic_radical_lp_costs.json"


class _Staged(Exception):
    pass


def staged_programme():
    """(items, credit table, strategy names, keyword arguments) of the build's first selection programme."""
    solve, seen = gc.select_most_within_bound, {}

    def capture(items, table, names, **kw):
        seen["programme"] = (items, table, list(names), kw)
        raise _Staged

    gc.select_most_within_bound = capture
    try:
        build_task("phonetic_radical", BuildContext())
    except _Staged:
        pass
    finally:
        gc.select_most_within_bound = solve
    return seen["programme"]


def main() -> int:
    items, table, names, kw = staged_programme()
    kept = lambda use: len(gc.select_most_within_bound(items, table, use, **kw))  # noqa: E731
    out = {"what": "phonetic_radical: items (test and dev) the first selection programme keeps, with every single-rule "
                   "bound and with one rule's bound left out (scripts/selection_costs.py)",
           "staged_items": len(items), "all_rules": kept(names), "without": {}}
    print(f"staged {len(items)}, every rule: {out['all_rules']}", flush=True)
    for name in names:
        out["without"][name] = kept([n for n in names if n != name])
        print(f"without {name}: {out['without'][name]}", flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
