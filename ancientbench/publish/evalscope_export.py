"""``ancientbench export-evalscope DIR``: an EvalScope (1.14) custom benchmark for AncientBench.

Writes ``DIR/ancientbench_evalscope.py``, which registers the benchmark ``ancientbench`` (one subset per task) when
imported, and a copy of the task files as ``DIR/data/<task>_{test,dev}.jsonl`` (EvalScope's local file layout);
with ``--hub-id ORG/NAME`` the benchmark reads that Hugging Face dataset repository (``dataset_hub="huggingface"``)
instead. The module imports EvalScope, not ancientbench. Run it from Python::

    import ancientbench_evalscope  # registers "ancientbench"
    from evalscope import TaskConfig, run_task
    run_task(TaskConfig(model="MODEL", eval_type="llm_ckpt", datasets=["ancientbench"],
                        model_args={"chat_template": ancientbench_evalscope.PLAIN_CHAT_TEMPLATE},
                        dataset_args={"ancientbench": {"few_shot_num": 5}}))

What EvalScope lacks for the paper's scoring, and the closest faithful form shipped (marked ``CLOSEST_FORM`` in
the module): EvalScope 1.x has no log-likelihood request; a benchmark gets one ``generate`` call per item. So the
adapter generates one token greedily with ``logprobs`` and ``top_logprobs`` and reads the four letters' next-token
log-probabilities from them; the prediction is the letter with the highest one. For a local checkpoint
(``llm_ckpt``) ``top_logprobs`` is the whole vocabulary, so all four log-probabilities are there and the letter is
the paper's argmax. For an API model the server caps ``top_logprobs`` (20 for OpenAI-style APIs): the argmax is
still exact whenever any letter is among them (the best letter then is too); otherwise the item has no letter and
counts as wrong, never guessed. The letter is matched by its token text (``A``), which for byte-level BPE and
SentencePiece tokenizers alike is the bare-letter token the paper scores.

Two more differences of EvalScope's design, corrected: it always renders the tokenizer's chat template (and
writes ``user: ...`` when there is none), so the paper's plain prompt needs ``model_args={"chat_template": PLAIN_CHAT_TEMPLATE}``
(the user content verbatim; leave it out to score after the model's template, as ``ancientbench eval --chat``);
and its own few-shot block and prompt templates are replaced by the prompt of :mod:`ancientbench.prompts`, with
the first k ``dev`` rows in file order (``few_shot_random=True`` is refused).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from ..argtypes import add_export_arguments
from ..paths import DATASET_PATH
from ..schema import split_file
from .exporting import present_tasks, run_export
from .lighteval_export import prompt_constants

MODULE_NAME = "ancientbench_evalscope.py"
BENCHMARK = "ancientbench"


def copy_data(folder: Path, out: Path, tasks: list[str]) -> None:
    """The test and dev files as ``out/data/<task>_<split>.jsonl``; other files of ours there are removed."""
    data = out / "data"
    if data.is_dir():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    for t in tasks:
        for split in ("test", "dev"):
            shutil.copyfile(split_file(folder, t, split), data / f"{t}_{split}.jsonl")


def module_source(tasks: list[str], hub_id: str | None) -> str:
    consts = prompt_constants(tasks, "bare")
    consts.pop("LETTER_STYLE")
    head = "\n".join(f"{k} = {v!r}" for k, v in consts.items())
    return MODULE_TEMPLATE.replace("@CONSTANTS@", head + f"\nHUB_ID = {hub_id!r}\nTASKS = {tasks!r}")


def export(out_dir: str | Path, *, data: str | Path | None = None, hub_id: str | None = None,
           tasks: list[str] | None = None) -> dict:
    """Write the module (and, for local data, the data copy); returns ``{"module", "data" (None for the Hub), "tasks"}``."""
    present = present_tasks(Path(data or DATASET_PATH), hub_id, tasks)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if hub_id:
        if (out / "data").is_dir():
            shutil.rmtree(out / "data")
    else:
        copy_data(Path(data or DATASET_PATH), out, present)
    (out / MODULE_NAME).write_text(module_source(present, hub_id), encoding="utf-8")
    return {"module": out / MODULE_NAME, "data": None if hub_id else out / "data", "tasks": present}


MODULE_TEMPLATE = '''"""AncientBench for EvalScope: written by `ancientbench export-evalscope`; do not edit (export again).

Importing this module registers the benchmark "ancientbench" (subsets: the tasks). Run:

    import ancientbench_evalscope
    from evalscope import TaskConfig, run_task
    run_task(TaskConfig(model="MODEL", eval_type="llm_ckpt", datasets=["ancientbench"],
                        model_args={"chat_template": ancientbench_evalscope.PLAIN_CHAT_TEMPLATE},
                        dataset_args={"ancientbench": {"few_shot_num": 5}}))

