"""``ancientbench push-to-hub``: publish the dataset folder (card + data) and, with ``--metric``, the metric.

The dataset goes to a Hub *dataset* repository with ``upload_folder`` restricted (``allow_patterns``) to the
card and the data files it names, so none of the package's Python modules travel. The metric goes where
``evaluate.load("ORG/NAME")`` looks for it: a *Space* whose script is named after the Space
(``NAME.py``), with the metric card, its requirements and a generated ``app.py`` (the evaluate widget).
``--dry-run`` lists what would be uploaded and validates both cards without touching the network. Every
failure (offline, unreachable Hub, no login, bad card) ends with one ``error:`` line and exit status 1 or 2.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

import yaml

from .. import METRIC_PATH
from ..argtypes import add_no_progress
from ..paths import DATASET_PATH
from ..schema import FIELDS, SPLITS
from ..tasks import TASK_NAMES
from .card import generated_block, present_configs, read_folder, render_counts, render_sources, render_yaml, yaml_header

REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
METRIC_FILES = ("ancientbench_metric.py", "README.md", "requirements.txt")
APP_PY = """\
import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("{space_id}")
launch_gradio_widget(module)
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo-id", required=True, metavar="ORG/NAME", help="Hub dataset repository to upload the dataset folder to")
    p.add_argument("--metric", action="store_true", help="also upload the evaluate metric, as a Space")
    p.add_argument("--metric-repo-id", default=None, metavar="ORG/NAME",
                   help="Space for the metric (default: ORG/ancientbench_metric, ORG taken from --repo-id)")
    p.add_argument("--data", default=None, metavar="DIR", help="dataset folder to upload (default: the package's own)")
    p.add_argument("--dry-run", action="store_true", help="list what would be uploaded and validate the cards; upload nothing")
    p.add_argument("--allow-partial", action="store_true", help="allow publishing when some of the ten configs have no data")
    p.add_argument("--private", action="store_true", help="create the repositories as private")
    p.add_argument("--token", default=None, help="Hub token (default: the stored login or HF_TOKEN)")
    p.add_argument("--commit-message", default="Upload AncientBench", help="commit message (default: %(default)s)")
    add_no_progress(p)  # the Hub client's upload bars


# ------------------------------------------------------------------ what is uploaded, and its checks


def dataset_files(folder: Path) -> list[str]:
    """The dataset card and every data file its YAML names, relative to the folder (the upload's allow_patterns)."""


    text = (folder / "README.md").read_text(encoding="utf-8")
    header = yaml_header(text)
    meta = yaml.safe_load(header.strip().strip("-")) if header else {}
    files = ["README.md"]
    for config in meta.get("configs") or []:
        for f in config.get("data_files", []):
            for path in f["path"] if isinstance(f["path"], list) else [f["path"]]:  # "all" lists every task's file
                if path not in files:
                    files.append(path)
    return files


