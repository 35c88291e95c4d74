"""``ancientbench train-mini``: pretrain the AncientBench mini-LM from scratch, fixed seed, resumable.

Stages, each kept in ``--work`` (default ``runs/ancientbench-mini``) so a rerun of the same command resumes:

1. ``corpus.jsonl`` + ``corpus_report.json``: the held-out-checked corpus (:mod:`ancientbench.mini.corpus`);
2. ``tokenizer/``: a Qwen2-style ByteLevel BPE trained on that corpus and the prompt templates
   (:func:`ancientbench.tiny.train_bytelevel_tokenizer`);
3. ``blocks.pt``: the corpus tokenised, EOS-joined and packed into blocks of ``--seq-len + 1`` tokens; 1 block in
   100 (seeded) is the validation set;
4. training: AdamW, linear warm-up then cosine decay, one seeded batch order; ``checkpoint.pt`` every
   ``--save-every`` steps (model, optimizer, step) and one line per step in ``loss.jsonl``;
5. export to ``--output`` (default ``<work>/model``; never the package's shipped ``ancientbench/mini/ancientbench-mini/``,
   which is refused, nor a folder holding anything but an earlier export): ``model.safetensors``
   (float32), tokenizer, ``training.json`` (settings, corpus report, leak check, losses), ``loss_curve.png`` and
   the model card ``README.md`` (:mod:`ancientbench.mini.card`).

Same sources, benchmark files, settings and thread count: same weights.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import shutil
import time
from pathlib import Path

from ..argtypes import add_no_progress
from ..errors import AncientBenchError
from ..fileio import atomic_write
from ..paths import DEFAULT_SOURCES_DIR, PACKAGE_DIR
from ..tiny import build_tiny_model, train_bytelevel_tokenizer
from . import MINI_NAME
from . import corpus as mini_corpus
from .card import write_card as write_mini_card

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
DEFAULTS = dict(vocab_size=6000, hidden_size=256, intermediate_size=640, num_hidden_layers=4,
                num_attention_heads=4, num_key_value_heads=2, seq_len=256, batch_size=16, steps=1400,
                lr=2e-3, min_lr=1e-4, warmup=60, weight_decay=0.1, seed=0)
VALIDATION_EVERY = 100


class TrainMiniError(AncientBenchError, RuntimeError):
    """A training run that cannot start or resume as asked."""


def _write_json(path: Path, obj) -> None:
    atomic_write(path, json.dumps(obj, ensure_ascii=False, indent=1) + "\n")


def prepare_corpus(work: Path, sources_dir: Path) -> tuple[list[str], dict]:
    corpus_file, report_file = work / "corpus.jsonl", work / "corpus_report.json"
    if corpus_file.is_file() and report_file.is_file():
        docs = [json.loads(line) for line in corpus_file.read_text(encoding="utf-8").splitlines()]
        return docs, json.loads(report_file.read_text(encoding="utf-8"))
    held = mini_corpus.held_out()
    docs, report = mini_corpus.build_corpus(sources_dir, held)
    report["leak_check"] = mini_corpus.leak_report(docs, held)
    if not report["leak_check"]["passed"]:
        raise TrainMiniError(f"the corpus overlaps held-out items: {report['leak_check']['examples'][:3]}")
    tmp = corpus_file.with_name("corpus.jsonl.tmp")
    tmp.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    os.replace(tmp, corpus_file)
    _write_json(report_file, report)
    return docs, report


def prepare_tokenizer(work: Path, docs: list[str], vocab_size: int, folder: Path | None = None):
    """The tokenizer trained on ``docs`` (kept in ``folder``, default ``work/tokenizer``; reused when there)."""
    from transformers import AutoTokenizer  # lazy: transformers takes seconds to import; only training needs it

    folder = folder or work / "tokenizer"
    if not (folder / "tokenizer.json").is_file():
        tok = train_bytelevel_tokenizer(docs, vocab_size=vocab_size)
        tmp = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tok.save_pretrained(tmp)
        os.replace(tmp, folder)
    return AutoTokenizer.from_pretrained(folder)


def prepare_blocks(work: Path, docs: list[str], tokenizer, seq_len: int, seed: int):
    import torch  # lazy: as in train

    path = work / "blocks.pt"
    if path.is_file():
        return torch.load(path)
    ids: list[int] = []
    for enc in tokenizer(docs, add_special_tokens=False)["input_ids"]:
        ids.extend(enc)
        ids.append(tokenizer.eos_token_id)
    n = len(ids) // (seq_len + 1)
    blocks = torch.tensor(ids[: n * (seq_len + 1)], dtype=torch.int32).view(n, seq_len + 1)
    order = list(range(n))
    random.Random(seed).shuffle(order)
    val = sorted(order[: max(1, n // VALIDATION_EVERY)])
    train = sorted(order[len(val):])
    data = {"train": blocks[train].clone(), "validation": blocks[val].clone(), "tokens": len(ids)}
    torch.save(data, path.with_name("blocks.pt.tmp"))
    os.replace(path.with_name("blocks.pt.tmp"), path)
    return data


def lr_at(step: int, s: dict) -> float:
    if step < s["warmup"]:
        return s["lr"] * (step + 1) / s["warmup"]
    progress = (step - s["warmup"]) / max(1, s["steps"] - s["warmup"])
    return s["min_lr"] + 0.5 * (s["lr"] - s["min_lr"]) * (1 + math.cos(math.pi * min(1.0, progress)))


def batch_indices(step: int, n: int, batch_size: int, seed: int) -> list[int]:
    """The blocks of one step: epochs of one seeded permutation each, so a resumed run sees the same batches."""
    per_epoch = n // batch_size
    epoch, k = divmod(step, per_epoch)
    order = list(range(n))
    random.Random(f"{seed}:{epoch}").shuffle(order)
    return order[k * batch_size : (k + 1) * batch_size]


def validation_loss(model, blocks, batch_size: int) -> float:
    import torch  # lazy: as in train

    model.eval()
    total, count = 0.0, 0
    with torch.inference_mode():
        for i in range(0, len(blocks), batch_size):
            b = blocks[i : i + batch_size].long()
            out = model(input_ids=b[:, :-1], labels=b[:, :-1])
            total += float(out.loss) * len(b)
            count += len(b)
    model.train()
    return total / max(1, count)


def train(work: Path, out: Path, sources_dir: Path, settings: dict, *, threads: int, corpus=None, tokenizer_docs=None,
          tokenizer_dir: Path | None = None, name: str = MINI_NAME, card=None, dtype: str = "float32",
          progress: bool = True) -> dict:
    """Train and export one model. The knowledge-injection runs (:mod:`.inject_train`) pass their own ``corpus``
    (a callable returning documents and report), one shared tokenizer (``tokenizer_dir``, trained on
    ``tokenizer_docs()``), a ``name``, a ``card`` writer and ``dtype`` float16."""
    import torch  # lazy: torch takes seconds to import; only training needs it

    check_settings(work, settings)
    torch.set_num_threads(threads)
    t0 = time.time()
    docs, report = corpus() if corpus else prepare_corpus(work, sources_dir)
    log.info("corpus: %s documents; leak check passed", f"{len(docs):,}")
    tok_docs = tokenizer_docs() if tokenizer_docs and not (tokenizer_dir and (tokenizer_dir / "tokenizer.json").is_file()) else docs
    tok = prepare_tokenizer(work, tok_docs, settings["vocab_size"], tokenizer_dir)
    data = prepare_blocks(work, docs, tok, settings["seq_len"], settings["seed"])
    train_blocks, val_blocks = data["train"], data["validation"]
    log.info("tokens: %s; %s training and %s validation blocks", f"{data['tokens']:,}", f"{len(train_blocks):,}", f"{len(val_blocks):,}")
    model, opt = build_model(tok, settings)
    step = resume(work, model, opt)
    params = sum(p.numel() for p in model.parameters())
    log.info("model: qwen2, %.2fM parameters; %s steps of %sx%s tokens, %s threads", params / 1e6, settings["steps"],
             settings["batch_size"], settings["seq_len"], threads)
    run_steps(work, model, opt, train_blocks, settings, step, t0=t0, progress=progress)
    losses = [json.loads(x) for x in (work / LOSS_LOG).read_text(encoding="utf-8").splitlines()]
    val = validation_loss(model, val_blocks, settings["batch_size"])
    log.info("validation loss %.3f (perplexity %.1f)", val, math.exp(val))
    record = {
        "format": FORMAT_VERSION, "name": name, "dtype": dtype, "settings": settings, "threads": threads,
        "parameters": params, "tokens": data["tokens"], "train_blocks": len(train_blocks),
        "validation_blocks": len(val_blocks), "tokens_seen": settings["steps"] * settings["batch_size"] * settings["seq_len"],
        "final_train_loss": sum(x["loss"] for x in losses[-50:]) / len(losses[-50:]),
        "validation_loss": round(val, 4), "corpus": report,
        "loss_curve": [[x["step"], x["loss"]] for x in losses],
    }
    export(model.eval().to(getattr(torch, dtype)), tok, record, out, card=card)
    return record


CHECKPOINT, LOSS_LOG = "checkpoint.pt", "loss.jsonl"  # in the work folder


def check_settings(work: Path, settings: dict) -> None:
    """A work folder holds one run: its settings are written on the first start and must match on every resume."""
    work.mkdir(parents=True, exist_ok=True)
    settings_file = work / "settings.json"
    if not settings_file.is_file():
        _write_json(settings_file, settings)
        return
    saved = json.loads(settings_file.read_text(encoding="utf-8"))
    if saved != settings:
        changed = sorted(k for k in settings if saved.get(k) != settings[k])
        raise TrainMiniError(f"{work}: holds a run with other settings ({', '.join(changed)}); "
                             "use another --work folder or remove this one")


def build_model(tok, settings: dict):
    """The seeded qwen2 model and its AdamW optimizer (no weight decay on biases and norms)."""
    import torch  # lazy: as in train

    model = build_tiny_model(
        "qwen2", tok, seed=settings["seed"], max_position_embeddings=4096,
        **{k: settings[k] for k in ("hidden_size", "intermediate_size", "num_hidden_layers",
                                    "num_attention_heads", "num_key_value_heads")})
    model.train()
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": settings["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}], lr=settings["lr"], betas=(0.9, 0.95))
    return model, opt


def resume(work: Path, model, opt) -> int:
    """The step to go on from (0, or the checkpoint's, whose weights and optimizer state are loaded); the loss log
    is cut back to it (lines written after the last save are redone)."""
    import torch  # lazy: as in train

    ckpt, loss_log = work / CHECKPOINT, work / LOSS_LOG
    step = 0
    if ckpt.is_file():
        state = torch.load(ckpt)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        step = state["step"]
        log.info("resumed at step %s", step)
    lines = loss_log.read_text(encoding="utf-8").splitlines() if loss_log.is_file() else []
    loss_log.write_text("".join(x + "\n" for x in lines[:step]), encoding="utf-8")
    return step


def run_steps(work: Path, model, opt, train_blocks, settings: dict, step: int, *, t0: float, progress: bool) -> None:
    """The optimizer steps from ``step`` to the last, each logged to the loss log, checkpointed every ``save_every``."""
    import torch  # lazy: as in train

    def save(step: int) -> None:
        tmp = work / f"{CHECKPOINT}.tmp"
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step}, tmp)
        os.replace(tmp, work / CHECKPOINT)

    with (work / LOSS_LOG).open("a", encoding="utf-8") as fh:
        while step < settings["steps"]:
            lr = lr_at(step, settings)
            for g in opt.param_groups:
                g["lr"] = lr
            b = train_blocks[batch_indices(step, len(train_blocks), settings["batch_size"], settings["seed"])].long()
            loss = model(input_ids=b[:, :-1], labels=b[:, :-1]).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            fh.write(json.dumps({"step": step, "loss": round(loss.item(), 5), "lr": lr}) + "\n")
            if step % settings["save_every"] == 0 or step == settings["steps"]:
                fh.flush()
                save(step)
                if progress:
                    log.info("step %s/%s  loss %.3f  lr %.2e  (%.0f s)", step, settings["steps"], loss.item(), lr, time.time() - t0)


def plot_loss(record: dict, path: Path) -> None:
    import matplotlib  # lazy: matplotlib takes a second to import; only the loss curve needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: matplotlib takes a second to import; only the plots need it

    steps, losses = zip(*record["loss_curve"])
    k = 20  # a moving average over k steps beside the raw curve
    smooth = [sum(losses[max(0, i - k + 1): i + 1]) / len(losses[max(0, i - k + 1): i + 1]) for i in range(len(losses))]
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    ax.plot(steps, losses, lw=0.5, alpha=0.4, label="training loss")
    ax.plot(steps, smooth, lw=1.5, label=f"mean of {k} steps")
    ax.axhline(record["validation_loss"], color="k", ls="--", lw=1, label=f"validation {record['validation_loss']:.2f}")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats/token)")
    ax.set_title(f"{record.get('name', MINI_NAME)}: {record['parameters'] / 1e6:.1f}M parameters, {record['tokens_seen'] / 1e6:.1f}M tokens")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


def check_output(out: Path, name: str = MINI_NAME, command: str = "train-mini") -> None:
    """Refuse, before any training, an ``--output`` that is the installed package (the shipped models and their
    records), a file, or a folder holding anything but an earlier export of model ``name``."""
    where = out.resolve()
    if where == PACKAGE_DIR or PACKAGE_DIR in where.parents:
        raise TrainMiniError(f"--output {out}: inside the installed package ({PACKAGE_DIR}); a shipped model is "
                             "not replaced by a training run: give a folder of your own (the default is under --work)")
    if out.exists() and not out.is_dir():
        raise TrainMiniError(f"--output {out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not _earlier_export(out, name):
        raise TrainMiniError(f"--output {out}: not empty and not a model folder written by {command} (no training.json "
                             f"of {name}); choose a new or empty folder")


def _earlier_export(out: Path, name: str) -> bool:
    try:
        return json.loads((out / "training.json").read_text(encoding="utf-8")).get("name") == name
    except (OSError, ValueError, AttributeError):
        return False


def export(model, tokenizer, record: dict, out: Path, card=None) -> None:
    """Write the model folder (weights, tokenizer, training record, loss curve, card) atomically."""
    write_card = card or write_mini_card
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    loss_curve = record.pop("loss_curve")
    _write_json(tmp / "training.json", record)
    (tmp / "loss.tsv").write_text("step\tloss\n" + "".join(f"{s}\t{v}\n" for s, v in loss_curve), encoding="utf-8")
    plot_loss({**record, "loss_curve": loss_curve}, tmp / "loss_curve.png")
    write_card(tmp)
    check_output(out, record.get("name", MINI_NAME))  # again: the folder may have changed during the run
    old = out.with_name(f".{out.name}.old")
    if out.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(out, old)  # the earlier export is removed only once the new one is in place
    os.replace(tmp, out)
    shutil.rmtree(old, ignore_errors=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--work", default="runs/ancientbench-mini", help="folder for corpus, tokenizer, checkpoints, loss log (resumable)")
    parser.add_argument("--output", "--out", dest="out", default=None,
                        help="where the finished model goes (default: <work>/model; the package's shipped folder is refused)")
    parser.add_argument("--sources", default=None, help="folder holding node_modules/chinese-poetry (default: the builders' .sources)")
    parser.add_argument("--steps", type=int, default=DEFAULTS["steps"], help="optimizer steps (default %(default)s)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads; results are reproducible for one value (default %(default)s)")
    parser.add_argument("--save-every", type=int, default=50, help="checkpoint interval in steps (default %(default)s)")
    parser.add_argument("--seed", type=int, default=DEFAULTS["seed"])
    add_no_progress(parser)


def run(args: argparse.Namespace) -> int:
    if args.steps < 1 or args.save_every < 1 or args.threads < 1:
        raise TrainMiniError("--steps, --save-every and --threads must be positive")
    settings = {**DEFAULTS, "steps": args.steps, "seed": args.seed, "save_every": args.save_every}
    out = Path(args.out) if args.out else Path(args.work) / "model"
    check_output(out)
    record = train(Path(args.work), out, Path(args.sources or DEFAULT_SOURCES_DIR), settings, threads=args.threads,
                   progress=not args.no_progress)
    print(f"wrote {out} (validation loss {record['validation_loss']:.3f}); evaluate it with --model {out}")
    return 0
