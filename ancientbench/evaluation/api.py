"""``evaluate_model``: the Python entry point of an evaluation (as lm-eval's ``simple_evaluate`` sits beside its
``evaluate``). It checks every option and the output folder before a model is loaded, opens the backend (or wraps
a loaded model), and runs each setting through :func:`ancientbench.evaluation.runner.run_setting`."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Sequence

from ..backends.base import DEFAULT_BACKEND, Backend, BackendConfig, load_backend
from .lock import OutputLock
from .runner import EvaluationError, run_setting
from .settings import DEFAULT_MAX_NEW_TOKENS, Settings, SettingsError


def check_writable(output_dir: str | Path) -> None:
    """Create ``output_dir`` and write a file in it, or raise an error naming it (before a model is loaded)."""
    import os

    out = Path(output_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".ancientbench-write-test.{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise EvaluationError(f"--output {out}: cannot write there ({err.strerror or err})") from None


def shipped_model_path(name: str, paths: dict) -> Path:
    """The folder of a model that ships in the package; an error naming its training command when absent."""
    path = Path(paths[name])
    if not (path / "config.json").is_file():
        raise EvaluationError(f"{path}: the {name} model is not in this installation; train it with "
                              "`ancientbench train-inject` (docs/reference-results.md)")
    return path


def evaluate_model(
    model,
    tokenizer=None,
    tasks: Sequence[str] | None = None,
    shots: Sequence[int] | int = (0, 5),
    batch_size: int = 8,
    device: str | None = None,
    dtype: str | None = None,
    limit: int | None = None,
    data=None,
    output_dir: str | Path | None = None,
    letter_style: str = "bare",
    chat: bool = False,
    *,
    prefix_cache: bool | str = "auto",
    revision: str | None = None,
    trust_remote_code: bool = False,
    device_map: str | None = None,
    max_length: int | None = None,
    fewshot_data: str | Path | None = None,
    overwrite: bool = False,
    progress: bool = True,
    circular: bool = False,
    backend: str | Backend = DEFAULT_BACKEND,
    mode: str = "letter",
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    log_samples: bool = False,
    backend_config: BackendConfig | None = None,
    repair: bool = False,
) -> dict[int, dict]:
    """Evaluate a model on AncientBench; returns ``{shots: results}`` (the dicts written as ``results_<k>shot.json``).

    ``model`` is a Hub id, a local folder, ``"tiny-random"`` (the built-in chance-level smoke model), a served
    model's name (``backend="openai"``), or an already loaded ``AutoModelForCausalLM`` (then pass its
    ``tokenizer``; ``device``/``dtype`` are applied only if given, ``"auto"`` choosing as for a model loaded
    by name). ``backend``: a registered name (:mod:`ancientbench.backends`) or a loaded :class:`Backend`;
    ``mode``: ``letter``, ``ppl`` or ``generate``. ``tasks``: task or competency names (default all with
    data). ``data``: dataset folder or JSONL question file (default: the bundled dataset), a ``datasets.DatasetDict``
    (``test``, optionally ``dev``), a ``datasets.Dataset`` (test rows) or a Hub id (``load_dataset(id, "all")``). Without
    ``output_dir`` nothing is written and each results dict carries its records under ``"predictions"``.
    ``circular``: score every test item under the four cyclic rotations of its options and add plain and
    circular accuracy (:mod:`ancientbench.evaluation.circular`). ``backend_config`` overrides the options above for
    backends opened by name (servers: ``base_url`` etc.). ``repair``: a predictions file with corrupt lines
    keeps its valid records (the rest are scored again) instead of being refused.
    Every option is checked, and ``output_dir`` tried for writing, before a model is loaded.
    """
    from dataclasses import replace

    from ..dataset import data_source, load_questions
    from ..paths import INJECT_NAMES, INJECT_PATHS, MINI_NAME, mini_path
    from ..tiny import TINY_RANDOM_NAME
    from . import distributed

    if backend == DEFAULT_BACKEND and str(model) == TINY_RANDOM_NAME:  # the smoke model is a backend of its own
        backend = TINY_RANDOM_NAME
    if not progress:  # --no-progress covers transformers' own bars too (weight loading)
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    shipped_name = str(model) if backend == DEFAULT_BACKEND and str(model) in (MINI_NAME, *INJECT_NAMES.values()) else None
    shipped = shipped_name is not None
    if shipped_name == MINI_NAME:  # the mini-LMs ship inside the package: their folders, recorded under their names
        model = str(mini_path())
    elif shipped:
        model = str(shipped_model_path(shipped_name, {n: INJECT_PATHS[k] for k, n in INJECT_NAMES.items()}))
    if revision is not None and isinstance(model, (str, Path)) and (
            backend == TINY_RANDOM_NAME or shipped or Path(model).is_dir()):  # a revision would be recorded, never used
        raise EvaluationError(f"--revision {revision}: {'the built-in ' + str(model) if backend == TINY_RANDOM_NAME else 'a local model folder'} "
                              "has no revisions; drop --revision (revisions name Hub commits, branches or tags)")
    shots_list = [shots] if isinstance(shots, int) else list(shots)
    if not shots_list:
        raise EvaluationError("shots: give at least one number of shots")
    if max_length is not None and max_length < 1:
        raise SettingsError(f"--max-length must be >= 1, got {max_length}")
    settings = [Settings(backend=backend if isinstance(backend, str) else backend.name, mode=mode, shots=k,
                         letter_style=letter_style, chat=chat, max_new_tokens=max_new_tokens, circular=circular)
                for k in shots_list]
    with data_source(data) as (path, label, fewshot), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # HF objects and Hub ids are read from a temporary folder: warn with their label
        questions = load_questions(tasks, path, shots=shots_list, fewshot_data=fewshot_data or fewshot, limit=limit)
    for w in caught:
        warnings.warn_explicit(str(w.message).replace(str(path), label or str(path)), w.category, w.filename, w.lineno)
    if label is not None:
        questions = replace(questions, data_path=label)
    if circular:
        from .circular import expand_questions

        questions = expand_questions(questions)
    if output_dir is not None:
        check_writable(output_dir)
        if isinstance(model, (str, Path)) and isinstance(backend, str):  # a run holding the folder: refuse now
            from ..models import model_slug

            slug = model_slug(TINY_RANDOM_NAME if backend == TINY_RANDOM_NAME else str(model))
            for s in settings:
                OutputLock(Path(output_dir) / s.output_name(slug)).check()
    owned = False
    if isinstance(backend, Backend):
        be, procs = backend, distributed.init()
    elif isinstance(model, (str, Path)):
        # launched with several processes (torchrun / accelerate launch): data parallel, one shard each, on the
        # process's own device
        procs = distributed.init(device, device_map)
        config = backend_config or BackendConfig(model=str(model))
        config = replace(
            config, model=str(model), revision=revision, device=distributed.process_device(procs, device),
            dtype=dtype, device_map=device_map, trust_remote_code=trust_remote_code, batch_size=batch_size,
            prefix_cache=prefix_cache, max_length=max_length,
        )
        be, owned = load_backend(backend, config), True
        if shipped:
            be._info = {**be.info(), "name_or_path": shipped_name}
        if tokenizer is not None:
            if not hasattr(be, "use_tokenizer"):
                raise EvaluationError(f"backend {backend!r} cannot score with a tokenizer passed in")
            be.use_tokenizer(tokenizer)
    else:
        if backend != DEFAULT_BACKEND:
            raise EvaluationError(f"a loaded model object is scored in this process (backend {DEFAULT_BACKEND!r}), "
                                  f"not {backend!r}")
        if tokenizer is None:
            raise EvaluationError("pass the tokenizer together with a loaded model")
        from ..backends.hf import HFBackend

        procs = distributed.init(device or str(next(model.parameters()).device), device_map)
        be = HFBackend.from_model(
            model, tokenizer, device=distributed.process_device(procs, device) if device is not None else None,
            dtype=dtype, revision=revision, batch_size=batch_size, prefix_cache=prefix_cache, max_length=max_length,
            hash_weights=output_dir is not None,
        )
    if be.info().get("smoke_model") and progress and procs.is_main_process:
        print("note: tiny-random is a random-weight smoke model; its scores are chance level (~25%).", file=sys.stderr)
    out = {}
    try:
        for s in settings:
            out[s.shots] = run_setting(be, questions, s, output_dir=output_dir, progress=progress,
                                       overwrite=overwrite, log_samples=log_samples, processes=procs, repair=repair)
    finally:
        if owned:
            be.close()
    return out
