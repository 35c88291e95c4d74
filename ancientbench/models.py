"""Loading the model under test: device and dtype selection, model + tokenizer loading, weights hashing.

- Device (``select_device``): ``cuda`` -> ``npu`` (when ``torch_npu`` imports and sees a device) -> ``mps``
  -> ``cpu``; any explicit choice (``cpu``, ``cuda:1``, ``npu:0``, ...) overrides.
- Dtype (``select_dtype``): ``auto`` is bfloat16 on cuda/npu (float16 on a CUDA device without bf16),
  float16 on mps, float32 on cpu; ``float32``/``bfloat16``/``float16`` override.
- ``load_model(name_or_path, ...)`` loads a Hub id or a local folder (``revision``, ``trust_remote_code``,
  ``device_map="auto"`` to spread a model larger than one device over all visible devices); the backends
  (:mod:`ancientbench.backends.hf`, ``.tiny`` for the ``tiny-random`` smoke model) call it. The tokenizer is set to left padding
  with an explicit pad token (the eos token when it has none).
- ``model_info`` describes the model for results files: name, revision (the Hub commit when known),
  ``weights_sha256`` (of a local folder's weight files, cached by file size and mtime; or, for a model object
  handed to ``evaluate_model``, of its tensors in memory: ``tensors_sha256``) with ``weights_sha256_of``
  saying which (``files``/``tensors``/null), parameter count, dtype, device and ``smoke_model`` (true only
  for ``tiny-random``, a chance-level model).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import AncientBenchError
from .fileio import atomic_write
from .paths import INJECT_PATHS, MINI_NAME, cache_root, mini_path


class ModelError(AncientBenchError, ValueError):
    """A device, dtype or model option that cannot be honoured."""


class ModelNotFoundError(AncientBenchError, FileNotFoundError):
    """The model (folder or Hub id) cannot be found or loaded."""

DTYPE_NAMES = {
    "float32": "float32", "fp32": "float32", "float": "float32",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float16": "float16", "fp16": "float16", "half": "float16",
}
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".h5", ".msgpack")


def npu_available() -> bool:
    """True when the Ascend ``torch_npu`` plugin imports and sees a device."""
    try:
        import torch  # lazy: torch costs seconds to import; only a model run needs it
        import torch_npu  # noqa: F401  # lazy: the optional Ascend plugin; importing it registers torch.npu
    except Exception:  # not installed, or installed without the CANN runtime
        return False
    return bool(getattr(torch, "npu", None) and torch.npu.is_available())


def select_device(device: str | None = None) -> str:
    """``device`` if given (and not ``auto``), else the first available of cuda, npu, mps, cpu."""
    import torch  # lazy: torch costs seconds to import; only a model run needs it

    if device and device != "auto":
        try:
            torch.device(device)
        except (RuntimeError, TypeError) as err:  # before any weight loads: "tpu", "cuda:x"
            raise ModelError(f"unknown --device {device!r}; use auto, cpu, cuda, cuda:N, npu, mps") from err
        kind = device.split(":")[0]
        if kind == "cuda" and not torch.cuda.is_available():
            raise ModelError(f"device {device!r} requested but torch sees no CUDA device")
        if kind == "npu" and not npu_available():
            raise ModelError(f"device {device!r} requested but torch_npu is not installed or sees no NPU")
        if kind == "mps" and not torch.backends.mps.is_available():
            raise ModelError(f"device {device!r} requested but MPS is not available")
        return device
    if torch.cuda.is_available():
        return "cuda"
    if npu_available():
        return "npu"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def select_dtype(dtype=None, device: str = "cpu"):
    """A ``torch.dtype`` from a name (or ``auto``/``None``) for the device."""
    import torch  # lazy: torch costs seconds to import; only a model run needs it

    if dtype is not None and not isinstance(dtype, str):
        return dtype
    if dtype is None or dtype == "auto":
        kind = device.split(":")[0]
        if kind == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        if kind == "npu":
            return torch.bfloat16
        if kind == "mps":
            return torch.float16
        return torch.float32
    try:
        return getattr(torch, DTYPE_NAMES[dtype])
    except KeyError:
        raise ModelError(f"unknown dtype {dtype!r}; use auto, {', '.join(sorted(DTYPE_NAMES))}") from None


def dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def load_tokenizer(name_or_path: str | Path, *, revision: str | None = None, trust_remote_code: bool = False):
    """The tokenizer with left padding and an explicit pad token (eos when it has none)."""
    from transformers import AutoTokenizer  # lazy: transformers costs seconds to import; only a model run needs it

    tok = AutoTokenizer.from_pretrained(
        str(name_or_path), revision=revision, trust_remote_code=trust_remote_code, padding_side="left"
    )
    prepare_tokenizer(tok)
    return tok


def prepare_tokenizer(tokenizer):
    """Set left padding and a pad token in place (scoring reads the last position of each row)."""
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is not None:
            tokenizer.pad_token = tokenizer.eos_token
        elif getattr(tokenizer, "unk_token", None) is not None:
            tokenizer.pad_token = tokenizer.unk_token
        else:
            raise ModelError(f"tokenizer {getattr(tokenizer, 'name_or_path', '')!r} has no pad, eos or unk token")
    return tokenizer


def _hash_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def weights_sha256(folder: str | Path, *, use_cache: bool = True) -> str | None:
    """sha256 over the weight files of a local model folder (``relpath<TAB>sha256`` lines, sorted), else None.

    Per-file hashes are cached in ``<cache>/weights-sha256.json`` keyed by absolute path, size and mtime, so
    re-evaluating a large local model does not re-read its weights.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return None
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES))
    if not files:
        return None
    cache_file = cache_root() / "weights-sha256.json"
    cache: dict = {}
    if use_cache and cache_file.is_file():
        try:
            cache = json.loads(cache_file.read_text())
        except (OSError, json.JSONDecodeError):  # a corrupt cache is only a lost speed-up
            cache = {}
    lines = []
    changed = False
    for p in files:
        st = p.stat()
        key = f"{p.resolve()}|{st.st_size}|{st.st_mtime_ns}"
        digest = cache.get(key)
        if digest is None:
            digest = _hash_file(p)
            cache[key] = digest
            changed = True
        lines.append(f"{p.relative_to(folder).as_posix()}\t{digest}\n")
    if use_cache and changed:
        try:
            atomic_write(cache_file, json.dumps(cache, indent=0))
        except OSError:  # read-only home: hashing still worked, only the cache is not kept
            pass
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def tensors_sha256(model) -> str:
    """sha256 over a model's ``state_dict`` as it is in memory: for each tensor, sorted by name, a line
    ``name<TAB>dtype<TAB>shape`` and then its raw bytes.

    This reads every weight once (copied to the CPU tensor by tensor): for a 7B model in bfloat16 that is ~14 GB
    through sha256, some seconds - paid once per :func:`ancientbench.evaluate_model` call that writes resumable
    files, because a model object may have been changed in memory since it was loaded (fine-tuned, perturbed,
    merged) and its folder on disk then says nothing about it. Tensors on the ``meta`` device (offloaded by
    accelerate) have no bytes here and are hashed by name, dtype and shape only.
    """
    import torch  # lazy: torch costs seconds to import; only a model run needs it

    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        t = t.detach()
        h.update(f"{name}\t{dtype_name(t.dtype)}\t{tuple(t.shape)}\n".encode())
        if t.device.type == "meta":
            continue
        if t.is_quantized:  # torch's quantized dtypes have no byte view; their integer representation does
            t = t.int_repr()
        data = t.contiguous().reshape(-1).view(torch.uint8).cpu()
        h.update(data.numpy())
    return h.hexdigest()


