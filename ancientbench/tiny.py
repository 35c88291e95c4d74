"""Tiny random-weight causal LMs with tokenizers trained offline: the smoke model and the test models.

``--model tiny-random`` is a small Qwen2-style causal LM with random weights (fixed seed) and a ByteLevel
BPE tokenizer trained here with the ``tokenizers`` library over the CJK Unified Ideographs block, the
prompt template strings of every task and the letters A-D. It is built locally on first use (no network)
and cached under ``~/.cache/ancientbench/tiny-random-v<N>`` (``$ANCIENTBENCH_CACHE`` or ``$XDG_CACHE_HOME``
move it). Its scores are chance level by construction: it exists so the whole pipeline (prompts,
tokenisation, batching, prefix cache, results files, tables) runs for real on an offline machine.

The same factories build the tests' tiny Llama- and Qwen2-style models:

- :func:`train_bytelevel_tokenizer` - Qwen2-style ByteLevel BPE (Qwen2's NFC + split regex), no BOS, eos ``<|endoftext|>``,
  pad ``<|pad|>``, a ChatML chat template (``<|im_start|>``/``<|im_end|>``).
- :func:`train_metaspace_tokenizer` - Llama/SentencePiece-style BPE: ``▁`` marks a word start (prepended to
  the first word), ``<s>`` added as BOS, ``<unk>`` for unseen characters.
- :func:`build_tiny_model` - a random ``qwen2`` or ``llama`` ``AutoModelForCausalLM`` (default ~0.5M
  parameters for a 2k vocabulary).
- :func:`build_tiny` - tokenizer + model saved as a Hugging Face folder that ``from_pretrained`` loads.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterable, Sequence

from .errors import AncientBenchError
from .fileio import disk_full
from .han import BASIC_BLOCK
from .paths import cache_root
from .prompts import ANSWER_CUE, INSTRUCTION, QUESTION_PREFIX
from .tasks import TASKS

TINY_RANDOM_NAME = "tiny-random"
TINY_RANDOM_VERSION = "1"  # bump when the recipe below changes: a new cache folder is built

EOS = "<|endoftext|>"
PAD = "<|pad|>"
BOS = "<s>"
UNK = "<unk>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"

# A minimal ChatML template (the Qwen / Yi convention), so ``--chat`` runs on the smoke model too.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def template_corpus() -> list[str]:
    """Lines built from the prompt templates of every task (instruction, question frame, answer cue, options)."""
    lines = []
    for task in TASKS:
        lines.append(INSTRUCTION.format(subject=task.display_zh))
    lines += [QUESTION_PREFIX, ANSWER_CUE, "A. ", "B. ", "C. ", "D. ", "A", "B", "C", "D", " A", " B", " C", " D"]
    return lines


def cjk_corpus(start: int = BASIC_BLOCK[0], stop: int = BASIC_BLOCK[1] + 1) -> list[str]:
    """One string per character of a CJK block (default: the whole CJK Unified Ideographs block)."""
    return [chr(cp) for cp in range(start, stop)]


def _wrap(tok_obj, *, bos: str | None, chat_template: str | None):
    from transformers import PreTrainedTokenizerFast  # lazy: transformers costs seconds to import; only a model run needs it

    kwargs = dict(tokenizer_object=tok_obj, eos_token=EOS, pad_token=PAD, padding_side="left")
    if bos is not None:
        kwargs["bos_token"] = bos
    if UNK in tok_obj.get_vocab():
        kwargs["unk_token"] = UNK
    tok = PreTrainedTokenizerFast(**kwargs)
    if chat_template is not None:
        tok.chat_template = chat_template
    return tok


QWEN2_PRETOKENIZE_REGEX = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)


def train_bytelevel_tokenizer(
    corpus: Iterable[str] | None = None, *, vocab_size: int = 2000, repeat_templates: int = 20, chat: bool = True
):
    """A Qwen2-style ByteLevel BPE (every byte is in the alphabet, so no text is out of vocabulary).

    ``corpus`` defaults to the template lines; the template lines are always added ``repeat_templates``
    times so their frequent pieces merge first. Training is deterministic for a given corpus.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers  # lazy: only building the smoke model needs it

    tok = Tokenizer(models.BPE())
    # Qwen2's own normaliser and pre-tokeniser, so transformers' Qwen2Tokenizer (which AutoTokenizer picks
    # for a qwen2 config and which rebuilds them) tokenises exactly as trained.
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    specials = [EOS, PAD, IM_START, IM_END]
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    texts = list(corpus or []) + template_corpus() * repeat_templates
    tok.train_from_iterator(texts, trainer=trainer)
    return _wrap(tok, bos=None, chat_template=CHATML_TEMPLATE if chat else None)


