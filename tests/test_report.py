"""`ancientbench report`: tables in the paper's shape, intervals, bold, Human row, shot deltas, files."""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys

import pytest
from results_fixtures import task_rows, write_run

from ancientbench.reports import plots, report
from ancientbench.reports import results as rs


def run_report(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    report.add_arguments(p)
    return report.run(p.parse_args(argv))


def good_rows(radical_correct: int) -> list[dict]:
    # glyph (radical 3/4 or 4/4, radical_meaning 1/2), pronunciation 2/4, meaning (excdoc_word) 4/4, context (cloze) 1/4
    return (
        task_rows("radical", 4, radical_correct)
        + task_rows("radical_meaning", 2, 1)
        + task_rows("pronunciation", 4, 2)
        + task_rows("excdoc_word", 4, 4)
        + task_rows("cloze", 4, 1)
    )


@pytest.fixture
def runs(tmp_path):
    res = tmp_path / "results"
    write_run(res, "/models/good", 0, good_rows(3), slug="good")
    write_run(res, "/models/good", 5, good_rows(4), slug="good")
    weak = (
        task_rows("radical", 4, 1)
        + task_rows("radical_meaning", 2, 2)
        + task_rows("pronunciation", 4, 1)
        + task_rows("excdoc_word", 4, 2)
        + task_rows("cloze", 4, 2)
    )
    write_run(res, "org/weak_model", 0, weak)
    write_run(res, "Human", 0, task_rows("radical", 2, 2) + task_rows("cloze", 2, 1))
    return res


def table_lines(md: str, heading: str) -> list[str]:
    """The table lines under a '### heading' inside the first section that has it."""
    part = md.split(f"### {heading}", 1)[1]
    return [ln for ln in part.split("\n\n", 2)[1].splitlines() if ln.startswith("|")]


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip("|").split("|")]


def test_tables_figures_bold_order_and_human(runs, tmp_path, capsys):
    out = tmp_path / "rep"
    assert run_report([str(runs), "--out", str(out), "--resamples", "400"]) == 0
    md = (out / "report.md").read_text(encoding="utf-8")
    zero = md.split("## Zero-shot (the paper's Table 2)", 1)[1].split("## 5-shot", 1)[0]
    comp = table_lines(zero, "Competencies")
    assert cells(comp[0]) == ["Model", "字形 Glyph", "字音 Pronunciation", "字義 Meaning", "語境 Context", "平均 Average", "Top answer %"]
    rows = [cells(ln)[:6] for ln in comp[2:]]
    # sorted by average: good (62.5, 50, 100, 25 -> 59.375) before weak (62.5, 25, 50, 50 -> 46.875); Human last
    assert [r[0] for r in rows] == ["good *", "org/weak_model *", "Human *"]
    good, weak, human = rows
    value = lambda c: re.match(r"(\*\*)?[\d.–]+(\*\*)?", c).group(0)  # noqa: E731
    assert [value(c) for c in good[1:]] == ["**62.5**", "**50.0**", "**100.0**", "25.0", "**59.4**"]
    assert [value(c) for c in weak[1:]] == ["**62.5**", "25.0", "50.0", "**50.0**", "46.9"]
    assert [value(c) for c in human[1:]] == ["100.0", "–", "–", "50.0", "75.0"]  # reference row, never bold
    # an item-bootstrap interval of a 4/4 task is exactly [100, 100]; of a 2/2 task too
    assert good[3] == "**100.0** [100.0, 100.0]"
    assert human[1] == "100.0 [100.0, 100.0]"
    for c in good[1:] + weak[1:]:
        lo, hi = map(float, re.search(r"\[([\d.]+), ([\d.]+)\]", c).groups())
        assert lo <= float(value(c).strip("*")) <= hi
    tasks = table_lines(zero, "Tasks")
    assert cells(tasks[0])[1:3] == ["部首 Radical", "部首義 Radical Meaning"]
    t_good = cells(tasks[2])
    assert t_good[0] == "good *" and t_good[1].startswith("**75.0** [") and t_good[2].startswith("50.0 [")
    assert cells(tasks[3])[2].startswith("**100.0** [100.0, 100.0]")  # weak: radical_meaning 2/2
    assert cells(tasks[2])[4] == "–"  # phonetic_radical not scored
    # 5-shot table: one model (nothing to mark bold) and the Human reference row again
    five = md.split("## 5-shot (the paper's Table 3)", 1)[1]
    five_rows = [cells(ln) for ln in table_lines(five, "Competencies")[2:]]
    assert [r[0] for r in five_rows] == ["good *", "Human *"]
    assert five_rows[0][1].startswith("75.0 [") and five_rows[0][5].startswith("62.5 [")
    # change from 0- to 5-shot: glyph 62.5 -> 75 (+12.5), average 59.375 -> 62.5 (+3.125)
    delta = [cells(ln) for ln in md.split("## Change from zero-shot to few-shot", 1)[1].splitlines() if ln.startswith("| good")]
    assert len(delta) == 1
    assert delta[0][1] == "0 → 5" and delta[0][2].startswith("+12.5 [") and delta[0][3].startswith("+0.0 [") and delta[0][6].startswith("+3.1 [")
    assert delta[0][7] == "yes"
    assert "not all ten tasks scored" in md
    assert "good *" in capsys.readouterr().out