def validate_dataset(folder: Path, allow_partial: bool = False) -> list[str]:
    """Problems with the dataset folder as a Hub dataset (empty list: ready to publish)."""
    from huggingface_hub import DatasetCard  # lazy: huggingface_hub is slow to import; only the Hub calls need it


    path = folder / "README.md"
    if not path.is_file():
        return [f"no dataset card at {path}: run python -m ancientbench.publish.card"]
    problems: list[str] = []
    try:
        meta = DatasetCard.load(path).data.to_dict()
    except Exception as e:  # the Hub's own card parser: any failure is a card problem to report, not a crash
        return [f"{path}: the card's YAML does not parse: {e}"]
    configs = meta.get("configs") or []
    for c in configs:
        name = c.get("config_name")
        splits = [f.get("split") for f in c.get("data_files", [])]
        if splits != list(SPLITS):
            problems.append(f"config {name}: splits {splits}, expected {list(SPLITS)}")
        for f in c.get("data_files", []):
            paths = f.get("path", "")
            for path_ in paths if isinstance(paths, list) else [paths]:  # the "all" config lists every task's file
                if not (folder / path_).is_file():
                    problems.append(f"config {name}: data file {path_} does not exist")
    infos = {i.get("config_name"): i for i in meta.get("dataset_info") or []}
    for c in configs:
        feats = [(f.get("name"), f.get("dtype")) for f in infos.get(c.get("config_name"), {}).get("features", [])]
        if feats != [(f, "string") for f in FIELDS]:
            problems.append(f"config {c.get('config_name')}: features differ from the schema's FIELDS")
    for key, want in (("license", "apache-2.0"), ("language", ["zh", "lzh"])):
        if meta.get(key) != want:
            problems.append(f"card field {key!r} is {meta.get(key)!r}, expected {want!r}")
    missing = [t for t in TASK_NAMES if t not in present_configs(folder)]
    if missing and not allow_partial:
        problems.append(f"configs without data: {', '.join(missing)} (build them, or pass --allow-partial)")
    try:
        rows = read_folder(folder)
    except ValueError as e:  # DataError: names file, row and field
        return problems + [str(e)]
    text = path.read_text(encoding="utf-8")
    if yaml_header(text) != render_yaml(folder, rows):
        problems.append("the card's YAML is out of date with the data files: run python -m ancientbench.publish.card")
    if (generated_block(text, "counts") or "").strip() != render_counts(rows).strip() or (
        generated_block(text, "sources") or ""
    ).strip() != render_sources(rows).strip():
        problems.append("the card's count/source tables are out of date: run python -m ancientbench.publish.card")
    return problems


def validate_metric(folder: Path) -> list[str]:
    """Problems with the metric folder as an evaluate Space (empty list: ready to publish)."""
    from huggingface_hub import RepoCard  # lazy: huggingface_hub is slow to import; only the Hub calls need it

    problems = [f"missing {folder / f}" for f in METRIC_FILES if not (folder / f).is_file()]
    if problems:
        return problems
    try:
        meta = RepoCard.load(folder / "README.md").data.to_dict()
    except Exception as e:  # the Hub's own card parser: report, do not crash
        return [f"{folder / 'README.md'}: the card's YAML does not parse: {e}"]
    if meta.get("sdk") != "gradio" or meta.get("app_file") != "app.py":
        problems.append("metric card must declare sdk: gradio and app_file: app.py (the evaluate Space layout)")
    if not {"evaluate", "metric"} <= set(meta.get("tags") or []):
        problems.append("metric card tags must include evaluate and metric")
    problems += space_install_problems(folder)
    return problems


def metric_requirements(folder: Path) -> list[str]:
    """The distribution names in the metric's requirements.txt (what the Space installs)."""
    names = []
    for line in (folder / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0].lower())
    return names


