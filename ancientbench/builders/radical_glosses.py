"""The team-written glosses of the Kangxi radicals as components (``records/curated/radical_glosses.jsonl``):
the file's format, its reader and validator, and the check of each gloss against 《說文解字》.

One JSON object per line, ``ensure_ascii=False``, keys in the order of :data:`KEYS`:

* ``radical`` — the Kangxi radical number (``"40"``), each at most once;
* ``graph`` — the radical's unified ideograph as Unihan ``CJKRadicals.txt`` writes it (宀);
* ``field`` — its semantic field (人物, 頭面, 肢體, 身體, 動物, 植物 …): distractors come from the same field, so that
  no option is the odd one out;
* ``gloss`` — what the radical means as a component, in Chinese, written by the team (房屋住所); it must not contain
  the radical's own graph, and no two entries share a gloss;
* ``shuowen_head`` — the 部首 of 《說文解字》 that writes this radical ("" where the 說文 files it under another 部);
* ``reference`` — where the meaning is read (the 說文 部首 by name, or the 部 and character that explain it);
* ``author``, ``reviewer`` — who wrote it and who checked it against the 說文 (``reviewer`` "" until reviewed; never
  the author).

:func:`load_glosses` rejects a malformed file with a :class:`~ancientbench.schema.DataError` naming file, line and
field. :func:`shuowen_agreement` (``ancientbench audit --shuowen DIR``; the 說文 data is an optional input, never
part of the default build) reports how many glosses share a content character with the 說文 explanation of their
部首 — a lexical proxy that points the reviewer at the glosses to read first, not a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..han import all_han
from ..paths import CURATED_DIR, record
from ..schema import DataError, read_jsonl
from ..sources.shuowen import GLOSS_FUNCTION_CHARS

GLOSSES_FILE = "radical_glosses.jsonl"
# groups of radicals whose glosses are near-synonyms (冖/襾 both 「覆也」): never each other's distractors
EXCLUSIONS_FILE = "radical_gloss_exclusions.jsonl"
EXCLUSION_KEYS = ("graphs", "reason", "source")
KEYS = ("radical", "graph", "field", "gloss", "shuowen_head", "reference", "author", "reviewer")
MAY_BE_EMPTY = {"shuowen_head", "reviewer"}
GLOSS_LENGTH = (2, 8)
MIN_FIELD = 4  # a field needs three other members to give an item three distractors
# characters two unrelated glosses may share: 說文 boilerplate and grammatical words, and the modern 的
FUNCTION_CHARS = GLOSS_FUNCTION_CHARS | {"的"}


@dataclass(frozen=True)
class TeamGloss:
    """One validated line of the glosses file."""

    radical: str
    graph: str
    field: str
    gloss: str
    shuowen_head: str
    reference: str
    author: str
    reviewer: str
    line: int


def glosses_path(directory: str | Path | None = None) -> Path:
    return Path(directory) / GLOSSES_FILE if directory else record(CURATED_DIR) / GLOSSES_FILE


def _check_line(obj: object, path: Path, line: int) -> TeamGloss:
    if not isinstance(obj, dict):
        raise DataError(path, line, None, f"expected a JSON object, got {type(obj).__name__}")
    for name in KEYS:
        if name not in obj:
            raise DataError(path, line, name, "missing key")
    unknown = [k for k in obj if k not in KEYS]
    if unknown:
        raise DataError(path, line, unknown[0], f"unknown key (allowed: {', '.join(KEYS)})")
    if tuple(obj) != KEYS:
        raise DataError(path, line, None, f"keys out of order; expected {', '.join(KEYS)}")
    for name in KEYS:
        value = obj[name]
        if not isinstance(value, str):
            raise DataError(path, line, name, f"must be a string, got {type(value).__name__}")
        if name not in MAY_BE_EMPTY and not value.strip():
            raise DataError(path, line, name, "empty value")
        if value != value.strip():
            raise DataError(path, line, name, "leading or trailing whitespace")
    if not obj["radical"].isdigit() or not 1 <= int(obj["radical"]) <= 214:
        raise DataError(path, line, "radical", f"not a Kangxi radical number 1..214: {obj['radical']!r}")
    gloss = obj["gloss"]
    if not all_han(gloss) or not GLOSS_LENGTH[0] <= len(gloss) <= GLOSS_LENGTH[1]:
        raise DataError(path, line, "gloss", f"must be {GLOSS_LENGTH[0]}-{GLOSS_LENGTH[1]} Chinese characters, got {gloss!r}")
    if obj["graph"] in gloss:
        raise DataError(path, line, "gloss", f"the gloss {gloss!r} contains the radical {obj['graph']!r} itself")
    if "《" not in obj["reference"]:
        raise DataError(path, line, "reference", "must name a work in 《》 (the 說文 部首, or the dictionary and entry)")
    if obj["reviewer"] and obj["reviewer"] == obj["author"]:
        raise DataError(path, line, "reviewer", "the reviewer must not be the author")
    return TeamGloss(**obj, line=line)


def load_glosses(path: str | Path | None = None) -> dict[str, TeamGloss]:
    """Radical number -> its validated team gloss; duplicate radicals or glosses and thin fields rejected."""
    p = Path(path) if path else glosses_path()
    if not p.is_file():
        raise DataError(p, None, None, "missing radical glosses file")
    out: dict[str, TeamGloss] = {}
    seen: dict[str, int] = {}
    for line, obj in enumerate(read_jsonl(p), start=1):
        g = _check_line(obj, p, line)
        if g.radical in out:
            raise DataError(p, line, "radical", f"radical {g.radical} already glossed at line {out[g.radical].line}")
        if g.gloss in seen:
            raise DataError(p, line, "gloss", f"gloss {g.gloss!r} already used at line {seen[g.gloss]}")
        out[g.radical] = g
        seen[g.gloss] = line
    fields: dict[str, list[TeamGloss]] = {}
    for g in out.values():
        fields.setdefault(g.field, []).append(g)
    for name, members in fields.items():
        if len(members) < MIN_FIELD:
            raise DataError(p, members[0].line, "field", f"field {name!r} has {len(members)} radicals; at least {MIN_FIELD} "
                            "are needed for three same-field distractors")
    return out


def load_exclusions(path: str | Path | None = None, glosses: dict[str, TeamGloss] | None = None) -> frozenset[frozenset[str]]:
    """Pairs of radical graphs (from the groups of ``radical_gloss_exclusions.jsonl``) whose glosses must never be
    each other's distractors; a graph no gloss writes (when ``glosses`` is given) or a malformed line is a DataError."""
    p = Path(path) if path else record(CURATED_DIR) / EXCLUSIONS_FILE
    if not p.is_file():
        raise DataError(p, None, None, "missing radical gloss exclusions file")
    known = {g.graph for g in glosses.values()} if glosses is not None else None
    pairs: set[frozenset[str]] = set()
    for line, obj in enumerate(read_jsonl(p), start=1):
        if not isinstance(obj, dict) or tuple(obj) != EXCLUSION_KEYS:
            raise DataError(p, line, None, f"expected an object with keys {', '.join(EXCLUSION_KEYS)} in that order")
        graphs = obj["graphs"]
        if not isinstance(graphs, list) or len(set(graphs)) < 2 or not all(isinstance(g, str) and len(g) == 1 for g in graphs):
            raise DataError(p, line, "graphs", "must list at least two distinct single radical graphs")
        if not isinstance(obj["reason"], str) or not obj["reason"].strip():
            raise DataError(p, line, "reason", "empty value")
        for g in graphs:
            if known is not None and g not in known:
                raise DataError(p, line, "graphs", f"{g!r} has no gloss in {GLOSSES_FILE}")
        pairs.update(frozenset((a, b)) for i, a in enumerate(graphs) for b in graphs[i + 1:])
    return frozenset(pairs)