def model_slug(name_or_path: str) -> str:
    """A folder name for a model's results: Hub ``org/name`` -> ``org__name``, a local path -> its last part."""
    s = str(name_or_path).rstrip("/\\")
    if os.path.isdir(s) or s.startswith((".", "/", "~")):
        s = Path(s).name or "model"
    else:
        s = s.replace("/", "__")
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s) or "model"


def _is_tokenizer_file(name: str) -> bool:
    """Any file a tokenizer is read from: tokenizer.json/.model/_config.json, vocab.*, merges.txt, *.tiktoken,
    SentencePiece ``*.model`` and the custom tokenizers of remote-code models (``tokenization_*.py``)."""
    n = name.lower()
    return (n.startswith(("tokenizer", "vocab", "merges", "spiece", "tokenization_", "sentencepiece"))
            or n.endswith((".tiktoken", ".model")))


def check_model_folder(folder: Path, name: str) -> None:
    """Tell an empty folder, or one without tokenizer files, by name (transformers says "install sentencepiece"
    or fails later on the letters), before anything is loaded from it."""
    files = [f.name for f in folder.iterdir()]
    if not files:
        raise ModelNotFoundError(f"model folder {name} is empty (no config.json, weights or tokenizer files)")
    if "config.json" in files and not any(_is_tokenizer_file(f) for f in files):
        raise ModelNotFoundError(
            f"model folder {name} has no tokenizer files (tokenizer.json, tokenizer.model, vocab.json, "
            f"tokenizer_config.json ...); copy them from the model the weights came from")


