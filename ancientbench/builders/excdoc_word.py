"""Builder of the ``excdoc_word`` config from the team-curated ``curated/excdoc_word.jsonl``.

Each entry is a word or phrase of an excavated document (Qin and Han administrative and legal slips —
睡虎地, 里耶, 張家山, 嶽麓 — and Chu manuscripts) with a modern definition written fresh by the team and three
distractors that are real senses of the same characters elsewhere or neighbours in the semantic field.
The question names the document and, where the entry gives a phrase, the phrase the word occurs in.
"""

from __future__ import annotations

from .curated import build_entries

TASK = "excdoc_word"
# Five dev exemplars (few-shot), by key; never also in test.
DEV_KEYS: tuple[str, ...] = (
    "c2-fzs-yuanshu",  # 爰書, 睡虎地《封診式》
    "c2-enl-qishi",  # 棄市, 張家山《二年律令》
    "c2-liye-ganyanzhi",  # 敢言之, 里耶秦簡
    "c2-jy-suizhang",  # 燧長, 居延漢簡
    "c2-mw-ye",  # 冶, 馬王堆《五十二病方》
)


def question(entry) -> str:
    word, ctx, doc = entry["word"], entry["context"], entry["document"]
    if ctx == word:
        return f"{doc}中「{word}」一詞的意思是？"
    return f"{doc}「{ctx}」中「{word}」一詞的意思是？"


def build(ctx):
    return build_entries(TASK, ctx, question, DEV_KEYS)
