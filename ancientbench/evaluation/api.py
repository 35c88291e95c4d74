"""``evaluate_model``: the Python entry point of an evaluation (as lm-eval's ``simple_evaluate`` sits beside its
``evaluate``). It checks every option and the output folder before a model is loaded, opens the backend (or wraps
a loaded model), and runs each setting through :func:`ancientbench.evaluation.runner.run_setting`."""

from __future__ import annotations

import inspect
import logging
import os
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from ..backends.base import DEFAULT_BACKEND, Backend, BackendConfig, backend_config, backend_for, get_backend, load_backend
from ..dataset import data_source, load_questions
from ..models import SHIPPED_MODELS
from . import distributed
from .circular import expand_questions
from .lock import OutputLock
from .runner import EvaluationError, run_setting
from .settings import DEFAULT_MAX_NEW_TOKENS, Settings

log = logging.getLogger(__name__)

# evaluate_model's keywords that are backend options (fields of the backends' config classes)
BACKEND_KEYWORDS = ("revision", "device", "dtype", "device_map", "trust_remote_code", "batch_size", "prefix_cache",
                    "max_length")


def check_writable(output_dir: str | Path) -> None:
    """Create ``output_dir`` and write a file in it, or raise an error naming it (before a model is loaded)."""
    out = Path(output_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".ancientbench-write-test.{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise EvaluationError(f"--output {out}: cannot write there ({err.strerror or err})") from None


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
    circular accuracy (:mod:`ancientbench.evaluation.circular`). ``backend_config``: the backend's options as one object (an
    instance of its ``config_class``, e.g. ``OpenAIConfig(model=..., base_url=...)``; the command line and suites pass
    one) instead of the keywords above, which a backend that does not take them refuses. ``repair``: a predictions file with corrupt lines
    keeps its valid records (the rest are scored again) instead of being refused.
    Every option is checked, and ``output_dir`` tried for writing, before a model is loaded.
    """
    given = _backend_keywords(locals())
    if not progress:  # --no-progress covers transformers' own bars too (weight loading)
        from transformers.utils import logging as hf_logging  # lazy: transformers costs seconds to import

        hf_logging.disable_progress_bar()
    name = backend.name if isinstance(backend, Backend) else backend_for(backend, model)
    config = None
    if isinstance(model, (str, Path)) and not isinstance(backend, Backend):
        config = _backend_config(name, str(model), given, backend_config)
        _check_revision(name, config)
    shots_list = [shots] if isinstance(shots, int) else list(shots)
    if not shots_list:
        raise EvaluationError("shots: give at least one number of shots")
    settings = [Settings(backend=name, mode=mode, shots=k, letter_style=letter_style, chat=chat,
                         max_new_tokens=max_new_tokens, circular=circular) for k in shots_list]
    questions = _questions(data, tasks, shots_list, fewshot_data, limit, circular)
    if output_dir is not None:
        _check_output(output_dir, settings, name, config)
    be, procs, owned = _open(model, tokenizer, backend, name, config, given, hash_weights=output_dir is not None)
    if be.info().get("smoke_model") and progress and procs.is_main_process:
        log.warning("%s is a random-weight smoke model; its scores are chance level (~25%%).", be.info()["name_or_path"])
    try:
        return {s.shots: run_setting(be, questions, s, output_dir=output_dir, progress=progress, overwrite=overwrite,
                                     log_samples=log_samples, processes=procs, repair=repair) for s in settings}
    finally:
        if owned:
            be.close()


def _check_output(output_dir, settings: list[Settings], name: str, config: BackendConfig | None) -> None:
    """The output folder is writable and, for a model opened by name, no other run holds its setting's folder."""
    check_writable(output_dir)
    if config is not None:
        recorded = get_backend(name).results_name(config.model)
        for s in settings:
            OutputLock(s.folder(output_dir, recorded)).check()


def _backend_keywords(values: dict) -> dict:
    """The backend options among evaluate_model's keywords that differ from their defaults."""
    defaults = inspect.signature(evaluate_model).parameters
    return {k: values[k] for k in BACKEND_KEYWORDS if values[k] != defaults[k].default}


def _backend_config(name: str, model: str, given: dict, config: BackendConfig | None) -> BackendConfig:
    """The backend's config: the one passed in (from the command line or a suite), or one made from the keywords.
    Options given both ways would leave one of them unused: an error."""
    if config is None:
        return backend_config(name, model, given)
    if given:
        raise EvaluationError(f"{', '.join(given)}: give backend options in backend_config or as keywords, not both")
    if config.model != model:
        raise EvaluationError(f"backend_config is for model {config.model!r}, not {model!r}")
    return config


def _check_revision(name: str, config: BackendConfig) -> None:
    """A revision of a model without revisions would be recorded, never used."""
    revision = getattr(config, "revision", None)
    if revision is None:
        return
    builtin = config.model in get_backend(name).model_names or config.model in SHIPPED_MODELS
    if builtin or Path(config.model).is_dir():
        what = f"the built-in {config.model}" if builtin else "a local model folder"
        raise EvaluationError(f"--revision {revision}: {what} has no revisions; drop --revision (revisions name "
                              "Hub commits, branches or tags)")


def _questions(data, tasks, shots: list[int], fewshot_data, limit, circular: bool):
    """The questions to score; warnings about a Hugging Face object or Hub id name it, not its temporary folder."""
    with data_source(data) as (path, label, fewshot), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        questions = load_questions(tasks, path, shots=shots, fewshot_data=fewshot_data or fewshot, limit=limit)
    for w in caught:
        warnings.warn_explicit(str(w.message).replace(str(path), label or str(path)), w.category, w.filename, w.lineno)
    if label is not None:
        questions = replace(questions, data_path=label)
    return expand_questions(questions) if circular else questions


def _open(model, tokenizer, backend, name: str, config: BackendConfig | None, given: dict, *, hash_weights: bool):
    """``(backend, processes, owned)``: the backend passed in, one loaded by name, or a loaded model object wrapped.
    Launched with several processes (torchrun / accelerate launch), each process loads onto its own device."""
    if isinstance(backend, Backend):
        return backend, distributed.init(), False
    if config is not None:
        procs = distributed.init(getattr(config, "device", None), getattr(config, "device_map", None))
        device = distributed.process_device(procs, getattr(config, "device", None))
        if device != getattr(config, "device", None):  # this process's own accelerator
            config = config.model_copy(update={"device": device})
        be = load_backend(name, config)
        if tokenizer is not None:
            if not hasattr(be, "use_tokenizer"):
                be.close()
                raise EvaluationError(f"backend {name!r} cannot score with a tokenizer passed in")
            be.use_tokenizer(tokenizer)
        return be, procs, True
    cls = get_backend(name)
    if not hasattr(cls, "from_model"):
        raise EvaluationError(f"a loaded model object is scored in this process (backend {DEFAULT_BACKEND!r}), "
                              f"not {name!r}")
    if tokenizer is None:
        raise EvaluationError("pass the tokenizer together with a loaded model")
    device = given.get("device")
    procs = distributed.init(device or str(next(model.parameters()).device), given.get("device_map"))
    be = cls.from_model(model, tokenizer, device=distributed.process_device(procs, device) if device is not None else None,
                        dtype=given.get("dtype"), revision=given.get("revision"), batch_size=given.get("batch_size", 8),
                        prefix_cache=given.get("prefix_cache", "auto"), max_length=given.get("max_length"),
                        hash_weights=hash_weights)
    return be, procs, False
