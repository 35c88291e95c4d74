"""``ancientbench export-opencompass DIR``: OpenCompass (0.5.x) dataset configs and summarizer for AncientBench.

Writes, into ``DIR``:

- ``datasets/ancientbench_<task>_<form>_<k>shot.py``: one OpenCompass dataset config per task, form and number of
  shots (variable ``ancientbench_<task>_<form>_<k>shot_datasets``), and ``datasets/ancientbench_<form>_<k>shot.py``
  with every task (``ancientbench_<form>_<k>shot_datasets``); ``k`` is 0 or 5 (the task's five ``dev`` exemplars,
  in order: ``FixKRetriever``).
- ``summarizers/ancientbench.py``: OpenCompass's ``DefaultSummarizer`` with the paper's aggregation as summary
  groups: task accuracy -> competency (``ancientbench-<competency>-<form>-<k>shot``, the unweighted mean of its
  tasks) -> average (``ancientbench-<form>-<k>shot``, the unweighted mean of the four competencies).
- ``ancientbench_opencompass.py``: the dataset loader (``data/<task>/{test,dev}.jsonl`` beside it, or a Hub
  dataset repository with ``--hub-id``) and the generate form's evaluator, which reads the letter with
  :mod:`ancientbench.evaluation.extract`'s rules (its source is written into ``ancientbench_extract.py``).

The two forms:

- ``ppl`` (the letter form): OpenCompass's ``PPLInferencer`` over four label templates, the prompt of
  :mod:`ancientbench.prompts` followed by the bare letter (``A``..``D``), as OpenCompass's own C-Eval / CMMLU
  ``*_ppl`` configs do. OpenCompass scores each whole sequence (prompt + letter) by its mean token loss and picks
  the lowest; the prompt is the same for all four labels and each letter is one token after it, so the lowest
  mean loss is the highest letter log-probability: the same letter as ``ancientbench eval`` (tests/
  test_harness_opencompass.py checks it item by item). What differs: OpenCompass exposes the whole sequence's
  mean loss (``PPL``), not the letter's log-probability; ``N * (PPL_X - PPL_Y)`` is ``logp(Y) - logp(X)``.
- ``gen``: ``GenInferencer`` on the same prompt; a chat model (OpenCompass ``hf_type chat``) renders it as one user
  turn with its chat template, as ``ancientbench eval --mode generate`` does; the evaluator extracts the letter
  (an answer no rule reads is wrong and counted in ``extraction_failure_rate``, never guessed).

Run: ``PYTHONPATH=DIR opencompass --config-dir DIR --datasets ancientbench_ppl_5shot --summarizer ancientbench
--hf-type base --hf-path MODEL`` (``PYTHONPATH`` so OpenCompass's workers import ``ancientbench_opencompass``).
"""

from __future__ import annotations

import argparse
import inspect
import shutil
from pathlib import Path

from .. import __version__
from ..argtypes import add_export_arguments
from ..evaluation import extract
from ..evaluation.settings import DEFAULT_MAX_NEW_TOKENS
from ..fileio import atomic_write
from ..paths import DATASET_PATH
from ..prompts import EXEMPLAR_SEPARATOR, QUESTION_TEMPLATE, TEMPLATE_SHA256, TEMPLATE_VERSION, instruction, letter_prefix
from ..schema import split_file
from ..tasks import COMPETENCIES, COMPETENCY_TASKS, LETTERS, TASK_NAMES, get_task, resolve_tasks
from .exporting import ExportError, checked_letter_prefix, present_tasks, run_export

FORMS = ("ppl", "gen")
SHOTS = (0, 5)
SUMMARIZER = "ancientbench"
SUPPORT_MODULE = "ancientbench_opencompass"
EXTRACT_MODULE = "ancientbench_extract"
PREFIX = "ancientbench"

SUPPORT_SOURCE = '''"""AncientBench for OpenCompass: the dataset loader and the generate form's evaluator.

Written by `ancientbench export-opencompass`; the data lie in data/<task>/ beside this file unless a config names a
Hub dataset repository.
"""

import json
from pathlib import Path

from datasets import Dataset, DatasetDict
from opencompass.datasets.base import BaseDataset
from opencompass.openicl.icl_evaluator import BaseEvaluator

from ancientbench_extract import extract_letter

HERE = Path(__file__).resolve().parent


def _read(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


class AncientBenchDataset(BaseDataset):
    """Splits ``test`` and ``dev`` of one task: ``path`` is ``data`` (the copy beside this file) or a Hub id."""

    @staticmethod
    def load(path, name, **_kwargs):
        if (HERE / path / name).is_dir():
            return DatasetDict({s: Dataset.from_list(_read(HERE / path / name / f"{s}.jsonl")) for s in ("test", "dev")})
        import datasets

        loaded = datasets.load_dataset(path, name)
        return DatasetDict(test=loaded["test"], dev=loaded["dev"])


class AncientBenchExtractEvaluator(BaseEvaluator):
    """Accuracy of the letters read from generated answers (ancientbench's rules); unreadable answers are wrong."""

    def score(self, predictions, references, test_set):
        if len(predictions) != len(references):
            return {"error": "predictions and references have different lengths"}
        details, correct, failed = [], 0, 0
        for text, gold, row in zip(predictions, references, test_set):
            letter, rule = extract_letter(text, row)
            correct += letter == gold
            failed += letter is None
            details.append({"id": row["id"], "pred": letter, "rule": rule, "answer": gold, "correct": letter == gold})
        n = max(len(predictions), 1)
        return {"accuracy": 100 * correct / n, "extraction_failure_rate": 100 * failed / n, "details": details}
'''


