"""What a backend may be opened with: one typed config class per backend (pydantic, unknown keys an error), each
option declared once with its command-line flag and help (:class:`Flag`). The ``eval`` command's option groups,
the suite file's keys and the "not used by this backend" refusal are all derived from these declarations
(:func:`declared_options`, :func:`unused_options`), so a new backend option is written in one place.

Layout: :class:`BackendConfig` (every backend: ``model``, ``max_length``), :class:`WeightsConfig` (weights read in this
process: revision, dtype, remote code), :class:`InProcessConfig` (and placed and batched here: device, device map,
batch size, prefix cache), :class:`ServerConfig`
(an HTTP server: URL, key variable, concurrency, timeout, retries, a local tokenizer) and :class:`ExtraOptions`
(``--backend-option KEY=VALUE``: backend-specific extras the backend itself checks). A backend names its class in
``Backend.config_class``; the concrete classes live beside their backends.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal, Mapping, Optional, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..argtypes import positive_int
from ..errors import AncientBenchError


class OptionError(AncientBenchError, ValueError):
    """A backend option that does not exist for the chosen backend, or a value it cannot take."""


@dataclass(frozen=True)
class Flag:
    """How an option is written on the command line (``--base-url``) and in a suite file (the field's name, or
    ``suite_key``); ``argparse`` holds extra ``add_argument`` keywords."""

    flag: str
    help: str
    suite_key: str = ""
    argparse: Mapping[str, Any] | None = None
    suite_type: Any = None  # what a suite file may write, where it is not the field's own type

    def key(self, field: str) -> str:
        return self.suite_key or field


def _at_least(n: int) -> Callable[[int], int]:
    def check(value: int) -> int:
        if value < n:
            raise ValueError(f"must be >= {n}, got {value}")
        return value
    return check


def _positive_seconds(value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"must be a positive number of seconds, got {value}")
    return value


def batch_size_arg(value: str):
    """``--batch-size``: a positive integer or ``auto``."""
    return value if value == "auto" else positive_int(value, " or 'auto'")


def key_value(value: str) -> tuple[str, str]:
    """``--backend-option KEY=VALUE``."""
    key, sep, val = value.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {value!r}")
    return key, val


class BackendConfig(BaseModel):
    """Options every backend takes: ``model`` (Hub id, local folder, served model name) and ``max_length``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1)
    max_length: Annotated[Optional[int], AfterValidator(lambda v: v if v is None else _at_least(1)(v)),
                          Flag("--max-length", "context limit in tokens (default: the model's)",
                               argparse={"type": int})] = None


class WeightsConfig(BackendConfig):
    """Weights read in this process: which revision, in which dtype, with or without the model's own code."""

    revision: Annotated[Optional[str], Flag("--revision", "Hub revision (branch, tag or commit)")] = None
    dtype: Annotated[Optional[str], Flag(
        "--dtype", "auto (bf16 on cuda/npu, fp32 on cpu), float32, bfloat16, float16")] = "auto"
    trust_remote_code: Annotated[bool, Flag(
        "--trust-remote-code", "allow the model's own code (e.g. GLM, Baichuan)",
        argparse={"action": "store_true"})] = False


class InProcessConfig(WeightsConfig):
    """A model this process places and batches itself (transformers)."""

    device: Annotated[Optional[str], Flag(
        "--device", "auto (cuda > npu > mps > cpu), cpu, cuda, cuda:1, npu:0, mps")] = "auto"
    device_map: Annotated[Optional[Literal["auto"]], Flag(
        "--device-map", "spread a large model over all devices", argparse={"choices": ["auto"]})] = None
    batch_size: Annotated[Union[Annotated[int, AfterValidator(_at_least(1))], Literal["auto"]], Flag(
        "--batch-size", "prompts per forward pass (default 8), or 'auto': start at 128 on a GPU/NPU (16 on CPU) and "
        "halve on out-of-memory", argparse={"type": batch_size_arg})] = 8
    prefix_cache: Annotated[Union[bool, Literal["auto"]], Flag(
        "--no-prefix-cache", "score every prompt from scratch (no KV reuse)",
        argparse={"action": "store_const", "const": False})] = "auto"


class ServerConfig(BackendConfig):
    """A model behind an HTTP API."""

    base_url: Annotated[Optional[str], Flag(
        "--base-url", "the server's OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1")] = None
    api_key_env: Annotated[Optional[str], Flag(
        "--api-key-env", "name of the environment variable holding the API key (default OPENAI_API_KEY)")] = None
    concurrency: Annotated[int, AfterValidator(_at_least(1)), Flag(
        "--concurrency", "requests in flight at once (default 8)", argparse={"type": positive_int})] = 8
    timeout: Annotated[float, AfterValidator(_positive_seconds), Flag(
        "--timeout", "seconds per request (default 120)", argparse={"type": float})] = 120.0
    max_retries: Annotated[int, AfterValidator(_at_least(0)), Flag(
        "--max-retries", "retries with backoff on 429/5xx/timeouts (default 5)", argparse={"type": int})] = 5
    tokenizer: Annotated[Optional[str], Flag(
        "--tokenizer", "a local tokenizer (Hub id or folder) to count prompt tokens with")] = None


