"""AncientBench loading script for users of `datasets` 2.x / 3.x (loading scripts were removed in 4.0).

Reads the same files as the dataset card's configs (``<dataset folder>/data/<task>/{test,dev}.jsonl``), no
second copy. Where the dataset folder is:

* ``data_dir=...`` given: that folder (absolute, or relative to the script's folder);
* otherwise ``../ancientbench`` relative to the script's folder, which is the package folder in a clone of
  the repository (``datasets`` resolves relative paths against ``base_path``, the script's folder; it copies
  the script into its modules cache, so a ``__file__``-relative path would point into that cache).

    datasets.load_dataset("dataset_script/ancientbench.py", "cloze", trust_remote_code=True)
    datasets.load_dataset("dataset_script/ancientbench.py", "cloze", data_dir=ancientbench.DATASET_PATH,
                          trust_remote_code=True)

On ``datasets`` >= 4 use the card instead: ``load_dataset(ancientbench.DATASET_PATH, "cloze")``. This file is
self-contained (it does not import ``ancientbench``); tests/test_dataset_script.py checks that its configs
and features equal the task registry and the schema, and that it yields the card's rows.
"""

import json

import datasets

_DESCRIPTION = (
    "AncientBench: four-option multiple-choice questions on ancient Chinese (excavated and transmitted "
    "documents), ten tasks in four competencies (glyph, pronunciation, meaning, context)."
)
_LICENSE = "apache-2.0"
_DEFAULT_DATA_DIR = "../ancientbench"

# (config name, English name, Chinese name, competency): generated from ancientbench/tasks.py
# (python -m ancientbench.publish.copies)
# BEGIN GENERATED: tasks
_TASKS = (
    ("radical", "Radical", "部首", "glyph"),
    ("radical_meaning", "Radical Meaning", "部首義", "glyph"),
    ("pronunciation", "Pronunciation", "字音", "pronunciation"),
    ("phonetic_radical", "Phonetic Radical", "聲符", "pronunciation"),
    ("homophone", "Homophone", "同音字", "pronunciation"),
    ("excdoc_word", "Excavated Document Word", "出土文獻詞義", "meaning"),
    ("tradoc_word", "Transmitted Document Word", "傳世文獻詞義", "meaning"),
    ("cloze", "Cloze", "完形填空", "context"),
    ("phonetic_loan", "Phonetic Loan Character", "通假字", "context"),
    ("translation", "Translation", "翻譯", "context"),
)
# END GENERATED: tasks
# the columns of ancientbench/schema.py FIELDS, in order, all strings
_FIELDS = ("id", "task", "question", "A", "B", "C", "D", "answer", "subset", "source", "citation", "explanation")
_SPLITS = (("test", datasets.Split.TEST), ("dev", "dev"))


class AncientBenchConfig(datasets.BuilderConfig):
    """One task of AncientBench."""

    def __init__(self, competency="", **kwargs):
        super().__init__(version=datasets.Version("0.1.0"), **kwargs)
        self.competency = competency


class AncientBench(datasets.GeneratorBasedBuilder):
    """AncientBench: ten configs (one per task), splits test and dev, one shared schema."""

    BUILDER_CONFIG_CLASS = AncientBenchConfig
    BUILDER_CONFIGS = [
        AncientBenchConfig(name=name, competency=comp, description=f"{en} ({zh}), competency: {comp}")
        for name, en, zh, comp in _TASKS
    ]
    DEFAULT_CONFIG_NAME = "cloze"

    def _info(self):
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=datasets.Features({f: datasets.Value("string") for f in _FIELDS}),
            license=_LICENSE,
        )

    def _split_generators(self, dl_manager):
        folder = (self.config.data_dir or _DEFAULT_DATA_DIR).rstrip("/")
        task = self.config.name
        files = dl_manager.download({split: f"{folder}/data/{task}/{split}.jsonl" for split, _ in _SPLITS})
        return [
            datasets.SplitGenerator(name=split_name, gen_kwargs={"path": files[split], "task": task})
            for split, split_name in _SPLITS
        ]

    def _generate_examples(self, path, task):
        with open(path, encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, start=1):
                row = json.loads(line)
                missing = [f for f in _FIELDS if f not in row]
                if missing:
                    raise ValueError(f"{path}, row {line_no}: missing field(s) {missing}")
                if row["task"] != task:
                    raise ValueError(f"{path}, row {line_no}, field 'task': {row['task']!r} in the file of {task!r}")
                yield row["id"], {f: row[f] for f in _FIELDS}