def test_latex_summary_and_pngs(runs, tmp_path):
    from PIL import Image

    out = tmp_path / "rep"
    assert run_report([str(runs), "--out", str(out), "--resamples", "200"]) == 0
    tex = (out / "tables.tex").read_text(encoding="utf-8")
    assert tex.count(r"\begin{table}") == tex.count(r"\end{table}") == 5  # 2 settings x (competency, task) + deltas
    assert tex.count(r"\begin{tabular}") == tex.count(r"\end{tabular}") == 5
    first = tex.split(r"\end{table}")[0]
    assert first.count(r"\textbf{62.5}") == 2 and r"\textbf{59.4}" in first
    assert r"org/weak\_model *" in first and "字形" in first
    assert re.search(r"\\midrule\nHuman \*", first)  # the reference row sits under its own rule
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    rows = summary["settings"]["0"]["rows"]
    assert [r["label"] for r in rows] == ["good", "org/weak_model", "Human"]
    assert rows[0]["average"]["score"] == pytest.approx(0.59375)
    assert rows[0]["tasks"]["radical"]["correct"] == 3 and rows[0]["tasks"]["radical"]["total"] == 4
    assert rows[2]["calibration"] is None  # no log-probs: nothing to calibrate
    assert summary["shot_deltas"][0]["diff"]["average"]["diff"] == pytest.approx(0.03125)
    for name in ("radar_0shot.png", "tasks_0shot.png", "radar_5shot.png", "tasks_5shot.png"):
        with Image.open(out / name) as im:
            im.verify()
        with Image.open(out / name) as im:
            assert im.format == "PNG" and im.size[0] > 400 and im.size[1] > 300
            assert len(im.convert("L").getcolors(maxcolors=1 << 16)) > 10  # something was drawn
    assert not list(out.glob("reliability_*.png"))  # the fixtures carry no log-probs