CLOSEST_FORM: EvalScope has no log-likelihood request. Each item is one greedy generation of one token with
logprobs; the prediction is the letter A-D with the highest next-token log-probability among the returned
top_logprobs (the whole vocabulary for a local checkpoint, so the paper's argmax exactly; capped by the server for
API models: exact whenever any letter is among them, else no letter, counted wrong). See the docstring of
ancientbench/publish/evalscope_export.py and docs/harnesses.md.
"""

import math
from pathlib import Path

from evalscope.api.benchmark import BenchmarkMeta, DefaultDataAdapter
from evalscope.api.dataset import Sample
from evalscope.api.model import GenerateConfig
from evalscope.api.registry import register_benchmark

@CONSTANTS@
HERE = Path(__file__).resolve().parent
CLOSEST_FORM = "one-token generation with top_logprobs; argmax over the letters' next-token log-probabilities"
# renders the user turn verbatim: the paper's plain prompt (EvalScope otherwise applies the model's chat template)
PLAIN_CHAT_TEMPLATE = "{% for message in messages %}{{ message['content'] }}{% endfor %}"
API_TOP_LOGPROBS = 20  # the cap of OpenAI-style APIs


def question_block(row):
    return QUESTION.format(question=row["question"], A=row["A"], B=row["B"], C=row["C"], D=row["D"])


def prompt_text(task, row, exemplars):
    shots = "".join(question_block(e) + LETTER_PREFIX + e["answer"] + EXEMPLAR_SEPARATOR for e in exemplars)
    return INSTRUCTIONS[task] + shots + question_block(row)


def top_logprobs_for(model):
    """The whole vocabulary for a local checkpoint, the API cap otherwise."""
    config = getattr(getattr(getattr(model, "api", None), "model", None), "config", None)
    vocab = getattr(getattr(config, "get_text_config", lambda: config)(), "vocab_size", None)
    return int(vocab) if vocab else API_TOP_LOGPROBS


def letter_logprobs(output):
    """{letter: log-probability} of the first generated token's top_logprobs (letters absent there are left out)."""
    try:
        top = output.choices[0].logprobs.content[0].top_logprobs or []
    except (AttributeError, IndexError, TypeError):
        return {}
    found = {}
    for entry in top:
        if entry.token in LETTERS and entry.token not in found:
            found[entry.token] = float(entry.logprob)
    return found


@register_benchmark(
    BenchmarkMeta(
        name="ancientbench",
        pretty_name="AncientBench",
        dataset_id=HUB_ID or str(HERE / "data"),
        subset_list=list(TASKS),
        metric_list=["acc"],
        few_shot_num=0,
        few_shot_random=False,
        train_split="dev",
        eval_split="test",
        prompt_template="{question}",
        description="AncientBench: ancient-Chinese comprehension, ten 4-option tasks (letter scoring, " + CLOSEST_FORM + ")",
        tags=["Knowledge", "MCQ", "Chinese"],
    )
)
class AncientBenchAdapter(DefaultDataAdapter):
    """The prompt of `ancientbench eval` (exemplars: the first k dev rows in file order); the letter from logprobs."""

    def load(self):
        if HUB_ID is None:
            return self.load_from_disk(use_local_loader=True)  # data/<task>_<split>.jsonl beside this file
        return super().load()

    def record_to_sample(self, record):
        fields = ("id", "question", *LETTERS, "answer")
        return Sample(input=record["question"], choices=[record[x] for x in LETTERS], target=record["answer"],
                      metadata={k: record[k] for k in fields})

    def process_sample_input(self, sample, subset):
        if self.few_shot_random:
            raise ValueError("ancientbench: the exemplars are the first k dev rows; leave few_shot_random False")
        shots = self.few_shot_num
        exemplars = [s.metadata for s in self.fewshot_dataset[subset]][:shots] if shots else []
        if len(exemplars) < shots:
            raise ValueError(f"{subset}: {shots} shots asked, the dev split has {len(exemplars)} rows")
        return prompt_text(subset, sample.metadata, exemplars)

    def _on_inference(self, model, sample):
        config = GenerateConfig(max_tokens=1, do_sample=False, logprobs=True, top_logprobs=top_logprobs_for(model))
        output = model.generate(input=sample.input, tools=sample.tools, config=config)
        if letter_logprobs(output):  # keep the letters' entries only: the predictions file stays small
            content = output.choices[0].logprobs.content[0]
            content.top_logprobs = [t for t in content.top_logprobs if t.token in LETTERS]
        return output

    def extract_answer(self, prediction, task_state):
        letters = letter_logprobs(task_state.output)
        if not letters:
            return ""  # no letter among the returned log-probabilities: wrong, never guessed
        return max(LETTERS, key=lambda x: letters.get(x, -math.inf))
'''


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_export_arguments(p, "folder to write ancientbench_evalscope.py (and the data copy) into", letter_style=False, hub_help="read the data from this Hugging Face dataset repository instead (dataset_hub='huggingface')")


def run(args: argparse.Namespace) -> int:
    return run_export(
        args, lambda: export(args.out_dir, data=args.data, hub_id=args.hub_id, tasks=args.tasks),
        tasks=lambda written: written["tasks"],
        wrote=lambda written, tasks: f"wrote {written['module']}: benchmark {BENCHMARK!r} with {len(tasks)} subsets ({', '.join(tasks)})",
        how_to_run=lambda written, tasks: how_to_run(written["module"].parent, args.hub_id))


def how_to_run(folder: Path, hub_id: str | None) -> str:
    hub = ', dataset_hub="huggingface"' if hub_id else ""
    return (f"run (Python, with {folder} on sys.path): import ancientbench_evalscope as ab; "
            f"from evalscope import TaskConfig, run_task; run_task(TaskConfig(model=MODEL, eval_type='llm_ckpt', "
            f"datasets=['ancientbench'], model_args={{'chat_template': ab.PLAIN_CHAT_TEMPLATE}}{hub}, "
            f"dataset_args={{'ancientbench': {{'few_shot_num': 5}}}}))")
