"""Agreement of a dataset folder's answers with 說文解字 (``ancientbench audit --shuowen DIR``): phonetic_radical
answers vs the ``从X Y聲`` analysis, per written form and at the level of graphs (plain 聲 only; 亦聲/省聲 counted
apart), Kangxi radicals (radical task) vs the 說文 部, and 廣韻 fanqie (pronunciation task) vs 大徐 fanqie, both as
identical spelling and as "the 大徐 fanqie can spell the 廣韻 音韻地位" (tshet-uinh 執行反切), and the team's
radical glosses (radical_meaning ``component`` keys) vs the 說文 explanation of their 部首
(:func:`ancientbench.builders.radical_glosses.shuowen_agreement`; the JSON report lists the glosses that differ).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..builders.radical_glosses import load_glosses, shuowen_agreement
from ..errors import RecordsMissing
from ..paths import DATASET_PATH
from ..schema import read_config
from ..sources import SourceMissing, guangyun, unihan
from ..sources.shuowen import analyse, load, same_graph, same_graph_listed


def _target(row: dict) -> str:
    """The character a glyph/sound question is about: the first character inside 「」."""
    return row["question"].split("「", 1)[1][0] if "「" in row["question"] else ""


def _answered(folder: Path, config: str, sw) -> list[tuple[str, list, str]] | None:
    """(target character, its 說文 entries, our answer) for the config's test and dev rows whose target 說文 has;
    None when the folder has no rows of the config (nothing to measure)."""
    rows = read_config(folder, config, "test") + read_config(folder, config, "dev")
    if not rows:
        return None
    return [(_target(r), sw.get(_target(r)), r[r["answer"]]) for r in rows if sw.get(_target(r))]


def _fig(agree: int, compared: int, what: str) -> dict:
    return {"agree": agree, "compared": compared, "rate": (agree / compared if compared else 0.0), "what": what}


def agreement(folder: str | Path, shuowen_dir: str | Path) -> dict[str, dict]:
    """Agreement of a dataset folder's answers with 說文解字; only tasks present in the folder are measured."""
    sw = load(shuowen_dir)
    folder = Path(folder)
    try:
        uh = unihan.load()
    except SourceMissing:
        uh = None
    out: dict[str, dict] = {}

    rows = _answered(folder, "phonetic_radical", sw)
    if rows is not None:
        agree = graph_agree = compared = special = 0
        for ch, entries, answer in rows:
            analyses = [analyse(e.explanation) for e in entries]
            if any(a.yisheng or a.shengsheng for a in analyses):
                special += 1
            plain = [a.phonetic for a in analyses if a.phonetic]
            if plain:
                compared += 1
                agree += any(same_graph(answer, p, uh) for p in plain)
                graph_agree += any(same_graph_listed(answer, p, uh, ch) for p in plain)
        out["phonetic_radical"] = _fig(agree, compared, "our 聲符 = 說文 Y in 从X Y聲 (items whose 說文 entry gives one plain Y聲)")
        out["phonetic_radical_graph"] = _fig(graph_agree, compared, "the same, at the level of graphs: forms Unihan does not "
                                             "link counted as one graph where records/curated/shuowen_graph_pairs.tsv says so")
        out["phonetic_radical_special"] = _fig(special, len(rows), "items whose 說文 entry says 亦聲 or 省聲 (we reject such analyses)")

    rows = _answered(folder, "radical", sw)
    if rows is not None:
        agree = sum(any(same_graph(answer, e.radical, uh) for e in entries) for _, entries, answer in rows)
        out["radical"] = _fig(agree, len(rows), "Kangxi radical (our answer) = 說文 部 (540 sections)")

    rows = _answered(folder, "pronunciation", sw)
    if rows is not None:
        try:
            gy = guangyun.load()
        except SourceMissing:
            gy = None
        same = compared = spell = spell_compared = 0
        for ch, entries, answer in rows:
            fq = [e.fanqie for e in entries if e.fanqie]
            if not fq:
                continue
            answer = answer.removesuffix("切")
            compared += 1
            same += answer in fq
            if gy is not None:
                ours = gy.fanqie_statuses(answer[0], answer[1]) or frozenset()
                target_status = ours & gy.statuses_of(ch)
                results = [gy.fanqie_statuses(f[0], f[1]) for f in fq]
                if target_status and any(x is not None for x in results):
                    spell_compared += 1
                    spell += any(x is not None and (x & target_status) for x in results)
        out["pronunciation_spelling"] = _fig(same, compared, "廣韻 fanqie (our answer) spelled exactly as the 大徐 fanqie")
        if gy is not None:
            out["pronunciation_status"] = _fig(
                spell, spell_compared, "the 大徐 fanqie can spell the 廣韻 音韻地位 of our answer (tshet-uinh 執行反切)"
            )
    fig = _team_glosses(folder, sw)
    if fig is not None:
        out["radical_meaning_team_glosses"] = fig
    return out


def _team_glosses(folder: Path, sw) -> dict | None:
    """The 說文 check of the team glosses that are keys of the folder's radical_meaning ``component`` items; None when
    it has none, or records/ (the glosses file) is not there (an installed package)."""
    keys = {r[r["answer"]] for split in ("test", "dev") for r in read_config(folder, "radical_meaning", split)
            if r.get("subset") == "component"}
    if not keys:
        return None
    try:
        glosses = load_glosses()
    except RecordsMissing:
        return None
    return shuowen_agreement({n: g for n, g in glosses.items() if g.gloss in keys}, sw)


def add_arguments(p) -> None:  # pragma: no cover - convenience entry point, the CLI path is `audit --shuowen`
    p.add_argument("shuowen", metavar="DIR")
    p.add_argument("--data", default=None)


def main(argv: list[str] | None = None) -> int:
    """``python -m ancientbench.quality.agreement DIR [--data FOLDER]``: print the agreement figures."""
    p = argparse.ArgumentParser(description=main.__doc__)
    add_arguments(p)
    args = p.parse_args(argv)
    for name, fig in agreement(Path(args.data or DATASET_PATH), Path(args.shuowen)).items():
        print(f"{name}: {fig['agree']}/{fig['compared']} = {fig['rate'] * 100:.1f}% ({fig['what']})")
        for line in fig.get("differ", ()):
            print(f"  differs: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