class ExtraOptions(BaseModel):
    """``--backend-option KEY=VALUE`` (suite key ``backend_options``): extras the backend checks itself."""

    options: Annotated[dict[str, str], Flag(
        "--backend-option", "backend-specific option (repeatable)", suite_key="backend_options",
        argparse={"type": key_value, "action": "append", "metavar": "KEY=VALUE"},
        suite_type=dict[str, Union[str, int, float, bool]])] = Field(default_factory=dict)

    @field_validator("options", mode="before")
    @classmethod
    def _pairs_to_strings(cls, value):
        if isinstance(value, (list, tuple)):  # the command line's [(key, value), ...]
            value = dict(value)
        if isinstance(value, Mapping):  # a suite's numbers and booleans, as the command line would spell them
            return {str(k): v if isinstance(v, str) else str(v) for k, v in value.items()}
        return value


# ------------------------------------------------------------------------------------------- derivation


@dataclass(frozen=True)
class Option:
    """One declared backend option: its config field, how it is written, its default."""

    field: str
    flag: Flag
    annotation: Any
    metadata: tuple
    default: Any

    @property
    def suite_key(self) -> str:
        return self.flag.key(self.field)

    @property
    def suite_type(self) -> Any:
        """The type a suite file's value must have (strictly): the field's, validators included, or None."""
        if self.flag.suite_type is not None:
            return Optional[self.flag.suite_type]
        return Optional[Annotated[(self.annotation, *self.metadata)]] if self.metadata else Optional[self.annotation]


def config_options(config_class: type[BackendConfig]) -> dict[str, Option]:
    """The options ``config_class`` declares (field name -> :class:`Option`), ``model`` excepted."""
    out = {}
    for name, info in config_class.model_fields.items():
        flag = next((m for m in info.metadata if isinstance(m, Flag)), None)
        if flag is None:
            continue
        meta = tuple(m for m in info.metadata if not isinstance(m, Flag))
        default = info.default_factory() if info.default_factory is not None else info.default
        out[name] = Option(name, flag, info.annotation, meta, default)
    return out


def declared_options(config_classes: Mapping[str, type[BackendConfig]]) -> dict[str, tuple[Option, tuple[str, ...]]]:
    """Every option of the given backends (name -> config class): field -> (option, the backends that take it).
    One field must be declared alike (flag and default) wherever it appears."""
    out: dict[str, tuple[Option, tuple[str, ...]]] = {}
    for backend, cls in config_classes.items():
        for name, opt in config_options(cls).items():
            if name in out:
                known, users = out[name]
                if (known.flag.flag, known.default) != (opt.flag.flag, opt.default):
                    raise OptionError(f"backend {backend!r} declares option {name!r} unlike {', '.join(users)}")
                out[name] = (known, (*users, backend))
            else:
                out[name] = (opt, (backend,))
    return out


def unused_options(config_class: type[BackendConfig], given: Mapping[str, str]) -> list[str]:
    """Of the options given (field -> as the user wrote it), those ``config_class`` does not declare."""
    known = config_options(config_class)
    return [shown for name, shown in given.items() if name not in known]


def make_config(config_class: type[BackendConfig], backend: str, values: Mapping[str, Any]) -> BackendConfig:
    """``config_class(**values)``; a bad value or unknown key is one :class:`OptionError` naming the option (as its
    flag) and the backend."""
    try:
        return config_class(**values)
    except ValidationError as e:
        err = e.errors()[0]
        key = str(err["loc"][0]) if err["loc"] else "?"
        if err["type"] == "extra_forbidden":
            raise OptionError(f"backend {backend!r} has no option {key!r}; its options: "
                              f"{', '.join(config_class.model_fields)}") from None
        opt = config_options(config_class).get(key)
        shown = opt.flag.flag if opt else key
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise OptionError(f"{shown} {msg} (backend {backend!r})" if msg.startswith("must")
                          else f"{shown}: {msg}, got {err.get('input')!r} (backend {backend!r})") from None


__all__ = ["BackendConfig", "ExtraOptions", "Flag", "InProcessConfig", "WeightsConfig", "Option", "OptionError", "ServerConfig",
           "batch_size_arg", "config_options", "declared_options", "key_value", "make_config", "unused_options"]
