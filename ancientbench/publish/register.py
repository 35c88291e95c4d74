"""``ancientbench register``: make the bare Hugging Face names resolve on this machine, offline, from any folder.

``evaluate.load("ancientbench_metric")`` asks for the canonical module ``evaluate-metric/ancientbench_metric``:
it looks for the script's URL in evaluate's downloads cache and, when the Hub cannot give it (offline, no
network, or no such Space), uses the copy found there — exactly what a first download would have left.
:func:`register_metric` puts the installed metric module there (and into the dynamic-modules cache, evaluate's
last fallback), so the bare name loads from any folder with no network and no warning. ``load_dataset("ancientbench", cfg)``
likewise falls back to the datasets cache; :func:`register_dataset` fills it for every config
(:func:`ancientbench.dataset.cache_dataset`). ``scripts/install.sh`` runs both, so the README's install is the
one documented step.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

METRIC_NAME = "ancientbench_metric"
CACHED_NAME = f"evaluate-metric--{METRIC_NAME}"  # evaluate's cache name for a canonical (bare-name) metric


def register_metric(metric_path: str | Path | None = None, modules_cache: str | Path | None = None) -> Path:
    """Copy the metric module (and its card) into evaluate's modules cache; returns the copied ``.py`` path.

    Idempotent: the folder is named by the module's sha256, so an unchanged module is not copied twice and
    an edited one becomes the newest version evaluate picks.
    """
    from evaluate import config as ev_config
    from evaluate.loading import init_dynamic_modules
    from evaluate.utils.file_utils import hash_url_to_filename, hf_hub_url

    import ancientbench

    src = Path(metric_path or ancientbench.METRIC_PATH) / f"{METRIC_NAME}.py"
    # 1. the downloads cache, under the name of the canonical script's URL (evaluate finds it without a request)
    from evaluate import SCRIPTS_VERSION

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


def register_dataset(cache_dir: str | Path | None = None) -> list[str]:
    """Load every config once through ``load_dataset`` so the name ``ancientbench`` is found in the cache."""
    from datasets import load_dataset

    from .. import DATASET_PATH
    from ..dataset import cache_dataset
    from .card import ALL_CONFIG, card_configs

    done = sorted(cache_dataset(cache_dir=cache_dir))
    if ALL_CONFIG in card_configs(DATASET_PATH):  # every task in one config, as MMLU's "all"
        load_dataset(DATASET_PATH, ALL_CONFIG, cache_dir=str(cache_dir) if cache_dir is not None else None)
        done.append(ALL_CONFIG)
    return done


def add_arguments(parser) -> None:
    parser.add_argument("--skip-dataset", action="store_true", help="register only the metric")


def run(args) -> int:
    path = register_metric()
    print(f"evaluate.load('{METRIC_NAME}') -> {path}")
    if not args.skip_dataset:
        configs = register_dataset()
        print(f"load_dataset('ancientbench', CONFIG) -> cached configs: {', '.join(configs)}")
    return 0
