"""One evaluation setting, frozen: what is scored how. It yields the resume fingerprint, the results'
``setting`` block and the output folder name, so the three can never disagree.

``Settings(backend, mode, shots, letter_style, chat, max_new_tokens, circular)``; the model side of the
fingerprint (name, revision, weights, dtype, tokenizer files, chat template, context limit, ...) comes from
the backend (:meth:`ancientbench.backends.base.Backend.fingerprint`), the data's from the question files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..backends.base import DEFAULT_BACKEND, MODES, non_default_backend, results_family
from ..errors import AncientBenchError
from ..models import model_slug
from ..prompts import letter_prefix, template_info
from .extract import EXTRACTOR_SPEC

DEFAULT_MAX_NEW_TOKENS = 1024  # generate mode; reasoning models need more (--max-new-tokens 8192)


class SettingsError(AncientBenchError, ValueError):
    """A setting value that does not exist (mode, shots, answer budget)."""


@dataclass(frozen=True)
class Settings:
    backend: str = DEFAULT_BACKEND
    mode: str = "letter"
    shots: int = 0
    letter_style: str = "bare"
    chat: bool = False
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    circular: bool = False

    def __post_init__(self):
        if self.mode not in MODES:
            raise SettingsError(f"--mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.shots < 0:
            raise SettingsError(f"shots must be >= 0, got {self.shots}")
        if self.max_new_tokens < 1:
            raise SettingsError(f"--max-new-tokens must be >= 1, got {self.max_new_tokens}")
        letter_prefix(self.letter_style)  # validates the name
        if self.mode == "generate" and not self.chat:
            object.__setattr__(self, "chat", True)  # generate mode always answers as a chat turn

    @property
    def prompt(self) -> dict[str, str]:
        """The template version and hash of this mode's prompts."""
        return template_info(self.mode, extractor=EXTRACTOR_SPEC if self.mode == "generate" else None)

    def fingerprint(self, backend_fingerprint: dict) -> dict:
        """What a stored prediction must have been made under to be reused: model side + this setting."""
        fp = {
            **backend_fingerprint,
            "backend": results_family(self.backend),
            "mode": self.mode,
            "shots": self.shots,
            "letter_style": self.letter_style,
            "chat": self.chat,
            **self.prompt,
        }
        if self.mode == "generate":
            fp["max_new_tokens"] = self.max_new_tokens
        else:  # only generation reads it; letter/ppl runs of older versions stay resumable
            fp.pop("generation_config_sha256", None)
        return fp

    def block(self) -> dict:
        """This setting's part of the results' ``setting`` block (the backend adds batch sizes, letter ids ...)."""
        out = {
            "backend": self.backend,
            "mode": self.mode,
            "shots": self.shots,
            "letter_style": self.letter_style,
            "chat": self.chat,
            "fewshot_source": "first k rows of each task's dev split" if self.shots else None,
        }
        if self.mode == "generate":
            out["max_new_tokens"] = self.max_new_tokens
        if self.mode == "ppl":
            out["ppl_decision"] = "length-normalised (per character) log-likelihood; summed one in accuracy_sum"
        return out

    def output_name(self, model_name: str) -> str:
        """The folder under ``--output`` (the one place it is spelled): the model's slug plus one suffix per
        non-default choice."""
        s = model_slug(model_name)
        if non_default_backend(self.backend):
            s += f"-{self.backend}"
        if self.mode != "letter":
            s += f"-{self.mode}"
        if self.chat and self.mode != "generate":
            s += "-chat"
        if self.letter_style != "bare":
            s += f"-{self.letter_style}"
        if self.circular:
            s += "-circular"
        return s

    def folder(self, output_dir: str | Path, model_name: str) -> Path:
        """Where this setting's files for ``model_name`` (as results record it) go under ``output_dir``."""
        return Path(output_dir) / self.output_name(model_name)
