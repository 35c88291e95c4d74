"""`ancientbench audit`: counts, letter balance, trivial strategies, strict exit status on a planted biased set."""

from __future__ import annotations

import json

import pytest

import argparse

from ancientbench import audit
from ancientbench.schema import split_file, write_jsonl
from ancientbench.tasks import LETTERS

FREQ = audit.Frequencies({"水": 100, "工": 10, "可": 50, "口": 5, "山": 20, "木": 30, "石": 8, "火": 12}, "test")


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


def test_tie_credit_is_fair():
    assert audit.strategy_credit([1, 1, 0, 0], 0) == 0.5
    assert audit.strategy_credit([1, 1, 1, 1], 3) == 0.25
    assert audit.strategy_credit([0, 2, 1, 0], 0) == 0.0


def test_strategies_on_one_item():
    c = audit.credits("「江」的聲符是哪一個？", ["工", "水", "山山", "口"], 2, FREQ)
    assert c["longest"] == 1.0 and c["shortest"] == 0.0
    c = audit.credits("「江」的聲符是哪一個？", ["工", "水", "石", "口"], 1, FREQ)
    assert c["most_frequent_char"] == 1.0 and c["unigram_lm"] == 1.0 and c["rarest_char"] == 0.0
    assert c["question_overlap"] == 0.25  # nothing shared: a four-way tie
    c = audit.credits("下列哪個字與「江」同音？", ["江", "水", "石", "口"], 0, FREQ)
    assert c["question_overlap"] == 1.0


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
    assert _main(["--data", str(tmp_path), "--strict"]) == 1
    assert _main(["--data", str(tmp_path)]) == 0  # without --strict it only reports


def test_balanced_unbiased_set_passes(tmp_path, capsys):
    # gold letter cycles; options are one character each and the gold one is not systematically frequent
    chars = ["水", "工", "可", "口"]
    rows = []
    for i in range(40):
        gold = LETTERS[i % 4]
        opts = chars[i % 4 :] + chars[: i % 4]  # rotate so the gold letter holds each character in turn
        opts = [opts[(j - i) % 4] for j in range(4)]
        rows.append(_row(i, "excdoc_word", f"題目{i}", opts, gold))
    _write(tmp_path, "excdoc_word", rows)
    report = audit.audit_folder(tmp_path, freq=FREQ)
    entry = report["configs"]["excdoc_word"]
    assert entry["violations"] == [], entry
    assert all(abs(v - 0.25) < 1e-9 for v in entry["balance"].values())
    assert _main(["--data", str(tmp_path), "--strict", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["configs"]["excdoc_word"]["strategies"]["longest"] == pytest.approx(0.25)


def test_minimum_size_and_table(tmp_path, capsys):
    rows = [_row(i, "cloze", f"題{i}", ["水", "工", "可", "口"], LETTERS[i % 4]) for i in range(8)]
    _write(tmp_path, "cloze", rows)
    report = audit.audit_folder(tmp_path, freq=FREQ)
    assert "test size 8 < 3000" in report["configs"]["cloze"]["violations"]
    assert _main(["--data", str(tmp_path)]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].startswith("| config | test | dev | A% |")
    assert "VIOLATION cloze: test size 8 < 3000" in table


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
    c = audit.credits("題", options, 0, FREQ, audit.AUDIT_STRATEGIES)
    assert c["most_central"] == 1.0
    rows = [_row(i, "translation", f"題{i}", options[i % 4:] + options[: i % 4], LETTERS[(-i) % 4]) for i in range(40)]
    assert all(r[r["answer"]] == answer for r in rows)
    _write(tmp_path, "translation", rows)
    entry = audit.audit_folder(tmp_path, freq=FREQ)["configs"]["translation"]
    assert entry["strategies"]["most_central"] == 1.0
    assert any(v.startswith("most_central = 100.0%") for v in entry["violations"])
    # the 2x2 design (E1, E2, E1+E2) puts every option at the same distance from the others
    two_by_two = [answer, "學了又按時溫習它不也很痛苦嗎", "聽了又按時溫習它不也很愉快嗎", "聽了又按時溫習它不也很痛苦嗎"]
    c = audit.credits("題", two_by_two, 0, FREQ, audit.AUDIT_STRATEGIES)
    assert c["most_central"] < 1.0
