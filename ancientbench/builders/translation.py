"""Builder of the ``translation`` config from the team-curated ``curated/translation.jsonl``.

Each entry is a sentence from the public-domain classics (verbatim from npm ``chinese-poetry``, in that
corpus's script) with a modern Chinese translation written by the team and three distractors, each the
correct translation with one controlled error (``errors``). The question is worded in the script of the
sentence. A user's own parallel corpus becomes a separate config (:mod:`ancientbench.builders.parallel_corpus`).
"""

from __future__ import annotations

from .curated import build_entries, in_script, item_script

TASK = "translation"
# Five dev exemplars (few-shot), by key; never also in test.
DEV_KEYS: tuple[str, ...] = (
    "lunyu-xueer-001",
    "lunyu-xueer-005",
    "daxue-daxue-029",
    "mengzi-lianghuiwangshang-001",
    "mengzi-lianghuiwangshang-004",
)


def question(entry) -> str:
    ctx = entry["context"]
    # The script is judged on the whole item (context and the four translations): a short context often has
    # no graph that differs between the scripts, while the translations always do.
    script = item_script(ctx + entry["answer"] + "".join(entry["distractors"]))
    return in_script("下列哪一項是「", script) + ctx + in_script("」的正確現代漢語翻譯？", script)


def build(ctx):
    return build_entries(TASK, ctx, question, DEV_KEYS)
