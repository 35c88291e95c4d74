"""The item schema validator: every bad-input case is rejected with an error naming file, row and field."""

import json

import pytest

from ancientbench.schema import FIELDS, DataError, load_question_file, load_split, validate_row, validate_rows


def good_row(**over):
    row = {
        "id": "radical-河", "task": "radical", "question": "「河」字的部首是？", "A": "氵", "B": "可", "C": "口", "D": "丁",
        "answer": "A", "subset": "", "source": "unicode-data 15.1", "citation": "Unihan kRSUnicode 85.5", "explanation": "",
    }
    row.update(over)
    return row


def write_rows(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_good_row_passes_and_keeps_schema_columns():
    row = validate_row(good_row(), "f.jsonl", 1)
    assert list(row) == list(FIELDS)


@pytest.mark.parametrize(
    "row, field, words",
    [
        ({k: v for k, v in good_row().items() if k != "source"}, "source", "missing field"),
        ({k: v for k, v in good_row().items() if k != "D"}, "D", "missing field"),  # three options
        (good_row(E="五"), "E", "not exactly four options"),  # five options
        (good_row(C="氵"), "C", "duplicate option"),
        (good_row(C=" 氵 "), "C", "duplicate option"),  # same text up to surrounding spaces
        (good_row(answer="E"), "answer", "answer must be one of A, B, C, D"),
        (good_row(answer="a"), "answer", "answer must be one of A, B, C, D"),
        (good_row(question="  "), "question", "empty question"),
        (good_row(A=""), "A", "empty"),
        (good_row(id=7), "id", "must be a string"),
        (good_row(task="couplet"), "task", "unknown task"),
    ],
)
def test_bad_row_names_file_row_field(row, field, words):
    with pytest.raises(DataError) as exc:
        validate_rows([good_row(id="ok-1"), row], "some/file.jsonl")
    err = exc.value
    assert (err.file, err.row, err.field) == ("some/file.jsonl", 2, field)
    assert words in str(err)
    assert "some/file.jsonl, row 2" in str(err) and repr(field) in str(err)


def test_duplicate_id_names_both_rows():
    with pytest.raises(DataError) as exc:
        validate_rows([good_row(), good_row(id="radical-江"), good_row()], "f.jsonl")
    assert (exc.value.row, exc.value.field) == (3, "id")
    assert "duplicate id" in str(exc.value) and "first at row 1" in str(exc.value)


def test_row_of_another_task_in_a_task_file(tmp_path):
    path = write_rows(tmp_path / "data" / "homophone" / "test.jsonl", [good_row()])
    with pytest.raises(DataError) as exc:
        load_split(tmp_path, "homophone", "test")
    assert (exc.value.file, exc.value.row, exc.value.field) == (str(path), 1, "task")


def test_readers_report_the_file(tmp_path):
    path = write_rows(tmp_path / "q.jsonl", [good_row(), good_row(id="radical-江", answer="X")])
    with pytest.raises(DataError) as exc:
        load_question_file(path)
    assert exc.value.file == str(path) and exc.value.row == 2 and exc.value.field == "answer"

    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_text(json.dumps(good_row(), ensure_ascii=False) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DataError) as exc:
        load_question_file(bad_json)
    assert exc.value.row == 2 and "not valid JSON" in str(exc.value)

    with pytest.raises(DataError) as exc:
        load_split(tmp_path, "cloze", "dev")
    assert "missing file" in str(exc.value) and "cloze" in str(exc.value)


def test_question_file_groups_by_task_in_registry_order(tmp_path):
    rows = [good_row(id="c1", task="cloze"), good_row(id="r1"), good_row(id="c2", task="cloze")]
    grouped = load_question_file(write_rows(tmp_path / "q.jsonl", rows))
    assert list(grouped) == ["radical", "cloze"]
    assert [r["id"] for r in grouped["cloze"]] == ["c1", "c2"]


@pytest.mark.parametrize("a,b", [
    ("caf\u00e9", "cafe\u0301"),  # precomposed vs decomposed
    ("\u8c48", "\uf900"),  # 豈 and its compatibility ideograph
    ("水", "水\u200b"),  # a zero-width space
    ("之", "\u2060之"),  # a word joiner
])
def test_options_equal_after_normalisation_are_duplicates(a, b):
    with pytest.raises(DataError, match="duplicate option") as e:
        validate_row(good_row(A=a, B=b), "f.jsonl", 3)
    assert e.value.row == 3 and e.value.field == "B"


def test_a_repeated_key_in_a_row_is_rejected(tmp_path):
    row = json.dumps(good_row(), ensure_ascii=False)
    path = tmp_path / "q.jsonl"
    path.write_text(row[:-1] + ', "answer": "B"}\n', encoding="utf-8")
    with pytest.raises(DataError, match="appears twice") as e:
        load_question_file(path)
    assert e.value.row == 1 and e.value.field == "answer"


def test_an_empty_test_split_is_an_error(tmp_path):
    from ancientbench.dataset import load_questions

    (tmp_path / "data" / "cloze").mkdir(parents=True)
    (tmp_path / "data" / "cloze" / "test.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(DataError, match="empty test split"):
        load_questions(["cloze"], tmp_path)
