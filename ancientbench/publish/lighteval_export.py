"""``ancientbench export-lighteval DIR``: a lighteval (0.13) custom-task module for AncientBench.

Writes ``DIR/ancientbench_lighteval.py`` with one task per config, ``ancientbench:<task>``, and (for local data) a
copy of the task files in ``DIR/data/<task>/`` with a ``DIR/data/README.md`` that declares one ``datasets`` config
per task, so lighteval's ``load_dataset(path, name)`` reads them; with ``--hub-id ORG/NAME`` the tasks read that
Hub dataset repository (published with ``ancientbench push-to-hub``) instead. The module is self-contained: it
imports lighteval, not ancientbench, so it runs in lighteval's own environment. Run it with::

    lighteval accelerate "model_name=MODEL" "ancientbench:radical|5,ancientbench:cloze|5" \\
        --custom-tasks DIR/ancientbench_lighteval.py

Scoring: lighteval's ``loglikelihood_acc`` over the four continuations ``A``..``D`` (bare letters, the paper's
convention; ``--letter-style space`` writes ``" A"``). A single-token continuation's log-likelihood is the
next-token log-probability of that letter, so the argmax is the paper's letter-logit prediction.

Two differences of lighteval's design, corrected here (see docs/harnesses.md):

- lighteval writes a few-shot exemplar as ``query + " " + gold`` and joins the parts with a blank line, so its
  own exemplars read ``答案是： A`` where the paper has ``答案是：A``. The module therefore writes the whole
  prompt itself - instruction, the first k ``dev`` exemplars in order, the question - as
  :mod:`ancientbench.prompts` does, and hands lighteval no exemplar of its own. ``k`` is the number the user
  gives (``task|k``): lighteval sets it on its copy of the task config, and the config re-binds the prompt.
- lighteval tokenises the context and each continuation separately (``tok_encode_pair(..., pairwise=True)``
  in its batch loop). That equals the paper's boundary tokenisation only when the letter alone encodes to the
  same single token as after ``答案是：`` - true for byte-level BPE tokenizers (Qwen, GPT-2, Llama 3), false
  for SentencePiece/Metaspace ones that prepend ``▁`` to a text's first word (Llama 2, Mistral): there
  lighteval scores ``▁A``, a different token. A custom-task module cannot change this; it is stated in the docs.

A generate form (``ancientbench_gen:<task>``: the same prompt, generation, the letter read by the
``answer_letter`` metric with AncientBench's extraction rules) is written beside the letter form.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from ..argtypes import add_export_arguments
from ..evaluation import extract
from ..paths import DATASET_PATH
from ..prompts import EXEMPLAR_SEPARATOR, QUESTION_TEMPLATE, TEMPLATE_SHA256, TEMPLATE_VERSION, instruction
from ..schema import split_file
from ..tasks import LETTERS
from .exporting import checked_letter_prefix, present_tasks, run_export

MODULE_NAME = "ancientbench_lighteval.py"
LAUNCHER_NAME = "run_lighteval.py"
TASK_PREFIX = "ancientbench:"
GEN_PREFIX = "ancientbench_gen:"


def data_readme(tasks: list[str]) -> str:
    """``datasets``' folder metadata: one config per task with its test and dev files."""
    lines = ["---", "configs:"]
    for t in tasks:
        lines += [f"- config_name: {t}", "  data_files:"]
        lines += [f"  - split: {s}\n    path: {t}/{s}.jsonl" for s in ("test", "dev")]
    return "\n".join(lines + ["---", "AncientBench task files copied by an ancientbench export.", ""])


def copy_data(folder: Path, out: Path, tasks: list[str]) -> None:
    """Copy each task's test and dev files to ``out/data/<task>/`` with the folder's config README; drop others."""
    data = out / "data"
    for old in data.iterdir() if data.is_dir() else ():
        if old.is_dir() and old.name not in tasks:
            shutil.rmtree(old)
    for t in tasks:
        for split in ("test", "dev"):
            target = split_file(out, t, split)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(split_file(folder, t, split), target)
    (data / "README.md").write_text(data_readme(tasks), encoding="utf-8")