def local_model_path(name: str) -> str:
    """``name`` with ``~`` expanded when it names a local folder; an error when it looks like a path but is none.

    A name looks like a path when it starts with ``/``, ``./``, ``../`` or ``~``, contains a backslash or more
    than one ``/`` (a Hub id is ``name`` or ``org/name``), or exists as a file. Such a name that is not a folder
    gets a clear :class:`FileNotFoundError` instead of transformers' "Repo id must be in the form ..." (which is
    what it says after treating the missing path as a Hub id).
    """
    expanded = os.path.expanduser(name)
    p = Path(expanded)
    if p.is_dir():
        check_model_folder(p, name)
        return expanded
    if p.exists():
        raise ModelNotFoundError(f"model not found: {name} is a file, not a model folder (give the folder holding "
                                f"config.json and the weights)")
    looks_like_path = (name.startswith(("/", "./", "../", "~", ".\\", "..\\")) or name in (".", "..")
                       or "\\" in name or name.count("/") > 1 or bool(re.match(r"^[A-Za-z]:[\\/]", name)))
    if looks_like_path:
        raise ModelNotFoundError(f"model not found: {name} is not a local folder (and not a Hub id)")
    return name


def causal_lm_from_pretrained(path: str, **kwargs):
    """``AutoModelForCausalLM.from_pretrained(path, **kwargs)``, passing ``dtype`` as ``torch_dtype`` to
    transformers < 4.56, which knows it by that name."""
    from transformers import AutoModelForCausalLM  # lazy: transformers costs seconds to import; only a model run needs it

    try:
        return AutoModelForCausalLM.from_pretrained(path, **kwargs)
    except TypeError as err:
        if "dtype" not in str(err) or "dtype" not in kwargs:
            raise
        kwargs["torch_dtype"] = kwargs.pop("dtype")
        return AutoModelForCausalLM.from_pretrained(path, **kwargs)


@dataclass
class LoadedModel:
    model: object
    tokenizer: object
    info: dict
    local_path: str = ""  # where it was read from: a folder, or the Hub id


SHIPPED_MODELS = {MINI_NAME: None, **{path.name: path for path in INJECT_PATHS.values()}}
"""Models that ship inside the package, by name (the mini-LM's folder is checked by :func:`~.paths.mini_path`)."""


def shipped_model_folder(name: str) -> Path | None:
    """The folder of a model shipped in the package under ``name`` (None for any other name); an error naming its
    training command when it is not in this installation."""
    if name not in SHIPPED_MODELS:
        return None
    if name == MINI_NAME:
        return mini_path()
    path = SHIPPED_MODELS[name]
    if not (path / "config.json").is_file():
        raise ModelNotFoundError(f"{path}: the {name} model is not in this installation; train it with "
                                 "`ancientbench train-inject` (docs/reference-results.md)")
    return path