def train_metaspace_tokenizer(corpus: Iterable[str] | None = None, *, vocab_size: int = 2000, repeat_templates: int = 20):
    """A Llama/SentencePiece-style BPE: ``▁`` marks word starts (also before the first word), ``<s>`` BOS is added.

    On this tokenizer ``tok("A")`` gives ``▁A`` while ``A`` after ``答案是：`` is the plain ``A`` token, the
    classic trap for letter-id lookup (haonan-li/CMMLU#11).
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers  # lazy: only building the smoke model needs it

    tok = Tokenizer(models.BPE(unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    texts = list(corpus or []) + template_corpus() * repeat_templates
    ascii_printable = {chr(c) for c in range(0x21, 0x7F)}
    alphabet = sorted({ch for t in texts for ch in t.replace(" ", "▁")} | {"▁", "\n"} | ascii_printable)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[UNK, BOS, EOS, PAD],
        initial_alphabet=alphabet,
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    bos_id = tok.token_to_id(BOS)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B", special_tokens=[(BOS, bos_id)]
    )
    return _wrap(tok, bos=BOS, chat_template=None)


def build_tiny_model(
    style: str,
    tokenizer,
    *,
    hidden_size: int = 64,
    intermediate_size: int = 128,
    num_hidden_layers: int = 2,
    num_attention_heads: int = 4,
    num_key_value_heads: int = 2,
    max_position_embeddings: int = 4096,
    seed: int = 0,
):
    """A random-weight ``qwen2`` or ``llama`` causal LM sized to the tokenizer, initialised from ``seed`` (fp32, eval mode)."""
    import torch  # lazy: torch costs seconds to import; only a model run needs it
    from transformers import AutoConfig, AutoModelForCausalLM  # lazy: transformers takes seconds to import

    if style not in ("qwen2", "llama"):
        raise ValueError(f"style must be 'qwen2' or 'llama', got {style!r}")
    config = AutoConfig.for_model(
        style,
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=num_hidden_layers,
        num_attention_heads=num_attention_heads,
        num_key_value_heads=num_key_value_heads,
        max_position_embeddings=max_position_embeddings,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    # Random init draws from torch's global generator: fork it so the caller's RNG state is untouched.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    return model.eval()


def build_tiny(
    folder: str | Path,
    style: str = "qwen2",
    *,
    corpus: Sequence[str] | None = None,
    vocab_size: int = 2000,
    seed: int = 0,
    tokenizer=None,
    **model_kwargs,
) -> Path:
    """Train a tokenizer (ByteLevel for qwen2, Metaspace+BOS for llama) unless given, build the model, save both."""
    folder = Path(folder)
    if tokenizer is None:
        if style == "llama":
            tokenizer = train_metaspace_tokenizer(corpus, vocab_size=vocab_size)
        else:
            tokenizer = train_bytelevel_tokenizer(corpus, vocab_size=vocab_size)
    model = build_tiny_model(style, tokenizer, seed=seed, **model_kwargs)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder




def tiny_random_path(cache_dir: str | Path | None = None) -> Path:
    """The folder of the built-in smoke model, building it on first use (about 10 s on 2 CPU cores, offline).

    Built into a temporary sibling folder and renamed into place, so concurrent processes (multi-process
    evaluation) never see a half-written model.
    """
    root = Path(cache_dir) if cache_dir is not None else cache_root()
    target = root / f"{TINY_RANDOM_NAME}-v{TINY_RANDOM_VERSION}"
    if (target / "config.json").is_file():
        return target
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{TINY_RANDOM_NAME}-", dir=root))
    except OSError as err:
        raise AncientBenchError(f"cannot write the model cache {root} ({err.strerror or err}); set ANCIENTBENCH_CACHE "
                                f"(or XDG_CACHE_HOME) to a writable folder") from None
    try:
        with disk_full(target):
            tokenizer = train_bytelevel_tokenizer(cjk_corpus(), vocab_size=24000)
            build_tiny(tmp, "qwen2", tokenizer=tokenizer, seed=0, hidden_size=64, intermediate_size=256,
                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32768)
        try:
            tmp.rename(target)
        except OSError:
            if not (target / "config.json").is_file():  # another process won the race only if target is complete
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


# ------------------------------------------------------------------------------------------------------
# ``ancientbench tiny-model DIR``


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def add_arguments(parser) -> None:
    parser.add_argument("out", metavar="DIR", help="folder to write the model into (must not exist, or be empty)")


def run(args) -> int:
    """Copy the built-in smoke model (built offline on first use) to DIR as a standard Hugging Face folder, for
    trying lm-eval, a local server (`transformers serve DIR`) or `ancientbench eval --model DIR`."""
    out = Path(args.out).expanduser()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise AncientBenchError(f"{out}: exists and is not an empty folder; choose a new folder")
    src = tiny_random_path()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))  # copied whole, then moved into place
    try:
        for path in sorted(src.rglob("*")):
            rel = path.relative_to(src)
            if path.is_dir():
                (tmp / rel).mkdir()
                continue
            with disk_full(out / rel):
                shutil.copyfile(path, tmp / rel)
        tmp.chmod(0o777 & ~_umask())
        os.replace(tmp, out)  # onto a missing or empty folder: the model appears whole or not at all
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"wrote {TINY_RANDOM_NAME} (random weights, a smoke model, scores at chance) to {out}: {', '.join(sorted(p.name for p in out.iterdir()))}")
    return 0