def prompt_constants(tasks: list[str], letter_style: str) -> dict:
    """The prompt pieces of :mod:`ancientbench.prompts` the module needs, as plain data."""
    prefix = checked_letter_prefix(letter_style)
    return {
        "LETTERS": list(LETTERS),
        "LETTER_PREFIX": prefix,
        "LETTER_STYLE": letter_style,
        "QUESTION": QUESTION_TEMPLATE,
        "EXEMPLAR_SEPARATOR": EXEMPLAR_SEPARATOR,
        "INSTRUCTIONS": {t: instruction(t) for t in tasks},
        "TEMPLATE_VERSION": TEMPLATE_VERSION,
        "TEMPLATE_SHA256": TEMPLATE_SHA256,
    }


def extractor_source() -> str:
    """The generate form's letter extraction: ancientbench's own rules (:mod:`ancientbench.evaluation.extract`),
    its source text with the one package import replaced, so the module needs no ancientbench install."""
    src = Path(extract.__file__).read_text(encoding="utf-8")
    src = src.replace("from ..tasks import LETTERS\n", "LETTERS = ('A', 'B', 'C', 'D')\n")
    src = src.replace("from __future__ import annotations\n", "")
    return src.split('"""', 2)[2]  # without its module docstring


def module_source(tasks: list[str], hub_id: str | None, letter_style: str) -> str:
    consts = prompt_constants(tasks, letter_style)
    head = "\n".join(f"{k} = {v!r}" for k, v in consts.items())
    return (MODULE_TEMPLATE.replace("@CONSTANTS@", head + f"\nHUB_ID = {hub_id!r}\nTASKS = {tasks!r}")
            .replace("@EXTRACT@", extractor_source()))


def export(out_dir: str | Path, *, data: str | Path | None = None, hub_id: str | None = None,
           letter_style: str = "bare", tasks: list[str] | None = None) -> dict:
    """Write the module (and, for local data, the data copy); returns ``{"module", "data" (None for the Hub), "tasks"}``."""
    folder = Path(data or DATASET_PATH)
    present = present_tasks(folder, hub_id, tasks)
    source = module_source(present, hub_id, letter_style)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = {"module": out / MODULE_NAME, "launcher": out / LAUNCHER_NAME, "data": None if hub_id else out / "data",
               "tasks": present}
    if hub_id:
        if (out / "data").is_dir():
            shutil.rmtree(out / "data")
    else:
        copy_data(folder, out, present)
    written["module"].write_text(source, encoding="utf-8")
    written["launcher"].write_text(LAUNCHER_SOURCE, encoding="utf-8")
    return written


LAUNCHER_SOURCE = '''"""lighteval's own CLI (`lighteval ...`, same arguments) with only the --custom-tasks registered.

Written by `ancientbench export-lighteval`. lighteval 0.13.0 imports every built-in task module at start, and
two of them reach the network on import: tasks/tiny_benchmarks.py downloads tinyBenchmarks.pkl from
raw.githubusercontent.com, and mt_bench/mix_eval call HfApi().list_models(model_name=...) (which also raises
TypeError on huggingface_hub >= 1.0). So `lighteval accelerate ...` fails offline and with current
huggingface_hub. This launcher skips the built-in task modules; evaluation, scoring and output are lighteval's.

    python run_lighteval.py accelerate "model_name=MODEL" "ancientbench:radical|5" --custom-tasks ancientbench_lighteval.py
"""

import sys

from lighteval.tasks.registry import Registry

Registry._load_from_files = staticmethod(lambda files, module_prefix: {})
Registry._load_from_subdirs = staticmethod(lambda subdirs: {})

from lighteval.__main__ import app  # noqa: E402  (after the registry is narrowed)

if __name__ == "__main__":
    sys.exit(app())
'''


