"""Broken input for every importer: a clear error naming the row and the field, and the
database left exactly as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets.models import ComVEItem, ImportBatch, Reason, Schema
from datasets.services import DatasetImportError, dataset_import
from tests.datasets import sources

pytestmark = pytest.mark.django_db


def db_state() -> tuple:
    return (
        ImportBatch.objects.count(),
        list(Schema.objects.order_by("id").values_list()),
        list(Reason.objects.order_by("id").values_list()),
        list(ComVEItem.objects.order_by("id").values_list()),
    )


def fails(fmt: str, paths: list[Path], options: dict | None = None) -> DatasetImportError:
    before = db_state()
    with pytest.raises(DatasetImportError) as caught:
        dataset_import(format=fmt, paths=paths, options=options)
    assert db_state() == before, "a failed import changed the database"
    return caught.value


# --- winowhy -------------------------------------------------------------------------


@pytest.fixture
def winowhy_imported(tmp_path: Path) -> Path:
    """A first, good import, so that a bad second one could visibly damage it."""
    good = tmp_path / "good"
    good.mkdir()
    dataset_import(format="winowhy", paths=[sources.write_winowhy(good)], options={"collection": "t"})
    return tmp_path


def test_winowhy_truncated_json_names_the_row_it_breaks_in(winowhy_imported: Path):
    path = sources.write_winowhy(winowhy_imported)
    text = path.read_text()
    cut = text.index("Mia lent Omar her bicycle because") + 10  # inside row 3
    path.write_text(text[:cut])
    error = fails("winowhy", [path], {"collection": "t"})
    assert error.file == "winowhy.json"
    assert error.row == 3
    assert error.field == "txt1"
    assert "truncated" in error.message


def test_winowhy_missing_field_is_named(winowhy_imported: Path):
    rows = sources.winowhy_rows()
    del rows[1]["correctAnswer"]
    path = sources.write_winowhy(winowhy_imported, rows)
    error = fails("winowhy", [path], {"collection": "t"})
    assert error.message == "winowhy.json row 2 field 'correctAnswer': missing"


def test_winowhy_missing_text_part_is_named(winowhy_imported: Path):
    rows = sources.winowhy_rows()
    del rows[3]["text"]["pron"]
    error = fails("winowhy", [sources.write_winowhy(winowhy_imported, rows)], {"collection": "t"})
    assert (error.row, error.field) == (4, "text.pron")


def test_winowhy_unknown_answer_key_is_refused_but_a_stray_period_is_not(winowhy_imported: Path):
    path = sources.write_winowhy(winowhy_imported, sources.winowhy_rows(["A.", "C.", "b", "A"]))
    error = fails("winowhy", [path], {"collection": "t"})
    assert error.message == "winowhy.json row 2 field 'correctAnswer': unknown answer key 'C.'"


def test_winowhy_unknown_reason_source_and_bad_score_are_named(winowhy_imported: Path):
    rows = sources.winowhy_rows()
    rows[2]["reasons"][1][1] = "robot"
    error = fails("winowhy", [sources.write_winowhy(winowhy_imported, rows)], {"collection": "t"})
    assert (error.row, error.field) == (3, "reasons[1][1]")
    rows = sources.winowhy_rows()
    rows[0]["reasons"][2][2] = 1.4
    error = fails("winowhy", [sources.write_winowhy(winowhy_imported, rows)], {"collection": "t"})
    assert (error.row, error.field) == (1, "reasons[2][2]")


def test_winowhy_duplicate_question_is_refused(winowhy_imported: Path):
    rows = sources.winowhy_rows()
    rows.append(json.loads(json.dumps(rows[0])))
    error = fails("winowhy", [sources.write_winowhy(winowhy_imported, rows)], {"collection": "t"})
    assert (error.row, error.field) == (5, "text")
    assert "same text as row 1" in error.reason


def test_winowhy_categories_that_do_not_match_the_questions_are_refused(winowhy_imported: Path):
    questions = sources.write_winowhy(winowhy_imported)
    categories = sources.write_categories(winowhy_imported, {"Property": [0, 7]})
    error = fails("winowhy", [questions], {"collection": "t", "categories": categories})
    assert error.file == "cat_ref.json"
    assert (error.row, error.field) == (2, "Property")
    assert "question index 7 is not in the questions file (0..3)" in error.reason


def test_winowhy_unknown_knowledge_type_is_refused(winowhy_imported: Path):
    questions = sources.write_winowhy(winowhy_imported)
    categories = sources.write_categories(winowhy_imported, {"Causal": [1]})
    error = fails("winowhy", [questions], {"collection": "t", "categories": categories})
    assert error.field == "Causal"


def test_winowhy_empty_file_is_refused(winowhy_imported: Path):
    path = winowhy_imported / "winowhy.json"
    path.write_text("  \n")
    error = fails("winowhy", [path], {"collection": "t"})
    assert error.message == "winowhy.json row 1: file is empty"


def test_winowhy_non_utf8_bytes_name_row_and_field(winowhy_imported: Path):
    path = sources.write_winowhy(winowhy_imported)
    raw = path.read_bytes().replace(b"had a flat tyre.", b"had a flat tyre\xe9.")
    path.write_bytes(raw)
    error = fails("winowhy", [path], {"collection": "t"})
    assert (error.row, error.field) == (3, "txt2")
    assert "not UTF-8" in error.reason and "0xe9" in error.reason


def test_winowhy_refuses_a_csv_file_whatever_its_name(winowhy_imported: Path):
    path = winowhy_imported / "winowhy.json"
    path.write_text(sources.comve_files()["subtaskA_dev_data.csv"])
    error = fails("winowhy", [path], {"collection": "t"})
    assert "not JSON" in error.reason


# --- trichelair ----------------------------------------------------------------------


@pytest.fixture
def schemas_imported(tmp_path: Path) -> Path:
    good = tmp_path / "good"
    good.mkdir()
    dataset_import(format="winowhy", paths=[sources.write_winowhy(good)], options={"collection": "t"})
    dataset_import(
        format="trichelair", paths=[sources.write_trichelair(good / "tri")], options={"collection": "t"}
    )
    return tmp_path


def test_trichelair_truncated_json_names_the_row(schemas_imported: Path):
    folder = sources.write_trichelair(schemas_imported / "bad")
    path = folder / "WSC_associative_label.json"
    text = path.read_text()
    path.write_text(text[: text.index('"index": 2') + 8])
    error = fails("trichelair", [folder], {"collection": "t"})
    assert error.file == "WSC_associative_label.json"
    assert error.row == 3 and error.field == "index"
    assert "truncated" in error.message


def test_trichelair_missing_field_is_named(schemas_imported: Path):
    switched, associative = sources.trichelair_rows()
    del switched[2]["sentence_switched"]
    folder = sources.write_trichelair(schemas_imported / "bad", switched, associative)
    error = fails("trichelair", [folder], {"collection": "t"})
    assert error.message == "WSC_switched_label.json row 3 field 'sentence_switched': missing"


def test_trichelair_label_other_than_0_or_1_is_refused(schemas_imported: Path):
    switched, associative = sources.trichelair_rows()
    associative[1]["is_associative"] = "yes"
    folder = sources.write_trichelair(schemas_imported / "bad", switched, associative)
    error = fails("trichelair", [folder], {"collection": "t"})
    assert (error.file, error.row, error.field) == ("WSC_associative_label.json", 2, "is_associative")


def test_trichelair_duplicate_index_is_refused(schemas_imported: Path):
    switched, associative = sources.trichelair_rows()
    switched[3]["index"] = 1
    folder = sources.write_trichelair(schemas_imported / "bad", switched, associative)
    error = fails("trichelair", [folder], {"collection": "t"})
    assert (error.row, error.field) == (4, "index")
    assert "duplicate index 1" in error.reason


def test_trichelair_files_that_do_not_join_are_refused(schemas_imported: Path):
    switched, associative = sources.trichelair_rows()
    associative[2]["index"] = 9
    folder = sources.write_trichelair(schemas_imported / "bad", switched, associative)
    error = fails("trichelair", [folder], {"collection": "t"})
    assert error.row == 3 and error.field == "index"
    assert "is not in" in error.reason


def test_trichelair_row_matching_no_schema_is_refused(schemas_imported: Path):
    switched, associative = sources.trichelair_rows()
    for rows in (switched, associative):
        rows[1]["sentence"] = "A sentence that no schema has, and [it] is new."
    folder = sources.write_trichelair(schemas_imported / "bad", switched, associative)
    error = fails("trichelair", [folder], {"collection": "t"})
    assert (error.file, error.row, error.field) == ("WSC_switched_label.json", 2, "sentence")
    assert "matches no schema" in error.reason


def test_trichelair_sentence_without_brackets_is_refused(schemas_imported: Path):
    switched, associative = sources.trichelair_rows()
    switched[0]["sentence"] = switched[0]["sentence"].replace("[", "").replace("]", "")
    folder = sources.write_trichelair(schemas_imported / "bad", switched, associative)
    error = fails("trichelair", [folder], {"collection": "t"})
    assert (error.row, error.field) == (1, "sentence")


def test_trichelair_empty_file_is_refused(schemas_imported: Path):
    folder = sources.write_trichelair(schemas_imported / "bad")
    (folder / "WSC_switched_label.json").write_text("")
    error = fails("trichelair", [folder], {"collection": "t"})
    assert error.message == "WSC_switched_label.json row 1: file is empty"


def test_trichelair_non_utf8_bytes_name_row_and_field(schemas_imported: Path):
    folder = sources.write_trichelair(schemas_imported / "bad")
    path = folder / "WSC_switched_label.json"
    path.write_bytes(path.read_bytes().replace(b"was not using it.", b"was not using it\xff.", 1))
    error = fails("trichelair", [folder], {"collection": "t"})
    assert error.row == 4 and error.field == "sentence"


def test_trichelair_needs_schemas_to_label(tmp_path: Path):
    folder = sources.write_trichelair(tmp_path / "t")
    error = fails("trichelair", [folder])
    assert "import winowhy.json first" in error.reason


# --- comve ---------------------------------------------------------------------------


@pytest.fixture
def comve_folder(tmp_path: Path) -> Path:
    dataset_import(format="comve", paths=[sources.write_comve(tmp_path / "good" / "dev")])
    return sources.write_comve(tmp_path / "dev")


def test_comve_truncated_csv_row_names_the_missing_field(comve_folder: Path):
    path = comve_folder / "subtaskB_dev_data.csv"
    text = path.read_text()
    path.write_text(text[: text.rindex(",Option B of 12.")])
    error = fails("comve", [comve_folder])
    assert error.message.startswith("subtaskB_dev_data.csv row 4 field 'OptionB': missing value")


def test_comve_missing_column_in_header_is_named(comve_folder: Path):
    path = comve_folder / "subtaskA_dev_data.csv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(["id,sent0"] + [line.rsplit(",", 1)[0] for line in lines[1:]]) + "\n")
    error = fails("comve", [comve_folder])
    assert (error.file, error.row, error.field) == ("subtaskA_dev_data.csv", 0, "sent1")
    assert "missing column" in error.reason


def test_comve_unknown_answer_keys_are_refused(comve_folder: Path):
    path = comve_folder / "subtaskB_gold_answers.csv"
    path.write_text(path.read_text().replace("11,A", "11,D"))
    error = fails("comve", [comve_folder])
    assert (
        error.message
        == "subtaskB_gold_answers.csv row 2 field 'answer': unknown answer key 'D' (expected A, B or C)"
    )
    sources.write_comve(comve_folder)
    path = comve_folder / "subtaskA_gold_answers.csv"
    path.write_text(path.read_text().replace("12,1", "12,2"))
    error = fails("comve", [comve_folder])
    assert (error.file, error.row, error.field) == ("subtaskA_gold_answers.csv", 3, "answer")


def test_comve_duplicate_id_is_refused(comve_folder: Path):
    path = comve_folder / "subtaskC_dev_data.csv"
    path.write_text(path.read_text() + "11,Another false sentence.\n")
    error = fails("comve", [comve_folder])
    assert (error.file, error.row, error.field) == ("subtaskC_dev_data.csv", 4, "id")
    assert "duplicate id '11' (also row 3)" in error.reason


def test_comve_answers_file_that_does_not_match_its_data_file_is_refused(comve_folder: Path):
    path = comve_folder / "subtaskA_gold_answers.csv"
    path.write_text(path.read_text().replace("11,1", "99,1"))
    error = fails("comve", [comve_folder])
    assert (error.file, error.row, error.field) == ("subtaskA_gold_answers.csv", 2, "id")
    assert "id '99' is not in the data file subtaskA_dev_data.csv" in error.reason


def test_comve_data_row_without_an_answer_is_refused(comve_folder: Path):
    path = comve_folder / "subtaskB_gold_answers.csv"
    path.write_text(
        "".join(line + "\n" for line in path.read_text().splitlines() if not line.startswith("12,"))
    )
    error = fails("comve", [comve_folder])
    assert (error.file, error.row, error.field) == ("subtaskB_dev_data.csv", 3, "id")


def test_comve_empty_file_is_refused(comve_folder: Path):
    (comve_folder / "subtaskC_gold_answers.csv").write_text("")
    error = fails("comve", [comve_folder])
    assert error.message == "subtaskC_gold_answers.csv row 1: file is empty"


def test_comve_non_utf8_bytes_name_row_and_field(comve_folder: Path):
    path = comve_folder / "subtaskA_dev_data.csv"
    path.write_bytes(path.read_bytes().replace(b"his ears warm", b"his \xe4ars warm"))
    error = fails("comve", [comve_folder])
    assert (error.file, error.row, error.field) == ("subtaskA_dev_data.csv", 2, "sent1")
    assert "not UTF-8" in error.reason


def test_comve_json_with_a_csv_name_is_refused(comve_folder: Path):
    (comve_folder / "subtaskA_dev_data.csv").write_text('[{"id": 1}]')
    error = fails(
        "comve", [comve_folder / "subtaskA_dev_data.csv", comve_folder / "subtaskA_gold_answers.csv"]
    )
    assert "this is JSON, expected a CSV file" in error.reason


def test_comve_split_is_needed_when_file_names_do_not_tell(tmp_path: Path):
    files = sources.comve_files()
    folder = sources.write_comve(
        tmp_path / "x", {f"file{i}.csv": text for i, text in enumerate(files.values())}
    )
    error = fails("comve", [folder])
    assert "--split" in error.reason
    result = dataset_import(format="comve", paths=[folder], options={"split": "dev"})
    assert result.created == 3  # the files were recognised by content, whatever their names


# --- senmaking -----------------------------------------------------------------------


@pytest.fixture
def senmaking_folder(tmp_path: Path) -> Path:
    dataset_import(format="senmaking", paths=[sources.write_senmaking(tmp_path / "good")])
    return tmp_path / "bad"


def test_senmaking_truncated_line_is_named(senmaking_folder: Path):
    path = sources.write_senmaking(senmaking_folder)
    path.write_text(path.read_text()[:-40])
    error = fails("senmaking", [path])
    assert error.row == 3 and error.field == "B"
    assert "not valid JSON" in error.reason


def test_senmaking_missing_field_is_named(senmaking_folder: Path):
    rows = sources.senmaking_rows()
    del rows[1]["sentence1"]
    error = fails("senmaking", [sources.write_senmaking(senmaking_folder, rows)])
    assert error.message == "dataset.jsonl row 2 field 'sentence1': missing"


def test_senmaking_unknown_answer_keys_are_refused(senmaking_folder: Path):
    rows = sources.senmaking_rows()
    rows[2]["reason"] = "D"
    error = fails("senmaking", [sources.write_senmaking(senmaking_folder, rows)])
    assert (error.row, error.field) == (3, "reason")
    rows = sources.senmaking_rows()
    rows[0]["false"] = 2
    error = fails("senmaking", [sources.write_senmaking(senmaking_folder, rows)])
    assert (error.row, error.field) == (1, "false")


def test_senmaking_duplicate_id_is_refused(senmaking_folder: Path):
    rows = sources.senmaking_rows()
    rows[2]["id"] = rows[0]["id"]
    error = fails("senmaking", [sources.write_senmaking(senmaking_folder, rows)])
    assert (error.row, error.field) == (3, "id")


def test_senmaking_empty_file_is_refused(senmaking_folder: Path):
    path = sources.write_senmaking(senmaking_folder)
    path.write_text("\n\n")
    error = fails("senmaking", [path])
    assert "file is empty" in error.message


def test_senmaking_non_utf8_bytes_name_row_and_field(senmaking_folder: Path):
    path = sources.write_senmaking(senmaking_folder)
    path.write_bytes(path.read_bytes().replace(b"Gloves cover hands.", b"Gloves cover \xc3hands."))
    error = fails("senmaking", [path])
    assert (error.row, error.field) == (2, "A")


def test_senmaking_refuses_csv_content(senmaking_folder: Path):
    senmaking_folder.mkdir()
    path = senmaking_folder / "dataset.jsonl"
    path.write_text(sources.comve_files()["subtaskA_dev_data.csv"])
    error = fails("senmaking", [path])
    assert "not JSON Lines" in error.reason


def test_unknown_format_is_refused(tmp_path: Path):
    error = fails("wikipedia", [tmp_path])
    assert "unknown format" in error.reason
