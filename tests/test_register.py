"""`ancientbench register`: the bare names load_dataset("ancientbench", cfg) and evaluate.load("ancientbench_metric")
work offline from a folder that has nothing of the project, in fresh processes with a fresh HF_HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}


def _py(code: str, cwd, hf_home, *, quiet: bool = False) -> str:
    env = {**os.environ, **OFFLINE, "HF_HOME": str(hf_home)}
    env.pop("HF_DATASETS_CACHE", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    if quiet:  # no warning, no fallback notice, no progress bar text
        assert "warn" not in out.stderr.lower() and "cached version" not in out.stderr, out.stderr[-3000:]
    return out.stdout


@pytest.fixture(scope="module")
def registered(tmp_path_factory):
    hf_home = tmp_path_factory.mktemp("hf_home")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    _py("from ancientbench.cli import main; raise SystemExit(main(['register']))", elsewhere, hf_home)
    return hf_home, elsewhere


def test_evaluate_load_by_bare_name_from_any_folder(registered):
    hf_home, elsewhere = registered
    out = _py(
        "import evaluate, json; m = evaluate.load('ancientbench_metric'); "
        "print(json.dumps(m.compute(predictions=['A', 2], references=['A', 'B'], tasks=['radical', 'cloze'], n_resamples=0)))",
        elsewhere, hf_home, quiet=True,
    )
    r = json.loads(out.strip().splitlines()[-1])
    assert r["tasks"]["radical"]["accuracy"] == 1.0 and r["tasks"]["cloze"]["accuracy"] == 0.0 and r["average"] == 0.5


def test_load_dataset_by_bare_name_from_any_folder_every_config(registered):
    from ancientbench.tasks import TASK_NAMES

    hf_home, elsewhere = registered
    out = _py(
        "import datasets, json; from ancientbench.tasks import TASK_NAMES; "
        "print(json.dumps({c: datasets.load_dataset('ancientbench', c)['test'].num_rows for c in [*TASK_NAMES, 'all']}))",
        elsewhere, hf_home,
    )
    sizes = json.loads(out.strip().splitlines()[-1])
    assert set(sizes) == {*TASK_NAMES, "all"} and all(n > 0 for n in sizes.values())
    assert sizes["all"] == sum(sizes[t] for t in TASK_NAMES)


def test_without_registration_the_bare_metric_name_is_not_found(tmp_path):
    env = {**os.environ, **OFFLINE, "HF_HOME": str(tmp_path / "empty")}
    out = subprocess.run(
        [sys.executable, "-c", "import evaluate; evaluate.load('ancientbench_metric')"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode != 0 and "ancientbench_metric" in out.stderr


# ---------------------------------------------------------------- the registered dataset follows its files


def _clone(root, name="ancientbench"):
    """A small dataset folder named like the package's (two configs + all), with its card generated."""
    from ancientbench.publish import card
    from ancientbench.schema import split_file, write_jsonl

    folder = root / name
    for t in ("radical", "cloze"):
        for split, n in (("test", 6), ("dev", 5)):
            rows = [
                {"id": f"{t}-{split}-{i}", "task": t, "question": f"{t} 問 {i}", "A": "甲", "B": "乙", "C": "丙", "D": "丁",
                 "answer": "ABCD"[i % 4], "subset": "", "source": "pkg 1.0 (MIT)", "citation": f"c{i}", "explanation": ""}
                for i in range(n)
            ]
            write_jsonl(split_file(folder, t, split), rows)
    assert card.main(["--folder", str(folder)]) == 0
    return folder