def test_stale_predictions_are_refused(runs, tmp_path, capsys):
    res = json.loads((runs / "good" / "results_0shot.json").read_text())
    res["tasks"]["cloze"]["correct"] = 2
    (runs / "good" / "results_0shot.json").write_text(json.dumps(res))
    assert run_report([str(runs / "good" / "results_0shot.json"), "--out", str(tmp_path / "x"), "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert "results_0shot.json" in err and "tasks.cloze" in err and "2/4" in err and "1/4" in err


def test_bad_inputs_name_the_file(tmp_path, capsys):
    assert run_report([str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert run_report([str(tmp_path / "empty"), "--out", str(tmp_path / "x")]) == 2
    assert "holds no results_*shot.json" in capsys.readouterr().err
    path = write_run(tmp_path / "r", "m", 0, task_rows("cloze", 2, 1))
    pred = path.parent / "predictions_0shot.jsonl"
    lines = pred.read_text().splitlines()
    pred.write_text(lines[0] + "\n" + lines[1].replace('"gold": "B"', '"gold": "E"') + "\n")
    assert run_report([str(path), "--out", str(tmp_path / "x"), "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert "predictions_0shot.jsonl, line 2, field 'gold'" in err


def test_duplicate_labels_are_told_apart(tmp_path):
    res = tmp_path / "r"
    write_run(res, "m", 0, task_rows("cloze", 2, 1), slug="a")
    p = write_run(res, "m", 0, task_rows("cloze", 2, 2), slug="b")
    data = json.loads(p.read_text())
    data["setting"]["chat"] = True
    p.write_text(json.dumps(data))
    results = [rs.load_result(f) for f in rs.collect_result_files([res])]
    rs.label_results(results)
    assert sorted(r.label for r in results) == ["m", "m (chat)"]


def test_run_items_null_answers_and_relative_predictions_path(tmp_path, monkeypatch):
    # eval keeps records of items outside the latest run after the run's own, in the same file; a null
    # pred (question too long for the model) counts as wrong; predictions_file may be a cwd-relative path
    rows = task_rows("cloze", 3, 2)
    rows[2]["pred"] = None
    path = write_run(tmp_path / "out", "m", 0, rows)
    pred = path.parent / "predictions_0shot.jsonl"
    with pred.open("a", encoding="utf-8") as fh:
        for r in task_rows("cloze", 5, 5, prefix="old-") + task_rows("radical", 2, 2):
            fh.write(json.dumps(r) + "\n")
    data = json.loads(path.read_text())
    assert data["tasks"]["cloze"] == {"correct": 2, "total": 3, "accuracy": 2 / 3, "fewshot_truncated_items": 0}
    data["predictions_file"] = "out/m/predictions_0shot.jsonl"  # as written by a run started in tmp_path
    path.write_text(json.dumps(data))
    monkeypatch.chdir(tmp_path.parent)  # elsewhere: the file is found beside the results file
    r = rs.load_result(path)
    assert [p["id"] for p in r.predictions] == ["cloze-0", "cloze-1", "cloze-2"]
    assert r.figures["tasks"]["cloze"]["correct"] == 2 and set(r.figures["tasks"]) == {"cloze"}
    assert run_report([str(path), "--out", str(tmp_path / "rep"), "--no-plots", "--resamples", "50"]) == 0


def test_circular_runs_get_their_own_section(tmp_path):
    rows = [dict(r, id=f"{r['id']}#rot{k}") for r in task_rows("cloze", 2, 2) for k in range(4)]
    rows[5]["pred"] = "D" if rows[5]["gold"] != "D" else "A"  # item cloze-1 fails one rotation
    path = write_run(tmp_path / "out", "m", 0, rows)
    data = json.loads(path.read_text())
    data["setting"]["circular"] = True
    data["circular"] = {  # by hand: plain 2/2, circular 1/2
        "competencies": {"context": {"plain_accuracy": 1.0, "circular_accuracy": 0.5, "rotation_accuracy": 7 / 8}},
        "average": {"plain_accuracy": 1.0, "circular_accuracy": 0.5, "rotation_accuracy": 7 / 8},
    }
    path.write_text(json.dumps(data))
    out = tmp_path / "rep"
    assert run_report([str(path), "--out", str(out), "--no-plots", "--resamples", "50"]) == 0
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "(circular, all rotations) |" not in md and "### Competencies" not in md  # not in the ordinary tables
    section = md.split("## Option-order robustness (CircularEval)", 1)[1]
    assert "| m | 0 | – | – | – | 100.0 / 50.0 | 100.0 / 50.0 |" in section
    assert json.loads((out / "summary.json").read_text())["circular"][0]["average"]["circular_accuracy"] == 0.5


def test_plots_without_a_cjk_font_use_english_labels(runs, tmp_path, monkeypatch):
    from PIL import Image

    monkeypatch.setattr(plots, "plot_labels_cjk", lambda: None)
    assert plots._label("字形", "Glyph", None) == "Glyph" and plots._label("字形", "Glyph", "X") == "字形\nGlyph"
    results = [rs.load_result(p) for p in rs.collect_result_files([runs])]
    rs.label_results(results)
    for r in results:
        r.ci = {}
    rows = report.sort_rows([r for r in results if r.shots == 0])
    plots.radar_plot(rows, tmp_path / "r.png", "t")
    plots.task_bar_plot(rows, tmp_path / "b.png", "t")
    for name in ("r.png", "b.png"):
        with Image.open(tmp_path / name) as im:
            assert im.format == "PNG"


def test_a_cjk_font_is_found_when_installed():
    from matplotlib import font_manager as fm

    installed = [f for f in fm.findSystemFonts() if "wqy" in f.lower() or "notosanscjk" in f.lower().replace("-", "")]
    if not installed:
        pytest.skip("no CJK font installed (scripts/install.sh installs Debian fonts-wqy-microhei)")
    assert plots.plot_labels_cjk() is not None


def _text_outside_canvas(fig) -> list[str]:
    """Visible, non-empty text artists whose drawn extent leaves the figure canvas."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.canvas.get_width_height()
    out = []
    for text in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_window_extent")):
        if not text.get_visible() or not str(text.get_text()).strip():
            continue
        box = text.get_window_extent(renderer)
        if box.x0 < -0.5 or box.y0 < -0.5 or box.x1 > width + 0.5 or box.y1 > height + 0.5:
            out.append(f"{text.get_text()!r} at {box.bounds} (canvas {width}x{height})")
    return out


def _scored(seed: int, n: int = 60) -> list[dict]:
    """Prediction records with letter log-probabilities, as `ancientbench eval` writes them."""
    import math
    import random

    rng = random.Random(seed)
    out = []
    for i in range(n):
        logits = [rng.gauss(0, 2) for _ in range(4)]
        norm = math.log(sum(math.exp(x) for x in logits))
        lp = [x - norm for x in logits]
        out.append({"id": f"q{i}", "task": "cloze", "gold": "ABCD"[rng.randrange(4)], "pred": "ABCD"[lp.index(max(lp))], "logprobs": lp})
    return out


def _rows_with_twins(runs):
    results = [rs.load_result(p) for p in rs.collect_result_files([runs])]
    rs.label_results(results)
    rows = report.sort_rows([r for r in results if r.shots == 0])
    twin = copy.copy(rows[0])
    twin.label = rows[0].label + " copy"  # identical figures: its radar line coincides with the original's
    return rows + [twin]


def test_every_plot_keeps_its_text_on_the_canvas(runs):
    import matplotlib.pyplot as plt

    from ancientbench.reports import calibration

    rows = _rows_with_twins(runs)
    figures = {
        "radar": plots.radar_figure(rows, "AncientBench, zero-shot (a long title to test the margins)"),
        "bars": plots.task_bar_figure(rows, "AncientBench per task, zero-shot"),
        "reliability": calibration.reliability_figure(
            [(f"model {k} with a long name", _scored(seed=k)) for k in range(4)], bins=10, title="Reliability, zero-shot"
        ),
    }
    for name, fig in figures.items():
        assert _text_outside_canvas(fig) == [], name
        plt.close(fig)


def test_radar_chance_ring_is_off_the_grid_and_twins_are_named(runs):
    import matplotlib.pyplot as plt

    rows = _rows_with_twins(runs)
    fig = plots.radar_figure(rows, "t")
    ax = fig.axes[0]
    assert 25 not in [round(t) for t in ax.get_yticks()]  # no gridline under the chance ring
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "chance (25%)" in labels and f"{rows[-1].label} (= {rows[0].label})" in labels
    lines = [ln for ln in ax.get_lines() if ln.get_label() in (rows[0].label, labels[-1])]
    assert len({(ln.get_marker(), ln.get_linestyle()) for ln in lines}) == 2  # coinciding lines drawn differently
    plt.close(fig)


def test_the_same_model_in_two_modes_gets_two_labels(runs):
    results = [rs.load_result(p) for p in rs.collect_result_files([runs])]
    good = [r for r in results if r.label == "" and r.shots == 0 and "good" in str(r.data["model"]["name_or_path"])][0]
    twin = copy.deepcopy(good)
    twin.data["setting"]["mode"] = "generate"
    rs.label_results([good, twin])
    assert good.label == "good" and twin.label == "good (generate mode)" and good.model_key != twin.model_key


def test_rows_marked_incomplete_get_their_footnote(runs, tmp_path):
    out = tmp_path / "rep"
    assert run_report([str(runs), "--out", str(out), "--no-plots"]) == 0
    md = (out / "report.md").read_text(encoding="utf-8")
    assert re.search(r"\| \S.* \* \|", md)  # the fixture runs do not hold all ten tasks: marked
    assert report.INCOMPLETE_NOTE in md


def test_ai_examinee_answers_follow_the_option_text_across_rebuilds(tmp_path):
    from ancientbench.reports.reference import ai_examinee

    probe = tmp_path / "probes" / "2026-01-01-cloze-full"
    probe.mkdir(parents=True)
    (probe / "key.json").write_text(json.dumps({"task": "cloze", "items": {
        "q001": {"id": "cloze-1", "perm": "BCDA", "gold": "D"},
        "q002": {"id": "cloze-2", "perm": "ABCD", "gold": "A"}}}), encoding="utf-8")
    (probe / "quiz.md").write_text("# Quiz\n\n## q001\nQ\nA. 乙\nB. 丙\nC. 丁\nD. 甲\n\n## q002\nQ\nA. 子\nB. 丑\nC. 寅\nD. 卯\n",
                                   encoding="utf-8")
    (probe / "answers.jsonl").write_text('{"qid": "q001", "answer": "D"}\n{"qid": "q002", "answer": "A"}\n', encoding="utf-8")
    # the current build shows item 1's options in another order (key 甲 now at C); item 2's options changed
    rows = {"cloze": [{"id": "cloze-1", "task": "cloze", "A": "丙", "B": "乙", "C": "甲", "D": "丁", "answer": "C"},
                      {"id": "cloze-2", "task": "cloze", "A": "子", "B": "丑", "C": "寅", "D": "辰", "answer": "A"}]}
    out = ai_examinee(rows, tmp_path / "probes")
    picked, letters, detail = out["cloze"]
    assert [r["id"] for r in picked] == ["cloze-1"] and letters == ["C"] and detail["left_out_changed_or_gone"] == 1


def test_without_probe_records_the_ai_examinee_row_is_left_out_or_one_clear_error(tmp_path, monkeypatch):
    """An installed package has no records/probes: the default rows leave the AI examinee out and say so; asking
    for it by name, or for its answers, is one error naming the folder."""
    from ancientbench.errors import AncientBenchError, RecordsMissing
    from ancientbench.reports import reference

    assert reference.runnable_rows(None, {}, None, required=False, log=lambda m: None) == list(reference.ROWS)  # a clone has them
    gone = tmp_path / "records" / "probes"
    monkeypatch.setattr(reference, "PROBES_DIR", gone)
    said = []
    assert reference.runnable_rows(None, {}, None, required=False, log=said.append) == [s for s in reference.ROWS if s != "ai-examinee"]
    assert len(said) == 1 and str(gone) in said[0] and "left out" in said[0]
    with pytest.raises(AncientBenchError, match=f"'ai-examinee' cannot run: needs the probe records in {re.escape(str(gone))}"):
        reference.runnable_rows(["ai-examinee"], {}, None, required=True)
    with pytest.raises(RecordsMissing, match="records/ comes with a clone"):
        reference.ai_examinee({"cloze": []})


@pytest.fixture
def no_pypinyin(monkeypatch):
    """pypinyin absent (an install without its dependencies); the strategies' caches emptied before and after."""
    from ancientbench.quality import strategies

    cached = (strategies._pypinyin, strategies.syllables, strategies.toneless, strategies.initial_final_tone)
    for f in cached:
        f.cache_clear()
    monkeypatch.setitem(sys.modules, "pypinyin", None)
    yield
    monkeypatch.delitem(sys.modules, "pypinyin")
    for f in cached:
        f.cache_clear()


def test_a_row_whose_source_is_missing_is_left_out_before_any_work(no_pypinyin, tmp_path):
    """The Mandarin reader reads pypinyin: without it the row is left out with one line naming the install command
    (the ladder checks this before its evaluations), or, named by the user, one error; chance still runs."""
    from ancientbench.errors import AncientBenchError
    from ancientbench.reports import reference

    said = []
    assert reference.check_rows(["chance", "mandarin-reader"], limit=3, log=said.append) == ["chance"]
    assert len(said) == 1 and said[0].startswith("Mandarin reader: left out;") and "pip install 'pypinyin" in said[0]
    with pytest.raises(AncientBenchError, match="'mandarin-reader' cannot run: pypinyin"):
        reference.write_reference_rows(tmp_path / "ref", rows=["mandarin-reader"], limit=3, required=True)
    assert not (tmp_path / "ref").exists()
    written = reference.write_reference_rows(tmp_path / "ref", rows=["chance", "mandarin-reader"], limit=3, log=said.append)
    assert {p.parent.name for p in written} == {"chance"}


def test_ladder_markdown_renders_rows_missing_whole_competencies():
    from ancientbench.reports.ladder_record import render_markdown

    full = {"score": 0.25, "ci": [0.2, 0.3]}
    rows = [{"label": "m", "competencies": {c: full for c in ("glyph", "pronunciation", "meaning", "context")},
             "average": full, "tasks": {"cloze": {"accuracy": 0.25}}},
            {"label": "sample", "competencies": {"context": {"score": 1.0, "ci": [1.0, 1.0]}},
             "average": {"score": 1.0, "ci": [1.0, 1.0]}, "tasks": {"cloze": {"accuracy": 1.0}}}]
    md = render_markdown({"limit_per_task": 200, "settings": {"0": rows}, "compare_with_tiny_random": {}})
    assert "| sample | - | - | - | 100.0 [100.0, 100.0] | 100.0 [100.0, 100.0] | - |" in md


# ------------------------------------------------------------------------------ not answering (issue 36)


def _balanced(task: str, n: int, pred=None, prefix: str = "") -> list[dict]:
    """n items with balanced keys (A, B, C, D in turn); ``pred`` a constant answer, else every item right."""
    from results_fixtures import LETTERS, row

    out = []
    for i in range(n):
        gold = LETTERS[i % 4]
        p = gold if pred is None else pred
        out.append(row(f"{prefix}{task}-{i}", task, gold, p == gold, pred=p))
    return out


def test_a_constant_letter_model_is_flagged_and_a_balanced_one_is_not(tmp_path):
    from ancientbench.letters import flag_threshold, letter_distribution

    res = tmp_path / "results"
    write_run(res, "constant", 0, _balanced("radical", 40, pred="D") + _balanced("cloze", 40, pred="D"))
    write_run(res, "answering", 0, _balanced("radical", 40) + _balanced("cloze", 40))
    summary = report.build_report([rs.load_result(p) for p in rs.collect_result_files([res])], tmp_path / "r",
                                  n_resamples=50, seed=0, bins=5, plots=False)
    rows = {r["label"]: r for r in summary["settings"]["0"]["rows"]}
    assert rows["constant"]["answer_letters"]["not_answering"] and rows["constant"]["answer_letters"]["top"] == "D"
    assert rows["constant"]["answer_letters"]["predicted"]["D"] == 1.0
    assert not rows["answering"]["answer_letters"]["not_answering"]
    md = summary["markdown"]
    comp = {cells(ln)[0]: cells(ln) for ln in table_lines(md, "Competencies")}
    assert comp["constant *"][-1] == "D 100.0 !" and comp["answering *"][-1] == "A 25.0"
    assert "**constant** answers D to 100.0% of 80 items" in md and "**answering" not in md
    # the threshold follows the keys: half-way from their largest letter share to 100%
    assert flag_threshold({"A": 0.25, "B": 0.25, "C": 0.25, "D": 0.25}) == 0.625
    skewed = letter_distribution(["A"] * 66 + ["B"] * 34, ["A"] * 40 + ["B"] * 60)  # keys: B 60% -> threshold 80%
    assert skewed["threshold"] == 0.8 and not skewed["not_answering"]
    assert letter_distribution(["A"] * 66 + ["B"] * 34, list("ABCD") * 25)["not_answering"]


def test_unparsed_answers_are_flagged_in_the_same_place(tmp_path):
    from ancientbench.letters import letter_distribution
    from ancientbench.table import results_table

    dist = letter_distribution([None] * 9 + ["A"], list("ABCDABCDAB"))
    assert dist["top"] == "none" and dist["not_answering"]
    res = {"model": {"name_or_path": "chatty"}, "setting": {"shots": 0, "mode": "generate", "letter_style": "bare"},
           "competencies": {}, "average": None, "complete": False, "tasks": {}, "answer_letters": dist}
    text = results_table([res])
    assert "NOT ANSWERING: chatty 0-shot, generate gives no readable letter for 90.0% of 10 items" in text
    assert "none 90.0 !" in text


def test_eval_records_the_letter_distribution_and_prints_the_share(tmp_path, capsys):
    from ancientbench.cli import main

    assert main(["eval", "--model", "tiny-random", "--tasks", "cloze", "radical", "--limit", "8", "--shots", "0",
                 "--output", str(tmp_path), "--no-progress"]) == 0
    res = json.loads(next(tmp_path.rglob("results_0shot.json")).read_text(encoding="utf-8"))
    dist = res["answer_letters"]
    assert dist["n"] == 16 and abs(sum(dist["predicted"].values()) - 1) < 1e-6 and set(dist["tasks"]) == {"cloze", "radical"}
    out = capsys.readouterr().out
    assert "top answer %" in out and f"{dist['top']} {100 * dist['top_share']:.1f}" in out


def test_shot_independent_rows_appear_once_and_not_as_a_change(tmp_path):
    from ancientbench.reports.reference import write_row

    res = tmp_path / "results"
    write_run(res, "/models/good", 0, good_rows(3), slug="good")
    write_run(res, "/models/good", 5, good_rows(4), slug="good")
    rows = good_rows(2)
    items = [{"id": r["id"], "task": r["task"], "answer": r["gold"]} for r in rows]
    per_task = {}
    for it, r in zip(items, rows):
        per_task.setdefault(it["task"], ([], [], {}))
        per_task[it["task"]][0].append(it)
        per_task[it["task"]][1].append(r["pred"])
    write_row(res, "chance", per_task, {}, "fixture", [0, 5], 0)
    summary = report.build_report([rs.load_result(p) for p in rs.collect_result_files([res])], tmp_path / "r",
                                  n_resamples=50, seed=0, bins=5, plots=False)
    zero = [r["label"] for r in summary["settings"]["0"]["rows"]]
    five = [r["label"] for r in summary["settings"]["5"]["rows"]]
    assert "Chance (shot-independent)" in zero and not any("Chance" in x for x in five)
    assert [d["model"] for d in summary["shot_deltas"]] == ["good"]
    assert "read no exemplars: they are reported once" in summary["markdown"]


def test_ladder_markdown_shows_the_injection_pair_and_flags():
    from ancientbench.reports.ladder_record import render_markdown

    full = {"score": 0.25, "ci": [0.2, 0.3]}
    dist = {"n": 80, "predicted": {"A": 0, "B": 0, "C": 0, "D": 1.0, "none": 0}, "gold": {x: 0.25 for x in "ABCD"},
            "top": "D", "top_share": 1.0, "threshold": 0.625, "not_answering": True}
    rows = [{"label": "m", "competencies": {c: full for c in ("glyph", "pronunciation", "meaning", "context")},
             "average": full, "tasks": {"cloze": {"accuracy": 0.25}}, "answer_letters": dist}]
    cmp_ = {"average": {"a": 0.3, "b": 0.25, "diff": 0.05, "ci": [0.01, 0.09]},
            "micro_accuracy": {"mcnemar": {"p_value": 0.01}}}
    md = render_markdown({"limit_per_task": 200, "settings": {"0": rows}, "compare_with_tiny_random": {},
                          "compare_inject": {"ppl_0shot": cmp_}})
    assert "| m | 25.0 [20.0, 30.0] | 25.0 [20.0, 30.0] | 25.0 [20.0, 30.0] | 25.0 [20.0, 30.0] | 25.0 [20.0, 30.0] | D 100.0 ! |" in md
    assert "**Not answering**: m answers D to 100.0% of 80 items" in md
    assert "**ancientbench-inject-b against ancientbench-inject-a**" in md and "| ppl, 0shot | 30.0 | 25.0 | +5.0 | [1.0, 9.0] | 0.01 |" in md