def model_info(model, name_or_path: str, *, revision: str | None = None, device: str | None = None,
               local_path: str | Path | None = None, smoke_model: bool = False,
               weights: str | None = "files") -> dict:
    """The ``model`` block of a results file. ``weights``: what ``weights_sha256`` hashes - ``"files"`` (the
    local folder's weight files, None for a Hub id), ``"tensors"`` (the model in memory, :func:`tensors_sha256`)
    or None (not hashed)."""
    config = getattr(model, "config", None)
    commit = getattr(config, "_commit_hash", None)
    dev = device
    if getattr(model, "hf_device_map", None):
        devices = sorted({str(v) for v in model.hf_device_map.values()})
        dev = "device_map=auto: " + ",".join(devices)
    elif dev is None:
        dev = str(next(model.parameters()).device)
    path = Path(local_path) if local_path is not None else Path(str(name_or_path))
    if weights == "tensors":
        digest = tensors_sha256(model)
    elif weights == "files":
        digest = weights_sha256(path) if path.is_dir() else None
    elif weights is None:
        digest = None
    else:
        raise ValueError(f"weights must be 'files', 'tensors' or None, got {weights!r}")
    return {
        "name_or_path": str(name_or_path),
        "revision": revision or commit,
        "weights_sha256": digest,
        "weights_sha256_of": weights if digest is not None else None,
        "num_parameters": int(sum(p.numel() for p in model.parameters())),
        "dtype": dtype_name(next(model.parameters()).dtype),
        "device": dev,
        "smoke_model": bool(smoke_model),
        "architecture": type(model).__name__,
    }


def load_model(
    name_or_path: str | Path,
    *,
    device: str | None = None,
    dtype=None,
    revision: str | None = None,
    trust_remote_code: bool = False,
    device_map: str | None = None,
    record_as: str | None = None,
    smoke_model: bool = False,
) -> LoadedModel:
    """Load a causal LM and its tokenizer (Hub id, local folder or the name of a model shipped in the package), in
    eval mode, recorded as ``record_as`` (default: the name given). (The ``tiny-random`` smoke model is a backend of
    its own, :mod:`ancientbench.backends.tiny`.)"""
    name = str(name_or_path)
    shipped = shipped_model_folder(name)
    path = str(shipped) if shipped is not None else local_model_path(name)
    if device_map not in (None, "auto"):
        raise ModelError(f"device_map must be 'auto' or None, got {device_map!r}")
    dev = select_device(device if device_map is None else (device or "auto"))
    torch_dtype = select_dtype(dtype, dev)
    kwargs = {"revision": revision, "trust_remote_code": trust_remote_code, "dtype": torch_dtype}
    if device_map == "auto":
        kwargs["device_map"] = "auto"
    what, hint = f"the tokenizer files in {name} could not be read", ""
    try:
        tokenizer = load_tokenizer(path, revision=revision, trust_remote_code=trust_remote_code)
        what, hint = f"the weights or config in {name} could not be loaded", "; is a file truncated or from another model?"
        model = causal_lm_from_pretrained(path, **kwargs)
    except OSError as err:  # transformers: not on the Hub, offline without a cached copy, files missing
        raise ModelNotFoundError(f"model {name!r} could not be loaded: {err}") from err
    except Exception as err:  # a local folder's file that does not parse (a user file: one line), else a bug
        if not Path(path).is_dir():
            raise
        raise ModelError(f"{what} ({type(err).__name__}: {err}){hint}") from err
    if device_map is None:
        model = model.to(dev)
    model.eval()
    info = model_info(model, record_as or name, revision=revision, device=None if device_map else dev,
                      local_path=path, smoke_model=smoke_model)
    return LoadedModel(model, tokenizer, info, path)