def _answer_b(folder, regenerate: bool):
    """Change the first cloze test answer A -> B: same size, same row count, only the checksum tells."""
    from ancientbench.publish import card

    path = folder / "data" / "cloze" / "test.jsonl"
    before = path.stat().st_size
    text = path.read_text(encoding="utf-8")
    assert '"answer": "A"' in text.splitlines()[0]
    path.write_text(text.replace('"answer": "A"', '"answer": "B"', 1), encoding="utf-8")
    assert path.stat().st_size == before
    if regenerate:
        assert card.main(["--folder", str(folder)]) == 0


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh datasets cache for this test (what HF_DATASETS_CACHE names), and a working folder with no dataset."""
    from datasets import config

    monkeypatch.setattr(config, "HF_DATASETS_CACHE", str(tmp_path / "hf-datasets"))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    return tmp_path / "hf-datasets"


def _register(folder, capsys) -> tuple[int, str]:
    from ancientbench.cli import main

    code = main(["register", "--folder", str(folder)])
    out = capsys.readouterr()
    return code, out.out + out.err


def _first_answers(src) -> str:
    """The first cloze test answer in config cloze, in config all, and with no config name (the card's default,
    cloze), by bare name or by path."""
    import datasets

    cloze = datasets.load_dataset(str(src), "cloze", split="test")
    every = datasets.load_dataset(str(src), "all", split="test")
    default = datasets.load_dataset(str(src), split="test")
    assert set(default["task"]) == {"cloze"}, set(default["task"])
    return " ".join((cloze[0]["answer"], every[every["id"].index("cloze-test-0")]["answer"], default[0]["answer"]))


def test_a_changed_answer_of_the_same_size_is_followed_by_bare_name_and_path(tmp_path, cache, capsys):
    from ancientbench.publish import card

    folder = _clone(tmp_path / "clone")
    assert _register(folder, capsys)[0] == 0
    assert _first_answers("ancientbench") == "A A A" and _first_answers(folder) == "A A A"

    _answer_b(folder, regenerate=False)  # the card still records the old checksum: register refuses, naming the file
    capsys.readouterr()  # what the loads above printed (datasets' own notices) is not register's output
    code, out = _register(folder, capsys)
    assert code == 2 and "data/cloze/test.jsonl differs from the sha256" in out and "Traceback" not in out

    assert card.main(["--folder", str(folder)]) == 0  # the card now records the new checksum
    assert _first_answers(folder) == "B B B"  # by path: a new cache key, before any register
    assert _register(folder, capsys)[0] == 0
    assert _first_answers("ancientbench") == "B B B"


def test_two_clones_on_one_cache_never_serve_each_other_unnoticed(tmp_path, cache, capsys):
    one = _clone(tmp_path / "one")
    two = _clone(tmp_path / "two")
    _answer_b(two, regenerate=True)

    code, out = _register(one, capsys)
    assert code == 0 and "note:" not in out
    code, out = _register(two, capsys)
    assert code == 0 and f"now serves {two.resolve()}" in out and f"it served {one.resolve()}" in out
    assert _first_answers(one) == "A A A" and _first_answers(two) == "B B B"  # by path: each clone its own data
    assert _first_answers("ancientbench") == "B B B"  # by name: the last registered, and register said so
    code, out = _register(one, capsys)  # re-registering a clone already cached takes the name back
    assert code == 0 and f"now serves {one.resolve()}" in out
    assert _first_answers("ancientbench") == "A A A"


def test_a_cached_copy_written_from_other_files_under_the_same_card_is_rebuilt(tmp_path, cache, capsys):
    one = _clone(tmp_path / "one")
    stale = _clone(tmp_path / "stale")
    _answer_b(stale, regenerate=False)  # same card as `one`, other rows: datasets gives both one cache key
    assert _first_answers(stale) == "B B B"
    assert _first_answers(one) == "B B B"  # datasets alone serves the other folder's rows, silently
    with pytest.warns(UserWarning, match="held other rows than its files; rebuilt it"):
        assert _register(one, capsys)[0] == 0
    assert _first_answers(one) == "A A A" and _first_answers("ancientbench") == "A A A"


def test_register_no_progress_draws_no_bars(tmp_path):
    """In a fresh process datasets reads HF_DATASETS_DISABLE_PROGRESS_BARS when register imports it: no
    "Generating … split" bars (8 of them for this folder without the flag)."""
    folder = _clone(tmp_path / "clone")
    env = {**os.environ, **OFFLINE, "HF_HOME": str(tmp_path / "hf")}
    env.pop("HF_DATASETS_CACHE", None)
    out = subprocess.run([sys.executable, "-m", "ancientbench", "register", "--folder", str(folder), "--no-progress"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "cached configs: radical, cloze, all" in out.stdout
    assert "Generating" not in out.stderr and "%|" not in out.stderr, out.stderr[-2000:]