def content_chars(text: str) -> set[str]:
    return set(text) - FUNCTION_CHARS


def shuowen_agreement(glosses: dict[str, TeamGloss], sw) -> dict:
    """How the team glosses meet the 說文 explanation of their 部首 (``sw``: :class:`ancientbench.sources.shuowen.Shuowen`).

    ``compared``: glosses whose ``shuowen_head`` is a 部首 of the data; ``agree``: those sharing a content character
    with its explanation; ``differ``: the others, as ``graph gloss | 說文 explanation's first clause`` for the reviewer;
    ``missing``: 部首 named by the file that the data does not hold as a section head."""
    heads = {e.wordhead: e for e in sw.section_heads()}
    agree, differ, missing = 0, [], []
    compared = 0
    for g in sorted(glosses.values(), key=lambda g: int(g.radical)):
        if not g.shuowen_head:
            continue
        e = heads.get(g.shuowen_head)
        if e is None:
            missing.append(g.shuowen_head)
            continue
        compared += 1
        if content_chars(g.gloss) & content_chars(e.explanation):
            agree += 1
        else:
            differ.append(f"{g.graph} {g.gloss} | {e.explanation.split('。', 1)[0]}")
    return {"agree": agree, "compared": compared, "rate": agree / compared if compared else 0.0,
            "what": "team gloss shares a content character with the 說文 explanation of its 部首 (a lexical proxy; "
                    "the reviewer reads every gloss)",
            "differ": differ, "missing": missing}
