"""``ancientbench register``: make the bare Hugging Face names resolve on this machine, offline, from any folder.

``evaluate.load("ancientbench_metric")`` asks for the canonical module ``evaluate-metric/ancientbench_metric``:
it looks for the script's URL in evaluate's downloads cache and, when the Hub cannot give it (offline, no
network, or no such Space), uses the copy found there — exactly what a first download would have left.
:func:`register_metric` puts the installed metric module there (and into the dynamic-modules cache, evaluate's
last fallback), so the bare name loads from any folder with no network and no warning. ``load_dataset("ancientbench", cfg)``
likewise falls back to the datasets cache; :func:`register_dataset` fills it for every config
(:func:`ancientbench.dataset.cache_dataset`). datasets keys that cache on the card's YAML, which records each data
file's sha256, so changed data gets a new key: register refuses a card whose checksums are not the files' (the
cache would keep the old rows), rebuilds a cached copy whose rows are not the files', makes its copy the one the
bare name serves, and says so when the name served another folder's data before. ``scripts/install.sh`` runs
both, so the README's install is the one documented step.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import yaml

import ancientbench

from ..argtypes import add_no_progress
from ..dataset import cache_dataset, file_sha256
from ..errors import AncientBenchError
from ..fileio import atomic_write
from ..paths import DATASET_PATH
from ..tasks import TASK_NAMES
from .card import ALL_CONFIG, card_configs, card_path, yaml_header

METRIC_NAME = "ancientbench_metric"
CACHED_NAME = f"evaluate-metric--{METRIC_NAME}"  # evaluate's cache name for a canonical (bare-name) metric
REGISTERED = "registered.json"  # beside the cached configs: which folder and data the bare name serves


def register_metric(metric_path: str | Path | None = None, modules_cache: str | Path | None = None) -> Path:
    """Copy the metric module (and its card) into evaluate's modules cache; returns the copied ``.py`` path.

    Idempotent: the folder is named by the module's sha256, so an unchanged module is not copied twice and
    an edited one becomes the newest version evaluate picks.
    """
    from evaluate import config as ev_config  # lazy: evaluate imports datasets (seconds); only registering the metric needs it
    from evaluate.loading import init_dynamic_modules  # lazy: evaluate imports datasets (seconds); only registering the metric needs it
    from evaluate.utils.file_utils import hash_url_to_filename, hf_hub_url  # lazy: evaluate imports datasets (seconds); only registering the metric needs it


    src = Path(metric_path or ancientbench.METRIC_PATH) / f"{METRIC_NAME}.py"
    # 1. the downloads cache, under the name of the canonical script's URL (evaluate finds it without a request)
    from evaluate import SCRIPTS_VERSION  # lazy: evaluate imports datasets (seconds); only registering the metric needs it

    downloads = Path(ev_config.DOWNLOADED_EVALUATE_PATH)
    downloads.mkdir(parents=True, exist_ok=True)
    tag = os.getenv("HF_SCRIPTS_VERSION", SCRIPTS_VERSION)
    for revision in {f"v{tag}" if tag[:1].isdigit() else tag, "main"}:  # evaluate asks for its version tag, then main
        url = hf_hub_url(path=f"evaluate-metric/{METRIC_NAME}", name=f"{METRIC_NAME}.py", revision=revision)
        shutil.copyfile(src, downloads / hash_url_to_filename(url, etag=None))
    # 2. the dynamic-modules cache (evaluate's fallback when a Hub request fails)
    root = Path(modules_cache) if modules_cache is not None else Path(init_dynamic_modules())
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    target = root / "metrics" / CACHED_NAME / digest
    target.mkdir(parents=True, exist_ok=True)
    for init in (root / "metrics" / "__init__.py", root / "metrics" / CACHED_NAME / "__init__.py", target / "__init__.py"):
        init.touch(exist_ok=True)
    dst = target / src.name
    shutil.copyfile(src, dst)
    os.utime(dst)  # evaluate picks the most recently modified version
    card = src.with_name("README.md")
    if card.is_file():
        shutil.copyfile(card, target / "README.md")
    return dst


class StaleCard(AncientBenchError):
    """The dataset card records other data-file checksums than the files have (datasets would key its cache on the card)."""


def check_card(folder: str | Path) -> dict[str, str]:
    """``{data file: sha256}`` as the folder's card records them, once each file is checked to match.

    ``load_dataset`` keys its cache of the folder on the card's YAML alone, so a file changed without a new card
    would be served from the old cache: that is refused here, naming the file.
    """
    folder = Path(folder)
    path = card_path(folder)
    header = yaml_header(path.read_text(encoding="utf-8")) if path.is_file() else None
    if header is None:
        raise StaleCard(f"{path}: no dataset card with a YAML header; run: python -m ancientbench.publish.card --folder {folder}")
    recorded: dict[str, str] = {}
    for info in yaml.safe_load(header.strip().strip("-")).get("dataset_info") or []:
        recorded.update({f: c["checksum"] for f, c in (info.get("download_checksums") or {}).items()})
    actual = {f: file_sha256(folder / f) for f in recorded if (folder / f).is_file()}
    bad = sorted(f for f in recorded if actual.get(f) != recorded[f])
    if not recorded or bad:
        what = f"{bad[0]} differs from the sha256 it records" if bad else "it records no data-file checksums"
        raise StaleCard(f"{path}: {what} (load_dataset would serve the old data); run: python -m ancientbench.publish.card --folder {folder}")
    return recorded


def register_dataset(cache_dir: str | Path | None = None, folder: str | Path | None = None) -> list[str]:
    """Load every config (and ``all``) once, checked against the files, so the name ``ancientbench`` is found in the cache."""
    folder = Path(folder or DATASET_PATH)
    check_card(folder)
    configs = [c for c in TASK_NAMES if c in card_configs(folder)]
    configs += [ALL_CONFIG] if ALL_CONFIG in card_configs(folder) else []  # every task in one config, as MMLU's "all"
    cached = cache_dataset(folder, configs, cache_dir=cache_dir)
    for dsd in cached.values():  # the bare name takes each config's most recently modified copy: make it this one
        for split in dsd.values():
            os.utime(Path(split.cache_files[0]["filename"]).parent)
    for name in card_configs(folder, default=True):
        default_alias(Path(cached[name]["test"].cache_files[0]["filename"]).parent)
    return list(cached)


def default_alias(copy: Path) -> Path:
    """A copy of the default config's cached folder under a hash of its own, made the newest folder of the name.

    With no config name, datasets' cache fallback takes the newest cached folder and refuses when other configs
    share its hash ("multiple configurations in the cache"), which every config of one card does; this copy is
    alone under its hash, so ``load_dataset("ancientbench")`` gives the card's default config, as from the folder.
    """
    alias = copy.with_name(hashlib.sha256(f"{copy.name}/default".encode()).hexdigest()[:16])
    if not alias.is_dir():
        tmp = copy.with_name(f".{alias.name}.{os.getpid()}.tmp")  # whole or not at all: a half copy is never seen
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(copy, tmp)
        tmp.rename(alias)
    os.utime(alias)
    return alias


def bare_name_switch(folder: str | Path, cache_dir: str | Path | None = None) -> str | None:
    """Record which folder (and data) the bare name now serves; a line saying so when it served another before."""
    from datasets import config as ds_config  # lazy: datasets takes seconds to import; only registering needs it


    record = Path(cache_dir or ds_config.HF_DATASETS_CACHE) / "ancientbench" / REGISTERED
    now = {"folder": str(Path(folder).resolve()), "data_sha256": data_digest(check_card(folder))}
    try:
        before = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none yet, or unreadable: it is rewritten below
        before = None
    atomic_write(record, json.dumps(now, indent=1) + "\n")
    if isinstance(before, dict) and before != now:
        return (f"note: load_dataset('ancientbench', CONFIG) by bare name now serves {now['folder']} (data "
                f"{now['data_sha256'][:12]}); it served {before.get('folder')} (data {str(before.get('data_sha256'))[:12]}) before")
    return None


def data_digest(checksums: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(checksums, sort_keys=True).encode()).hexdigest()


def add_arguments(parser) -> None:
    parser.add_argument("--skip-dataset", action="store_true", help="register only the metric")
    parser.add_argument("--folder", default=None, help="dataset folder to register (default: the package's own)")
    add_no_progress(parser)  # datasets' "Generating split" bars


def run(args) -> int:
    path = register_metric()
    print(f"evaluate.load('{METRIC_NAME}') -> {path}")
    if not args.skip_dataset:
        folder = Path(args.folder or DATASET_PATH)
        configs = register_dataset(folder=folder)
        print(f"load_dataset('ancientbench', CONFIG) -> {folder}, cached configs: {', '.join(configs)}")
        note = bare_name_switch(folder)
        if note:
            print(note)
    return 0
