"""Full fine-tuning of a causal LM on the instruction data, then evaluation beside its base.

Owns the paper's fine-tuned baseline recipe (Yi1.5-9B-Chat -> Yi1.5-9B-Ancient: full fine-tuning, batch size 2,
learning rate 1e-5) as a tool for any causal LM:

* **Data**: the folder written by ``ancientbench finetune-data`` (``data/<kind>/{train,validation}.jsonl``).
  Each pair becomes a prompt (instruction, then the input on its own line) and a completion (the output).
  With the tokenizer's chat template (``--template auto`` when it has one) the prompt is a user turn
  rendered with ``add_generation_prompt=True`` and the completion is the rest of the rendered conversation
  (the assistant's answer and the template's end-of-turn tokens); without one, a plain template
  (:data:`PLAIN_PROMPT`) and the EOS token. ``--template raw`` uses the instruction itself as the prompt, with
  no wrapping, and tokenises exactly as ``eval`` does (the prompt alone; the output as the tokens after the
  prompt's own, or on its own where the boundary merges): pairs written in the evaluation's own prompt format
  (the oracle check) train on what the evaluation reads. Labels are ``-100`` over the prompt (and padding), so
  the loss is on the output tokens only. Before anything is trained the pairs pass the leakage check of
  ``finetune-data --check`` (the bundled test items and the team-curated files); data that fails it is refused.
* **Training**: the ``transformers`` Trainer. Weights are loaded in float32 and trained with bf16 autocast
  where the device supports it (``--bf16`` auto), so the optimizer updates fp32 master weights (a learning rate
  of 1e-5 is below bf16's resolution for most weights); ``--model-dtype bfloat16`` trades that for memory.
  ``--gradient-checkpointing``; multi-GPU by launching with ``accelerate launch -m ancientbench.cli finetune
  ...`` (``configs/accelerate_multi_gpu.yaml``) or with ``--deepspeed configs/deepspeed_zero3.json``.
* **Checkpoints**: ``<output>/checkpoints/checkpoint-<step>`` every ``--save-steps`` (model, optimizer,
  scheduler, RNG states; the last ``--save-total-limit`` kept). ``--resume`` continues from the last one (or
  ``--resume PATH`` from a given one); an output folder that already holds checkpoints is never silently
  overwritten.
* **Result**: the model and tokenizer in ``<output>/<name>/`` (default name ``<base>-ancient``) with
  ``ancientbench_finetune.json`` (arguments, data figures, training metrics); ``<output>/train_log.json``.
  ``--resume`` on a run whose training is complete (same data and step settings) goes straight on to the
  evaluation, which itself resumes from the predictions already written.
* **Evaluation**: ``ancientbench eval`` of the base model and of the fine-tuned one on the same tasks, shots
  and limit (``<output>/eval/``), then the paired comparison (``ancientbench compare``, fine-tuned = A, base
  = B) printed and saved as ``<output>/eval/compare_<k>shot.{json,txt}``. Only the main process evaluates.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..errors import AncientBenchError
from ..evaluation import evaluate_model, results_path
from ..fileio import atomic_write
from ..models import causal_lm_from_pretrained, model_slug, npu_available
from ..paths import MINI_NAME, mini_path
from ..reports.compare import compare, format_table, write_json
from ..table import results_table
from ..tiny import TINY_RANDOM_NAME, tiny_random_path
from .dataset import load_pairs
from .kinds import KIND_NAMES, FinetuneDataError
from .leakage import held_out_targets, leakage_report

log = logging.getLogger(__name__)

PLAIN_PROMPT = "### 指令：\n{instruction}\n\n### 回答：\n"  # the plain template when the tokenizer has no chat template
IGNORE_INDEX = -100
RECORD = "ancientbench_finetune.json"  # written into the fine-tuned model's folder when training is complete


class FinetuneError(AncientBenchError, RuntimeError):
    """Bad arguments or data for a fine-tuning run; the message says what to change."""


# ------------------------------------------------------------------------------------------- encoding


def user_message(instruction: str, inp: str) -> str:
    """The user turn of a pair: the instruction, then the input on its own line when there is one."""
    return f"{instruction}\n{inp}" if inp.strip() else instruction


TEMPLATES = ("auto", "chat", "plain", "raw")


def uses_chat_template(tokenizer, template: str = "auto") -> bool:
    if template not in TEMPLATES:
        raise FinetuneError(f"--template must be one of {', '.join(TEMPLATES)}, got {template!r}")
    has = bool(getattr(tokenizer, "chat_template", None))
    if template == "chat" and not has:
        raise FinetuneError("--template chat: this tokenizer has no chat template; use --template plain or auto")
    return has if template == "auto" else template == "chat"


def encode_raw(tokenizer, pairs: Sequence, *, max_length: int) -> tuple[list[dict], int]:
    """``--template raw``: the instruction (and input) verbatim as the prompt, tokenised as the evaluation does:
    the prompt on its own with the tokenizer's special tokens; the output as the full text's tokens after the
    prompt's own, or tokenised on its own where the boundary merges (a letter after 答案是：); then EOS."""
    examples: list[dict] = []
    truncated = 0
    eos = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    for p in pairs:
        prompt = p.instruction + p.input
        p_ids = tokenizer(prompt)["input_ids"]
        full = tokenizer(prompt + p.output)["input_ids"]
        c_ids = full[len(p_ids):] if full[: len(p_ids)] == p_ids else tokenizer(p.output, add_special_tokens=False)["input_ids"]
        ids, labels = p_ids + c_ids + eos, [IGNORE_INDEX] * len(p_ids) + c_ids + eos
        if len(ids) > max_length:
            truncated += 1
            ids, labels = ids[:max_length], labels[:max_length]
        if any(lab != IGNORE_INDEX for lab in labels):
            examples.append({"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels})
    return examples, truncated


def render(tokenizer, instruction: str, inp: str, output: str, chat: bool) -> tuple[str, str]:
    """(prompt text, completion text) of one pair; prompt + completion is the full training text."""
    user = user_message(instruction, inp)
    if not chat:
        return PLAIN_PROMPT.format(instruction=user), output
    messages = [{"role": "user", "content": user}]
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    full = tokenizer.apply_chat_template(messages + [{"role": "assistant", "content": output}], tokenize=False)
    if not full.startswith(prompt):
        raise FinetuneError(
            "the chat template renders the conversation with a different prefix than the generation prompt "
            "(e.g. it rewrites earlier turns), so the prompt cannot be masked exactly; use --template plain"
        )
    return prompt, full[len(prompt):]


def encode_pairs(tokenizer, pairs: Sequence, *, chat: bool, max_length: int, batch: int = 1000) -> tuple[list[dict], int]:
    """Token ids and labels of each pair (labels -100 over the prompt). Returns (examples, number truncated).

    The full text (prompt + completion) is tokenized in one piece, as the model will see it, and a fast
    tokenizer's offsets tell which tokens belong to the completion: those from the first token that starts
    at or after the end of the prompt (a token straddling the boundary stays with the prompt). A tokenizer
    without offsets tokenizes the two parts separately. Special tokens: in chat mode the template writes them
    (nothing is added); in plain mode the tokenizer adds its own (BOS) and EOS ends the completion.
    """
    examples: list[dict] = []
    truncated = 0
    eos = [tokenizer.eos_token_id] if (not chat and tokenizer.eos_token_id is not None) else []
    fast = bool(getattr(tokenizer, "is_fast", False))
    for start in range(0, len(pairs), batch):
        texts = [render(tokenizer, p.instruction, p.input, p.output, chat) for p in pairs[start : start + batch]]
        if fast:
            enc = tokenizer([a + b for a, b in texts], add_special_tokens=not chat, return_offsets_mapping=True)
            rows = []
            for ids, offsets, (prompt, _) in zip(enc["input_ids"], enc["offset_mapping"], texts):
                cut = next((i for i, (a, b) in enumerate(offsets) if a >= len(prompt) and b > a), len(ids))
                rows.append((ids[:cut], ids[cut:]))
        else:
            bos = [tokenizer.bos_token_id] if (not chat and _adds_bos(tokenizer)) else []
            prompts = tokenizer([t[0] for t in texts], add_special_tokens=False)["input_ids"]
            completions = tokenizer([t[1] for t in texts], add_special_tokens=False)["input_ids"]
            rows = [(bos + a, b) for a, b in zip(prompts, completions)]
        for p_ids, c_ids in rows:
            c_ids = c_ids + eos
            ids = p_ids + c_ids
            labels = [IGNORE_INDEX] * len(p_ids) + c_ids
            if len(ids) > max_length:
                truncated += 1
                ids, labels = ids[:max_length], labels[:max_length]
            if all(lab == IGNORE_INDEX for lab in labels):
                continue  # the prompt alone fills max_length: nothing to learn from this pair
            examples.append({"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels})
    return examples, truncated


def _adds_bos(tokenizer) -> bool:
    if tokenizer.bos_token_id is None:
        return False
    ids = tokenizer("a")["input_ids"]
    return bool(ids) and ids[0] == tokenizer.bos_token_id


class ListDataset:
    """A map-style dataset over encoded examples (what the Trainer's sampler and collator need)."""

    def __init__(self, examples: list[dict]):
        self.examples = examples

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int) -> dict:
        return self.examples[i]


# ------------------------------------------------------------------------------------------ training


def bf16_supported() -> bool:
    import torch  # lazy: torch takes seconds to import; only training needs it

    if torch.cuda.is_available():
        return torch.cuda.is_bf16_supported()
    return npu_available()


def last_checkpoint(folder: Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint  # lazy: as torch

    return get_last_checkpoint(str(folder)) if folder.is_dir() else None


def _training_args(**kw):
    """TrainingArguments across transformers 4.40 - 5.x (renamed and added options mapped or dropped)."""
    from transformers import TrainingArguments  # lazy: as torch

    params = inspect.signature(TrainingArguments.__init__).parameters
    if "activation_checkpointing" in params and "gradient_checkpointing" in kw:
        kw["activation_checkpointing"] = kw.pop("gradient_checkpointing")
        kw["activation_checkpointing_kwargs"] = kw.pop("gradient_checkpointing_kwargs")
    if "warmup_ratio" in kw and (isinstance(kw["warmup_ratio"], float) and "warmup_ratio" not in params):
        kw["warmup_steps"] = kw.pop("warmup_ratio")  # v5: a float in [0, 1) is a ratio
    if "eval_strategy" not in params and "eval_strategy" in kw:
        kw["evaluation_strategy"] = kw.pop("eval_strategy")
    if "train_sampling_strategy" in params and "group_by_length" in kw:  # v5 names the sampler
        kw["train_sampling_strategy"] = "group_by_length" if kw.pop("group_by_length") else "random"
    for optional in ("enable_jit_checkpoint", "average_tokens_across_devices"):
        if optional not in params:
            kw.pop(optional, None)
    return TrainingArguments(**kw)


def is_main_process() -> bool:
    return int(os.environ.get("RANK", "0")) == 0


def default_name(model: str) -> str:
    return f"{model_slug(model)}-ancient"


def leakage_check(data: str | Path, pairs: Sequence) -> dict:
    """``finetune-data --check``'s leakage check of the pairs to train on; a :class:`FinetuneError` when it fails."""
    try:
        report = leakage_report(pairs, held_out_targets(None, curated=True))
    except ModuleNotFoundError as e:
        raise FinetuneError(f"the leakage check of the training data needs the build extras (module {e.name!r} is not "
                            "installed): pip install 'ancientbench[build]'") from None
    if not report["passed"]:
        ex = report["examples"][0]
        raise FinetuneError(f"{data}: fails the leakage check ({report['violations']} of {report['pairs_checked']} pairs hold what the benchmark's test "
                            f"items ask, e.g. {ex['pair']}: {ex['rule']} of {ex['item']}); nothing was trained: "
                            f"`ancientbench finetune-data --check {data}` lists them, rebuild the data with finetune-data")
    return {"passed": True, "pairs_checked": report["pairs_checked"], "held_out": report["held_out"]["files_sha256"]}


@dataclass(frozen=True)
class FinetuneConfig:
    """One fine-tuning run's options (``ancientbench finetune`` builds it once from its flags; Python callers
    construct it): the model and data, the Trainer's settings, the evaluation beside the base. Checked on
    construction: a bad value is a :class:`FinetuneError` before anything is loaded."""

    model: str
    data: str | Path
    output: str | Path
    name: str | None = None
    epochs: float = 1.0
    batch_size: int = 2
    grad_accum: int = 1
    lr: float = 1e-5
    bf16: bool | None = None
    model_dtype: str = "auto"
    gradient_checkpointing: bool = False
    group_by_length: bool = False
    max_steps: int = -1
    max_length: int = 1024
    save_steps: int = 500
    save_total_limit: int = 2
    logging_steps: int = 10
    warmup_ratio: float = 0.03
    lr_scheduler: str = "cosine"
    weight_decay: float = 0.0
    seed: int = 42
    template: str = "auto"
    kinds: Sequence[str] | None = None
    resume: bool | str = False
    deepspeed: str | None = None
    trust_remote_code: bool = False
    use_cpu: bool = False
    eval_shots: Sequence[int] = (0, 5)
    eval_tasks: Sequence[str] | None = None
    eval_limit: int | None = None
    eval_data: str | Path | None = None
    eval_batch_size: int = 8
    eval_chat: bool = False
    progress: bool = True
    check_leakage: bool = True  # False only for studies that teach test items on purpose (tests/test_oracle.py), never the CLI

    def __post_init__(self) -> None:
        for k in self.kinds or ():
            if k not in KIND_NAMES:
                raise FinetuneError(f"unknown kind {k!r}; valid: {', '.join(KIND_NAMES)}")
        if self.batch_size < 1 or self.grad_accum < 1 or self.lr <= 0 or self.max_length < 8:
            raise FinetuneError("--batch-size and --grad-accum must be >= 1, --lr > 0, --max-length >= 8")
        if self.model_dtype not in MODEL_DTYPES:
            raise FinetuneError(f"--model-dtype must be auto, float32 or bfloat16, got {self.model_dtype!r}")

    @property
    def model_path(self) -> str:
        """The folder or Hub id the weights load from: the built-in models train from their folders (the base
        evaluation still names them: tiny-random, ancientbench-mini)."""
        return str(tiny_random_path()) if self.model == TINY_RANDOM_NAME else str(mini_path()) if self.model == MINI_NAME else self.model

    @property
    def final_dir(self) -> Path:
        return Path(self.output) / (self.name or default_name(self.model))

    @property
    def checkpoints(self) -> Path:
        return Path(self.output) / "checkpoints"

    def settings(self, **measured) -> dict:
        """The training settings as recorded (``measured``: what the run decided, e.g. bf16 and world size)."""
        return {
            "epochs": self.epochs, "batch_size": self.batch_size, "grad_accum": self.grad_accum, "lr": self.lr,
            "bf16": measured["bf16"], "model_dtype": measured["model_dtype"],
            "gradient_checkpointing": self.gradient_checkpointing, "group_by_length": self.group_by_length,
            "max_steps": self.max_steps, "max_length": self.max_length, "save_steps": self.save_steps,
            "warmup_ratio": self.warmup_ratio, "lr_scheduler": self.lr_scheduler, "weight_decay": self.weight_decay,
            "seed": self.seed, "kinds": list(self.kinds or []), "deepspeed": self.deepspeed, "world_size": measured["world_size"],
        }


MODEL_DTYPES = ("auto", "float32", "bfloat16")


def finetune(config: FinetuneConfig, *, callbacks: Sequence = ()) -> dict:
    """Fine-tune ``config.model`` on the pairs in ``config.data``, save it, evaluate it beside the base; returns a
    summary. ``callbacks``: extra ``transformers`` TrainerCallbacks."""
    done = finished_run(config)
    if done is not None:
        return evaluate_run(config, done)
    resume_from = resume_point(config)
    train_pairs, val_pairs = training_pairs(config)
    # the check of `finetune-data --check` (the bundled test items and the team-curated files), before any training
    leakage = leakage_check(config.data, [*train_pairs, *val_pairs]) if config.check_leakage else {"skipped": True}
    tokenizer, saved_padding_side = training_tokenizer(config)
    chat = uses_chat_template(tokenizer, config.template)
    (train_examples, truncated), (val_examples, _) = (encode(config, tokenizer, pairs, chat) for pairs in (train_pairs, val_pairs))
    trainer, use_bf16, dtype = build_trainer(config, tokenizer, train_examples, val_examples, callbacks)
    result = trainer.train(resume_from_checkpoint=resume_from)
    trainer.save_model(str(config.final_dir))  # gathers ZeRO-3 shards (stage3_gather_16bit_weights_on_model_save)
    main = trainer.is_world_process_zero()
    summary = {
        "base_model": config.model, "model": str(config.final_dir), "data": str(config.data),
        "template": "raw" if config.template == "raw" else "chat" if chat else "plain",
        "train_pairs": len(train_pairs), "leakage_check": leakage, "train_examples": len(train_examples),
        "validation_examples": len(val_examples), "truncated_examples": truncated,
        "global_step": trainer.state.global_step, "resumed_from": resume_from,
        "train_metrics": {k: v for k, v in result.metrics.items() if isinstance(v, (int, float))},
        "log_history": trainer.state.log_history,
        "settings": config.settings(bf16=use_bf16, model_dtype=str(dtype).replace("torch.", ""),
                                    world_size=trainer.args.world_size),
    }
    if main:
        tokenizer.padding_side = saved_padding_side
        save_run(config, tokenizer, summary)
    del trainer  # the model goes with it, before the evaluation loads two more
    empty_gpu_cache()
    return evaluate_run(config, summary) if main else summary


def finished_run(config: FinetuneConfig) -> dict | None:
    """With ``--resume``, the record of a run whose training is complete with the same data and step settings
    (then only the evaluation is left), else None."""
    record_path = config.final_dir / RECORD
    if config.resume is not True or not record_path.is_file():
        return None
    done = json.loads(record_path.read_text(encoding="utf-8"))
    same = {"epochs": config.epochs, "max_steps": config.max_steps, "batch_size": config.batch_size,
            "grad_accum": config.grad_accum, "lr": config.lr, "kinds": list(config.kinds or [])}
    if not all(done.get("settings", {}).get(k) == v for k, v in same.items()) or done.get("data") != str(config.data):
        return None
    log.info("--resume: training of %s is complete; going on to the evaluation", config.final_dir)
    train_log = Path(config.output) / "train_log.json"
    done["log_history"] = json.loads(train_log.read_text(encoding="utf-8")) if train_log.is_file() else []
    done["training_skipped"] = True
    return done


def resume_point(config: FinetuneConfig) -> str | None:
    """The checkpoint to continue from (``--resume``: the last one, or the one named); an output folder that holds
    checkpoints is never trained over without ``--resume``."""
    ckpt_dir = config.checkpoints
    if not config.resume:
        if last_checkpoint(ckpt_dir) is not None:
            raise FinetuneError(f"{ckpt_dir} already holds checkpoints: pass --resume to continue that run, or use another --output")
        return None
    resume_from = str(config.resume) if isinstance(config.resume, str) else last_checkpoint(ckpt_dir)
    if resume_from is None:
        log.info("--resume: no checkpoint in %s yet; starting from the base model", ckpt_dir)
    elif not Path(resume_from).is_dir():
        raise FinetuneError(f"--resume {resume_from}: no such checkpoint folder")
    return resume_from


def training_pairs(config: FinetuneConfig) -> tuple[list, list]:
    """The train and validation pairs of the kinds asked for (no validation files: train without a validation loss)."""
    kinds = config.kinds
    train = [p for p in load_pairs(config.data, "train") if not kinds or p.kind in kinds]
    try:
        val = [p for p in load_pairs(config.data, "validation") if not kinds or p.kind in kinds]
    except FinetuneDataError:  # no validation files (a very small build)
        val = []
    if not train:
        raise FinetuneError(f"{config.data}: no training pairs" + (f" of kinds {', '.join(kinds)}" if kinds else ""))
    return train, val


def training_tokenizer(config: FinetuneConfig):
    """The base model's tokenizer set up for training (a pad token, right padding) and its own padding side,
    restored before it is saved."""
    from transformers import AutoTokenizer  # lazy: transformers takes seconds to import; only training needs it

    tokenizer = AutoTokenizer.from_pretrained(config.model_path, trust_remote_code=config.trust_remote_code)
    saved_padding_side = tokenizer.padding_side
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token if tokenizer.eos_token is not None else tokenizer.unk_token
    if tokenizer.pad_token is None:
        raise FinetuneError(f"tokenizer of {config.model} has no pad, eos or unk token to pad with")
    tokenizer.padding_side = "right"  # training pads on the right; scoring sets left padding itself
    return tokenizer, saved_padding_side


def encode(config: FinetuneConfig, tokenizer, pairs: Sequence, chat: bool) -> tuple[list[dict], int]:
    if config.template == "raw":
        return encode_raw(tokenizer, pairs, max_length=config.max_length)
    return encode_pairs(tokenizer, pairs, chat=chat, max_length=config.max_length)


def build_trainer(config: FinetuneConfig, tokenizer, train_examples: list[dict], val_examples: list[dict], callbacks: Sequence):
    """The Trainer over the encoded examples, with bf16 autocast where the device has it; returns (trainer, bf16, dtype)."""
    import torch  # lazy: torch takes seconds to import; only training needs it
    from transformers import DataCollatorForSeq2Seq, Trainer  # lazy: as torch

    use_bf16 = (not config.use_cpu and bf16_supported()) if config.bf16 is None else bool(config.bf16)
    if use_bf16 and not config.use_cpu and not bf16_supported() and torch.cuda.is_available():
        raise FinetuneError("--bf16: this GPU does not support bfloat16; use --no-bf16")
    args = training_arguments(config, use_bf16, has_validation=bool(val_examples))
    # created before the model, so that DeepSpeed ZeRO-3 partitions the weights while loading
    dtype = {"auto": torch.float32, "float32": torch.float32, "bfloat16": torch.bfloat16}[config.model_dtype]
    lm = causal_lm_from_pretrained(config.model_path, dtype=dtype, trust_remote_code=config.trust_remote_code)
    if config.gradient_checkpointing:
        lm.config.use_cache = False
    collator = DataCollatorForSeq2Seq(tokenizer, padding=True, label_pad_token_id=IGNORE_INDEX,
                                      pad_to_multiple_of=8 if use_bf16 else None)
    # the tokenizer goes with every checkpoint, so a checkpoint folder loads (and evaluates) on its own
    tok_kw = "processing_class" if "processing_class" in inspect.signature(Trainer.__init__).parameters else "tokenizer"
    trainer = Trainer(model=lm, args=args, train_dataset=ListDataset(train_examples),
                      eval_dataset=ListDataset(val_examples) if val_examples else None, data_collator=collator,
                      callbacks=list(callbacks), **{tok_kw: tokenizer})
    return trainer, use_bf16, dtype


def training_arguments(config: FinetuneConfig, use_bf16: bool, *, has_validation: bool):
    c = config
    return _training_args(
        output_dir=str(c.checkpoints), per_device_train_batch_size=c.batch_size, per_device_eval_batch_size=c.batch_size,
        gradient_accumulation_steps=c.grad_accum, learning_rate=c.lr, num_train_epochs=c.epochs, max_steps=c.max_steps,
        lr_scheduler_type=c.lr_scheduler, warmup_ratio=float(c.warmup_ratio), weight_decay=c.weight_decay, bf16=use_bf16,
        gradient_checkpointing=c.gradient_checkpointing,
        gradient_checkpointing_kwargs={"use_reentrant": False} if c.gradient_checkpointing else None,
        group_by_length=c.group_by_length, logging_steps=c.logging_steps, save_strategy="steps", save_steps=c.save_steps,
        save_total_limit=c.save_total_limit, eval_strategy="steps" if has_validation else "no",
        eval_steps=c.save_steps if has_validation else None, report_to="none", seed=c.seed, data_seed=c.seed,
        remove_unused_columns=False, deepspeed=c.deepspeed, use_cpu=c.use_cpu, disable_tqdm=not c.progress,
        enable_jit_checkpoint=True,  # SIGTERM (preemption) saves a checkpoint first, so --resume loses nothing
        dataloader_num_workers=0,
        ddp_find_unused_parameters=False,  # full fine-tuning: every parameter gets a gradient
    )


def save_run(config: FinetuneConfig, tokenizer, summary: dict) -> None:
    """The tokenizer beside the saved model, the run's record (``RECORD``, with the data's own summary) and its loss log."""
    tokenizer.save_pretrained(str(config.final_dir))
    data_summary = Path(config.data) / "finetune_data.json"
    summary["data_summary"] = json.loads(data_summary.read_text(encoding="utf-8")) if data_summary.is_file() else None
    record = {k: v for k, v in summary.items() if k != "log_history"}
    atomic_write(config.final_dir / RECORD, json.dumps(record, ensure_ascii=False, indent=1) + "\n")
    atomic_write(Path(config.output) / "train_log.json", json.dumps(summary["log_history"], indent=1) + "\n")


def empty_gpu_cache() -> None:
    import torch  # lazy: as in build_trainer

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def evaluate_run(config: FinetuneConfig, summary: dict) -> dict:
    """The evaluation beside the base (main process, unless no shots are asked for), added to ``summary``."""
    if is_main_process() and config.eval_shots:
        summary["evaluation"] = evaluate_beside_base(
            config.model, config.final_dir, Path(config.output) / "eval", shots=config.eval_shots, tasks=config.eval_tasks,
            limit=config.eval_limit, data=config.eval_data, batch_size=config.eval_batch_size, chat=config.eval_chat,
            trust_remote_code=config.trust_remote_code, device="cpu" if config.use_cpu else "auto", progress=config.progress,
        )
    return summary


# -------------------------------------------------------------------------------------------- evaluation


def evaluate_beside_base(
    base: str,
    tuned: str | Path,
    out: str | Path,
    *,
    shots: Sequence[int] = (0, 5),
    tasks: Sequence[str] | None = None,
    limit: int | None = None,
    data: str | Path | None = None,
    batch_size: int = 8,
    chat: bool = False,
    trust_remote_code: bool = False,
    device: str = "auto",
    progress: bool = True,
) -> dict:
    """``ancientbench eval`` of both models (same tasks, shots, limit, data), then ``compare`` per shots setting
    (A = fine-tuned, B = base), printed and written as ``compare_<k>shot.{json,txt}`` in ``out``."""
    out = Path(out)
    files: dict[str, dict[int, str]] = {}
    tables = []
    for label, model in (("base", base), ("finetuned", str(tuned))):
        res = evaluate_model(model, tasks=tasks, shots=list(shots), limit=limit, data=data, output_dir=out,
                             batch_size=batch_size, chat=chat, trust_remote_code=trust_remote_code, device=device,
                             progress=progress)
        files[label] = {k: str(results_path(r["predictions_file"])) for k, r in res.items()}
        tables.extend(res.values())
    print(results_table(tables))
    comparisons = {}
    for k in shots:
        res = compare(files["finetuned"][k], files["base"][k])
        text = format_table(res)
        print(f"\n== {k}-shot: fine-tuned (A) vs base (B)\n{text}")
        write_json(res, out / f"compare_{k}shot.json")  # as `compare --json` writes it
        atomic_write(out / f"compare_{k}shot.txt", text + "\n")
        comparisons[k] = {"json": str(out / f"compare_{k}shot.json"), "average_diff": res["average"]["diff"],
                          "micro_diff": res["micro_accuracy"]["diff"]}
    return {"results": {label: {str(k): v for k, v in f.items()} for label, f in files.items()}, "comparisons": comparisons}
