"""One class per mode: the tokens a prompt needs, the backend requests of a task's items, and each result as the
mode's fields of a prediction record. :func:`ancientbench.evaluation.runner.score_task` does the rest (fitting,
error records, batching) the same way for every mode.

- :class:`LetterMode`: one request per item for the log-probabilities of the answer letters; ``pred`` is their argmax.
- :class:`PplMode`: the summed log-likelihood of each option's text after the prompt; ``pred`` is the argmax per
  character (``option_logprobs_norm``), ``pred_sum`` the argmax of the sums.
- :class:`GenerateMode`: a generated answer of at most ``max_new_tokens``; ``pred`` is the letter
  :func:`~ancientbench.evaluation.extract.extract_letter` reads from it.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from ..backends.base import Backend, GenerateRequest, LetterRequest, LoglikelihoodRequest, Prompt, letter_continuations
from ..tasks import LETTERS
from .extract import extract_letter
from .settings import Settings


def argmax_letter(row: Sequence[float | None]) -> str | None:
    """The letter of the largest value (ties go to the earlier letter); None when every value is missing."""
    present = [j for j in range(len(LETTERS)) if row[j] is not None]
    if not present:
        return None
    return LETTERS[max(present, key=lambda j: (row[j], -j))]


class ModeRequests:
    """How one mode asks the backend and reads its answers."""

    mode: str

    def needed_tokens(self, backend: Backend, settings: Settings, prompts: list[Prompt], items: list[Mapping]) -> list[int] | None:
        """Tokens each prompt needs in this mode (None when the backend cannot count)."""
        return backend.count_tokens(prompts)

    def requests(self, settings: Settings, prompts: list[Prompt], items: list[Mapping], names: list[str]) -> list:
        raise NotImplementedError

    def call(self, backend: Backend, requests: list, on_done: Callable) -> None:
        raise NotImplementedError

    def fill(self, rec: dict, result, item: Mapping, log_samples: bool) -> dict:
        """``rec`` (the record's common fields) with this mode's fields from ``result``."""
        raise NotImplementedError

    def agrees(self, rec: Mapping, item: Mapping) -> bool:
        """Whether a stored record is what :meth:`fill` makes of its stored numbers for ``item``: its gold the
        item's answer, its ``pred`` read again from what it stores (a hand-edited line is not)."""
        if rec.get("gold") != item["answer"]:
            return False
        return rec.get("pred") is None if rec.get("error") else self.reads(rec, item)

    def reads(self, rec: Mapping, item: Mapping) -> bool:
        raise NotImplementedError


class LetterMode(ModeRequests):
    mode = "letter"

    def requests(self, settings, prompts, items, names):
        conts = letter_continuations(settings.letter_style)
        return [LetterRequest(p, conts, n) for p, n in zip(prompts, names)]

    def call(self, backend, requests, on_done):
        backend.letter_logprobs(requests, on_done)

    def fill(self, rec, result, item, log_samples):
        row = list(result.logprobs)
        rec["logprobs"] = row
        missing = [x for x, v in zip(LETTERS, row) if v is None]
        rec["pred"] = argmax_letter(row)
        if missing:
            rec["missing_letters"] = missing
            if rec["pred"] is None:
                rec.update(error="no answer letter among the log-probabilities the backend returned",
                           error_type="missing_letters")
        return rec

    def reads(self, rec, item):
        return isinstance(rec.get("logprobs"), list) and rec.get("pred") == argmax_letter(rec["logprobs"])


class PplMode(ModeRequests):
    mode = "ppl"

    def needed_tokens(self, backend, settings, prompts, items):
        """The prompt with its longest option."""
        per_option = [backend.count_tokens([Prompt(p.prefix, p.suffix + it[x], p.chat) for p, it in zip(prompts, items)])
                      for x in LETTERS]
        if any(c is None for c in per_option):
            return None
        return [max(c[i] for c in per_option) for i in range(len(prompts))]

    def requests(self, settings, prompts, items, names):
        return [LoglikelihoodRequest(p, tuple(it[x] for x in LETTERS), n) for p, it, n in zip(prompts, items, names)]

    def call(self, backend, requests, on_done):
        backend.loglikelihoods(requests, on_done)

    def fill(self, rec, result, item, log_samples):
        sums = [float(v) for v in result.logprobs]
        norm = [s / max(1, len(item[x])) for s, x in zip(sums, LETTERS)]
        rec.update(pred=argmax_letter(norm), pred_sum=argmax_letter(sums), option_logprobs=sums,
                   option_logprobs_norm=norm, option_tokens=result.n_tokens)
        return rec

    def reads(self, rec, item):
        sums = rec.get("option_logprobs")
        if not isinstance(sums, list) or None in sums:
            return False
        norm = [s / max(1, len(item[x])) for s, x in zip(sums, LETTERS)]
        return (rec.get("option_logprobs_norm") == norm and rec.get("pred") == argmax_letter(norm)
                and rec.get("pred_sum") == argmax_letter(sums))


class GenerateMode(ModeRequests):
    mode = "generate"

    def needed_tokens(self, backend, settings, prompts, items):
        """The prompt plus the answer's budget."""
        counts = backend.count_tokens(prompts)
        return None if counts is None else [n + settings.max_new_tokens for n in counts]

    def requests(self, settings, prompts, items, names):
        return [GenerateRequest(p, settings.max_new_tokens, n) for p, n in zip(prompts, names)]

    def call(self, backend, requests, on_done):
        backend.generate(requests, on_done)

    def fill(self, rec, result, item, log_samples):
        letter, rule = extract_letter(result.text, item)
        rec["pred"] = letter
        if letter is None:
            rec["extraction_failed"] = True
        else:
            rec["extracted_by"] = rule
        rec["finish_reason"] = result.finish_reason
        if log_samples:
            rec["response"] = result.text
        return rec

    def reads(self, rec, item):
        """Read again from the stored answer where ``--log-samples`` kept it (otherwise nothing to read from)."""
        if not isinstance(rec.get("response"), str):
            return True
        return rec.get("pred") == extract_letter(rec["response"], item)[0]


MODES: dict[str, ModeRequests] = {m.mode: m for m in (LetterMode(), PplMode(), GenerateMode())}