def dataset_abbr(task: str, form: str, shots: int) -> str:
    return f"{PREFIX}-{task}-{form}-{shots}shot"


def group_abbr(form: str, shots: int, competency: str | None = None) -> str:
    return f"{PREFIX}-{competency}-{form}-{shots}shot" if competency else f"{PREFIX}-{form}-{shots}shot"


def _templates(task: str, form: str, letter_style: str) -> tuple[dict | str, dict | str]:
    """(ice template, prompt template) in OpenCompass's string syntax: ``{column}`` fields, ``</E>`` for exemplars."""
    block = QUESTION_TEMPLATE.format(question="{question}", A="{A}", B="{B}", C="{C}", D="{D}")
    lead = letter_prefix(letter_style)
    head = instruction(task) + "</E>"
    ice = block + lead + "{answer}" + EXEMPLAR_SEPARATOR
    if form == "gen":
        return ice, head + block
    return ice, {x: head + block + lead + x for x in LETTERS}


def dataset_config(task: str, form: str, shots: int, *, hub_id: str | None = None, letter_style: str = "bare") -> dict:
    """One OpenCompass dataset entry; class names are strings here, written as imported names by :func:`render`."""
    get_task(task)
    if form not in FORMS or shots not in SHOTS:
        raise ExportError(f"form must be one of {FORMS} and shots one of {SHOTS}, got {form!r}, {shots!r}")
    ice, prompt = _templates(task, form, letter_style)
    if shots:  # the dev exemplars in order, each already ending in its blank line: no separators of OpenCompass's
        retriever = {"type": "FixKRetriever", "fix_id_list": list(range(shots)), "ice_separator": "", "ice_eos_token": ""}
    else:
        retriever = {"type": "ZeroRetriever"}
    if form == "ppl":
        inferencer = {"type": "PPLInferencer"}
        evaluator = {"type": "AccEvaluator"}
    else:
        inferencer = {"type": "GenInferencer", "max_out_len": DEFAULT_MAX_NEW_TOKENS}
        evaluator = {"type": "AncientBenchExtractEvaluator"}
    return {
        "abbr": dataset_abbr(task, form, shots),
        "type": "AncientBenchDataset",
        "path": hub_id or "data",
        "name": task,
        "reader_cfg": {"input_columns": ["question", "A", "B", "C", "D"], "output_column": "answer",
                       "train_split": "dev", "test_split": "test"},
        "infer_cfg": {
            "ice_template": {"type": "PromptTemplate", "template": ice},
            "prompt_template": {"type": "PromptTemplate", "template": prompt, "ice_token": "</E>"},
            "retriever": retriever,
            "inferencer": inferencer,
        },
        "eval_cfg": {"evaluator": evaluator},
        "ancientbench": {"prompt_template": TEMPLATE_VERSION, "prompt_template_sha256": TEMPLATE_SHA256,
                         "letter_style": letter_style, "shots": shots, "form": form},
    }


IMPORTS = {
    "PromptTemplate": "opencompass.openicl.icl_prompt_template",
    "FixKRetriever": "opencompass.openicl.icl_retriever",
    "ZeroRetriever": "opencompass.openicl.icl_retriever",
    "PPLInferencer": "opencompass.openicl.icl_inferencer",
    "GenInferencer": "opencompass.openicl.icl_inferencer",
    "AccEvaluator": "opencompass.openicl.icl_evaluator",
    "AncientBenchDataset": SUPPORT_MODULE,
    "AncientBenchExtractEvaluator": SUPPORT_MODULE,
}


def _py(value, indent: int = 0) -> str:
    """Python source of a config value; ``{"type": "Name"}`` is written as the imported class ``Name``."""
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        named = all(isinstance(k, str) and k.isidentifier() for k in value)
        items = [f"{pad}{k}={v}," if k == "type" and v in IMPORTS else
                 f"{pad}{k}={_py(v, indent + 4)}," if named else f"{pad}{k!r}: {_py(v, indent + 4)},"
                 for k, v in value.items()]
        opening, closing = ("dict(", ")") if named else ("{", "}")
        return opening + "\n" + "\n".join(items) + "\n" + " " * indent + closing
    if isinstance(value, list):
        return "[" + ", ".join(_py(v, indent) for v in value) + "]"
    return repr(value)