def space_install_problems(folder: Path) -> list[str]:
    """Whether the Space would install: every module the metric imports is the standard library or named in
    requirements.txt, and requirements.txt names nothing that is not on PyPI (the package itself is not)."""
    reqs = set(metric_requirements(folder))
    problems = [f"requirements.txt names {r!r}, which is not on PyPI: the metric must be self-contained" for r in sorted(reqs) if r == "ancientbench"]
    tree = ast.parse((folder / "ancientbench_metric.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        for m in mods:
            top = (m or "").split(".")[0]
            if top and top not in sys.stdlib_module_names and top.lower() not in reqs:
                problems.append(f"ancientbench_metric.py imports {top!r}, which requirements.txt does not install")
    return problems


def metric_space_id(args: argparse.Namespace) -> str:
    return args.metric_repo_id or f"{args.repo_id.split('/')[0]}/ancientbench_metric"


def metric_operations(folder: Path, space_id: str) -> list[tuple[str, bytes]]:
    """``(path in the Space, content)``: the script renamed after the Space, the card, requirements, app.py."""
    name = space_id.split("/")[1]
    ops = [(f"{name}.py" if f == "ancientbench_metric.py" else f, (folder / f).read_bytes()) for f in METRIC_FILES]
    ops.append(("app.py", APP_PY.format(space_id=space_id).encode()))
    return ops


def _size(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} B"


# ------------------------------------------------------------------ errors in one line


def _network_error(e: BaseException) -> bool:
    """A failure to reach the Hub, whichever HTTP library huggingface_hub uses (requests, httpx, httpx2)."""
    for cls in type(e).__mro__:
        if cls in (ConnectionError, TimeoutError):
            return True
        if cls.__module__.split(".")[0] in {"requests", "urllib3", "httpx", "httpx2", "httpcore", "httpcore2"} and (
            "Connect" in cls.__name__ or "Timeout" in cls.__name__ or cls.__name__ in ("TransportError", "NetworkError")
        ):
            return True
    return False


def explain(e: BaseException) -> str:
    """One line saying why an upload failed and what to do."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled  # lazy: huggingface_hub is slow to import; only the Hub calls need it

    first = (str(e).strip().splitlines() or [type(e).__name__])[0]
    if isinstance(e, OfflineModeIsEnabled):
        return "error: Hugging Face offline mode is on (HF_HUB_OFFLINE=1): unset it to upload, or use --dry-run"
    if _network_error(e):
        return f"error: cannot reach the Hugging Face Hub ({type(e).__name__}: {first}); check the network, or use --dry-run"
    if isinstance(e, HfHubHTTPError):
        status = getattr(getattr(e, "response", None), "status_code", None)
        if status in (401, 403):
            return f"error: the Hub refused the upload (HTTP {status}): log in with `hf auth login` or pass --token with write access"
        return f"error: the Hub answered HTTP {status}: {first}"
    return f"error: upload failed: {type(e).__name__}: {first}"


# ------------------------------------------------------------------ the command


def run(args: argparse.Namespace) -> int:
    for rid in [args.repo_id] + ([metric_space_id(args)] if args.metric else []):
        if not REPO_ID.match(rid):
            print(f"error: {rid!r} is not a Hub repository id of the form ORG/NAME")
            return 2
    folder = Path(args.data or DATASET_PATH)
    metric_folder = Path(METRIC_PATH)
    if not folder.is_dir():
        print(f"error: dataset folder {folder} does not exist")
        return 2

    metric_problems = validate_metric(metric_folder) if args.metric else []
    problems = validate_dataset(folder, args.allow_partial) + metric_problems
    files = dataset_files(folder) if (folder / "README.md").is_file() else []

    print(f"dataset {folder} -> datasets/{args.repo_id}")
    total = 0
    for f in files:
        size = (folder / f).stat().st_size if (folder / f).is_file() else 0
        total += size
        print(f"  {f}  {_size(size)}")
    print(f"  {len(files)} files, {_size(total)}")
    space_id = metric_space_id(args)
    if args.metric:
        print(f"metric {metric_folder} -> spaces/{space_id} (gradio Space; evaluate.load({space_id!r}))")
        for path_in_repo, content in metric_operations(metric_folder, space_id) if not metric_problems else []:
            print(f"  {path_in_repo}  {_size(len(content))}")
        if not metric_problems:
            print(f"  the Space installs: {', '.join(metric_requirements(metric_folder))} (all on PyPI; the module imports nothing else)")
    for p in problems:
        print(f"problem: {p}")
    if problems:
        print(f"error: {len(problems)} problem(s) with what would be uploaded; nothing uploaded")
        return 1
    print("cards: ok")
    if args.dry_run:
        print("dry run: nothing uploaded")
        return 0

    try:
        from huggingface_hub import CommitOperationAdd, HfApi  # lazy: huggingface_hub is slow to import; only the Hub calls need it

        api = HfApi(token=args.token)
        api.create_repo(args.repo_id, repo_type="dataset", private=args.private or None, exist_ok=True)
        info = api.upload_folder(
            repo_id=args.repo_id, repo_type="dataset", folder_path=str(folder), allow_patterns=files,
            commit_message=args.commit_message,
        )
        print(f"uploaded dataset: {getattr(info, 'commit_url', info)}")
        if args.metric:
            api.create_repo(space_id, repo_type="space", space_sdk="gradio", private=args.private or None, exist_ok=True)
            ops = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=c) for p, c in metric_operations(metric_folder, space_id)]
            info = api.create_commit(space_id, ops, repo_type="space", commit_message=args.commit_message)
            print(f"uploaded metric: {getattr(info, 'commit_url', info)}")
    except Exception as e:  # any Hub/network failure becomes one clear line (the contract of this command)
        print(explain(e))
        return 2
    return 0