MODULE_TEMPLATE = '''"""AncientBench for lighteval: written by `ancientbench export-lighteval`; do not edit (export again).

Tasks ancientbench:<task> (letter form: loglikelihood of the answer letters, the paper's scoring) and
ancientbench_gen:<task> (generate form: the letter extracted from the answer). Run:

    lighteval accelerate "model_name=MODEL" "ancientbench:radical|5" --custom-tasks ancientbench_lighteval.py

The prompt (exemplars included) is written here, as `ancientbench eval` writes it; see the docstring of
ancientbench/publish/lighteval_export.py for the two differences of lighteval's design this corrects or names.
"""

import functools
import json
from pathlib import Path

import numpy as np
from lighteval.metrics.metrics import Metrics
from lighteval.metrics.metrics_sample import SampleLevelComputation
from lighteval.metrics.utils.metric_utils import SampleLevelMetric
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc, SamplingMethod

@CONSTANTS@
HERE = Path(__file__).resolve().parent
GENERATION_SIZE = 1024  # `ancientbench eval --mode generate`'s default answer budget


@functools.lru_cache(maxsize=None)
def dev_rows(task):
    """The task's dev split in file order (its first k rows are the k exemplars)."""
    if HUB_ID:
        import datasets

        return tuple(datasets.load_dataset(HUB_ID, task, split="dev"))
    text = (HERE / "data" / task / "dev.jsonl").read_text(encoding="utf-8")
    return tuple(json.loads(line) for line in text.splitlines() if line.strip())


def question_block(row):
    return QUESTION.format(question=row["question"], A=row["A"], B=row["B"], C=row["C"], D=row["D"])


def prompt_text(task, row, shots):
    exemplars = dev_rows(task)[:shots]
    if len(exemplars) < shots:
        raise ValueError(f"{task}: {shots} shots asked, the dev split has {len(exemplars)} rows")
    shots_text = "".join(question_block(e) + LETTER_PREFIX + e["answer"] + EXEMPLAR_SEPARATOR for e in exemplars)
    return INSTRUCTIONS[task] + shots_text + question_block(row)


def ancientbench_prompt(line, task_name, task=None, shots=0):
    """One test row as a Doc whose query is the whole prompt; lighteval's own exemplars are switched off."""
    if line.get("__few_shots"):
        return None  # lighteval would write these as `query + " " + gold`; the exemplars are in the query
    return Doc(
        task_name=task_name,
        query=prompt_text(task, line, shots),
        choices=[LETTER_PREFIX + letter for letter in LETTERS],
        gold_index=LETTERS.index(line["answer"]),
        specific={"id": line["id"], "options": [line[letter] for letter in LETTERS]},
    )


class AncientBenchTaskConfig(LightevalTaskConfig):
    """lighteval sets the shot count of `task|k` on its copy of the config; the prompt is re-bound to it."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name == "num_fewshots":
            prompt = functools.partial(ancientbench_prompt, task=self.hf_subset, shots=int(value))
            super().__setattr__("prompt_function", prompt)


# ---- the generate form's letter extraction: ancientbench.evaluation.extract, copied at export time ----
@EXTRACT@
# ---- end of the copied extraction rules ----


class AnswerLetter(SampleLevelComputation):
    """1 when the letter read from the generated answer is the gold letter; an unreadable answer is wrong."""

    def compute(self, doc, model_response, **kwargs):
        text = model_response.final_text[0] if model_response.final_text else ""
        letter, _rule = extract_letter(text, doc.specific["options"])
        return float(letter is not None and letter == LETTERS[doc.gold_index])


answer_letter = SampleLevelMetric(
    metric_name="answer_letter",
    higher_is_better=True,
    category=SamplingMethod.GENERATIVE,
    sample_level_fn=AnswerLetter(),
    corpus_level_fn=np.mean,
)


def task_config(prefix, task, metric, **generation):
    source = HUB_ID or str(HERE / "data")
    return AncientBenchTaskConfig(
        name=prefix + task,
        prompt_function=functools.partial(ancientbench_prompt, task=task, shots=0),
        hf_repo=source,
        hf_subset=task,
        hf_avail_splits=["test", "dev"],
        evaluation_splits=["test"],
        few_shots_split="dev",
        few_shots_select="sequential",
        metrics=[metric],
        version=1,
        **generation,
    )


TASKS_TABLE = [task_config("ancientbench:", t, Metrics.loglikelihood_acc) for t in TASKS] + [
    task_config("ancientbench_gen:", t, answer_letter, generation_size=GENERATION_SIZE, stop_sequence=[])
    for t in TASKS
]
'''


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_export_arguments(p, "folder to write ancientbench_lighteval.py (and the data copy) into")


def run(args: argparse.Namespace) -> int:
    return run_export(
        args, lambda: export(args.out_dir, data=args.data, hub_id=args.hub_id, letter_style=args.letter_style, tasks=args.tasks),
        tasks=lambda written: written["tasks"],
        wrote=lambda written, tasks: f"wrote {written['module']} with {len(tasks)} tasks (letter form {TASK_PREFIX}<task>, "
                                     f"generate form {GEN_PREFIX}<task>)",
        how_to_run=lambda written, tasks: f'run: python {written["launcher"]} accelerate "model_name=MODEL,override_chat_template=false" '
                                          f'"{TASK_PREFIX}{tasks[0]}|5" --custom-tasks {written["module"]}   (or `lighteval accelerate ...` '
                                          'where it starts: see docs/harnesses.md)')
