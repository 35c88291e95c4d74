"""``ancientbench finetune``: full fine-tuning of a causal LM on the instruction data, then evaluation beside its base
(options; the recipe is :func:`ancientbench.finetune.train.finetune`)."""

from __future__ import annotations

import argparse
import math

from .train import TEMPLATES, FinetuneConfig, finetune, is_main_process

# ------------------------------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True,
                        help="base model: Hub id or local folder (e.g. 01-ai/Yi-1.5-9B-Chat), or tiny-random (smoke test)")
    parser.add_argument("--data", required=True, help="folder written by `ancientbench finetune-data`")
    parser.add_argument("--output", "--out", dest="output", required=True, help="run folder: checkpoints/, the fine-tuned model, eval/")
    parser.add_argument("--name", default=None, help="folder name of the fine-tuned model (default <base>-ancient)")
    g = parser.add_argument_group("training (paper defaults: batch size 2, learning rate 1e-5, full fine-tuning)")
    g.add_argument("--epochs", type=float, default=1.0, help="training epochs (default 1)")
    g.add_argument("--batch-size", type=int, default=2, help="per-device batch size (default 2)")
    g.add_argument("--grad-accum", type=int, default=1, help="gradient accumulation steps (default 1)")
    g.add_argument("--lr", type=float, default=1e-5, help="peak learning rate (default 1e-5)")
    g.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=None,
                   help="bf16 mixed precision (default: on where the device supports it)")
    g.add_argument("--model-dtype", choices=["auto", "float32", "bfloat16"], default="auto",
                   help="dtype the weights are loaded and updated in (default auto = float32 master weights)")
    g.add_argument("--gradient-checkpointing", action="store_true", help="recompute activations to save memory")
    g.add_argument("--group-by-length", action="store_true",
                   help="batch pairs of similar length together (less padding, faster; batches are no longer uniformly random)")
    g.add_argument("--max-steps", type=int, default=-1, help="stop after N optimizer steps (overrides --epochs)")
    g.add_argument("--max-length", type=int, default=1024, help="tokens per example; longer ones are cut (default 1024)")
    g.add_argument("--save-steps", type=int, default=500, help="checkpoint (and validation loss) every N steps (default 500)")
    g.add_argument("--save-total-limit", type=int, default=2, help="checkpoints kept (default 2)")
    g.add_argument("--logging-steps", type=int, default=10, help="log the loss every N steps (default 10)")
    g.add_argument("--warmup-ratio", type=float, default=0.03, help="linear warm-up share of the steps (default 0.03)")
    g.add_argument("--lr-scheduler", default="cosine", help="learning-rate schedule (default cosine)")
    g.add_argument("--weight-decay", type=float, default=0.0, help="AdamW weight decay (default 0)")
    g.add_argument("--seed", type=int, default=42, help="seed for initialisation order and data shuffling (default 42)")
    g.add_argument("--template", choices=TEMPLATES, default="auto",
                   help="prompt format: the tokenizer's chat template when it has one (auto), the plain one, "
                        "or raw (the instruction verbatim, tokenised as eval does)")
    g.add_argument("--kinds", nargs="+", default=None, metavar="KIND", help="train on these kinds of pairs only")
    g.add_argument("--resume", nargs="?", const=True, default=False, metavar="CHECKPOINT",
                   help="continue from the last checkpoint in <output>/checkpoints (or from CHECKPOINT)")
    g.add_argument("--deepspeed", default=None, metavar="JSON", help="DeepSpeed config, e.g. configs/deepspeed_zero3.json")
    g.add_argument("--trust-remote-code", action="store_true", help="allow the model's own code")
    g.add_argument("--cpu", action="store_true", help="train on the CPU even when a GPU is present")
    g.add_argument("--no-progress", action="store_true", help="no progress bars")
    e = parser.add_argument_group("evaluation beside the base model")
    e.add_argument("--eval-shots", nargs="*", type=int, default=[0, 5], help="shots settings (default 0 5; none: no evaluation)")
    e.add_argument("--eval-tasks", nargs="+", default=None, help="tasks or competencies (default all)")
    e.add_argument("--eval-limit", type=int, default=None, help="first N test items of each task")
    e.add_argument("--eval-data", default=None, help="benchmark folder or JSONL (default: the bundled dataset)")
    e.add_argument("--eval-batch-size", type=int, default=8, help="prompts per forward pass (default 8)")
    e.add_argument("--eval-chat", action="store_true", help="score with the chat template (as `eval --chat`), both models")
    e.add_argument("--no-eval", action="store_true", help="skip the evaluation")


def config_from_args(args: argparse.Namespace) -> FinetuneConfig:
    """The run's one config object, from the flags (checked on construction)."""
    return FinetuneConfig(
        args.model, args.data, args.output, name=args.name, epochs=args.epochs, batch_size=args.batch_size,
        grad_accum=args.grad_accum, lr=args.lr, bf16=args.bf16, model_dtype=args.model_dtype,
        gradient_checkpointing=args.gradient_checkpointing, group_by_length=args.group_by_length, max_steps=args.max_steps,
        max_length=args.max_length, save_steps=args.save_steps, save_total_limit=args.save_total_limit,
        logging_steps=args.logging_steps, warmup_ratio=args.warmup_ratio, lr_scheduler=args.lr_scheduler,
        weight_decay=args.weight_decay, seed=args.seed, template=args.template, kinds=args.kinds, resume=args.resume,
        deepspeed=args.deepspeed, trust_remote_code=args.trust_remote_code, use_cpu=args.cpu,
        eval_shots=[] if args.no_eval else args.eval_shots, eval_tasks=args.eval_tasks, eval_limit=args.eval_limit,
        eval_data=args.eval_data, eval_batch_size=args.eval_batch_size, eval_chat=args.eval_chat,
        progress=not args.no_progress,
    )


def run(args: argparse.Namespace) -> int:
    # FinetuneError, FinetuneDataError and DataError reach cli.main, which prints them as one error line (exit 2)
    summary = finetune(config_from_args(args))
    if not is_main_process():
        return 0
    loss = summary["train_metrics"].get("train_loss")
    print(f"\nfine-tuned model: {summary['model']}  ({summary['global_step']} steps, {summary['train_examples']} examples, "
          f"train loss {loss:.4f})" if isinstance(loss, float) and math.isfinite(loss) else f"\nfine-tuned model: {summary['model']}")
    if summary.get("evaluation"):
        for k, c in summary["evaluation"]["comparisons"].items():
            print(f"{k}-shot comparison: {c['json']} (average A - B: {100 * c['average_diff']:+.2f} points)")
    return 0