def render(variable: str, configs: list[dict]) -> str:
    """An OpenCompass config file defining ``variable`` (a list of dataset entries) with its imports."""
    used = sorted({name for name in IMPORTS if any(f"={name}," in _py(c) for c in configs)})
    modules: dict[str, list[str]] = {}
    for name in used:
        modules.setdefault(IMPORTS[name], []).append(name)
    head = f"# Written by `ancientbench export-opencompass` (ancientbench {__version__}); regenerate rather than edit.\n"
    head += "".join(f"from {m} import {', '.join(names)}\n" for m, names in modules.items())
    text = f"{variable} = [\n" + "".join(f"    {_py(c, 4)},\n" for c in configs) + "]\n"
    return head + "\n" + text


def summarizer_config(tasks: list[str]) -> dict:
    """The DefaultSummarizer config: per form and shots, competencies over their tasks, the average over those."""
    groups, rows = [], []
    for form in FORMS:
        for shots in SHOTS:
            comps = []
            for comp in COMPETENCIES:
                members = [dataset_abbr(t, form, shots) for t in COMPETENCY_TASKS[comp] if t in tasks]
                if members:
                    groups.append({"name": group_abbr(form, shots, comp), "subsets": members})
                    comps.append(group_abbr(form, shots, comp))
            groups.append({"name": group_abbr(form, shots), "subsets": comps})
            rows += [group_abbr(form, shots), *comps]
            rows += [dataset_abbr(t, form, shots) for c in COMPETENCIES for t in COMPETENCY_TASKS[c] if t in tasks]
    return {"dataset_abbrs": rows, "summary_groups": groups}


def support_sources() -> dict[str, str]:
    """The two Python modules the configs import, by file name."""
    source = inspect.getsource(extract)
    if "from ..tasks import LETTERS\n" not in source:
        raise RuntimeError("ancientbench.evaluation.extract no longer imports LETTERS as expected; update the exporter")
    return {f"{SUPPORT_MODULE}.py": SUPPORT_SOURCE,
            f"{EXTRACT_MODULE}.py": source.replace("from ..tasks import LETTERS\n", f"LETTERS = {tuple(LETTERS)!r}\n")}


def export(out_dir: str | Path, *, data: str | Path | None = None, hub_id: str | None = None,
           letter_style: str = "bare", tasks: list[str] | None = None) -> dict[str, Path]:
    """Write the configs (and, for local data, the data copy); returns ``{file stem: path}``. Tasks without both
    split files are left out."""
    checked_letter_prefix(letter_style)
    folder = Path(data or DATASET_PATH)
    present = present_tasks(folder, hub_id, tasks)
    out = Path(out_dir)
    # a folder exported before keeps nothing of ours this one does not write; anything else in it is left alone
    for old in [*out.glob(f"datasets/{PREFIX}_*.py"), out / "summarizers" / f"{SUMMARIZER}.py"]:
        old.unlink(missing_ok=True)
    for task in TASK_NAMES:
        shutil.rmtree(out / "data" / task, ignore_errors=True)
    written: dict[str, Path] = {}

    def write(rel: str, text: str) -> None:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
        written[Path(rel).stem] = path

    for name, text in support_sources().items():
        write(name, text)
    if not hub_id:
        for t in present:
            for split in ("test", "dev"):
                target = split_file(out, t, split)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(split_file(folder, t, split), target)
    for form in FORMS:
        for shots in SHOTS:
            cfgs = [dataset_config(t, form, shots, hub_id=hub_id, letter_style=letter_style) for t in present]
            for t, cfg in zip(present, cfgs):
                stem = f"{PREFIX}_{t}_{form}_{shots}shot"
                write(f"datasets/{stem}.py", render(f"{stem}_datasets", [cfg]))
            stem = f"{PREFIX}_{form}_{shots}shot"
            write(f"datasets/{stem}.py", render(f"{stem}_datasets", cfgs))
    summary = summarizer_config(present)
    write(f"summarizers/{SUMMARIZER}.py", f"# Written by `ancientbench export-opencompass`: the paper's aggregation.\n"
                                          f"summarizer = {_py(summary)}\n")
    return written


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_export_arguments(p, "folder to write the configs into (give it to opencompass --config-dir)")


def run(args: argparse.Namespace) -> int:
    return run_export(
        args, lambda: export(args.out_dir, data=args.data, hub_id=args.hub_id, letter_style=args.letter_style, tasks=args.tasks),
        tasks=lambda written: [t for t in resolve_tasks(args.tasks) if f"{PREFIX}_{t}_ppl_0shot" in written],
        wrote=lambda written, tasks: f"wrote {len(tasks)} tasks x {len(FORMS)} forms x {len(SHOTS)} shot settings and "
                                     f"summarizer '{SUMMARIZER}' to {args.out_dir}",
        how_to_run=lambda written, tasks: f"run: PYTHONPATH={args.out_dir} opencompass --config-dir {args.out_dir} --datasets "
                                          f"ancientbench_ppl_5shot --summarizer {SUMMARIZER} --hf-type base --hf-path MODEL",
        left_out_note="; the groups average the tasks present")
