"""Formula cells (issue: study integrity, item 5): a text a spreadsheet would run as a
formula (= + - @, their full-width forms, a leading tab) is refused by every importer with
its row and field, so the release files can carry every accepted text byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.formulas import formula_refusal, formula_start
from datasets.models import ComVEItem, ImportBatch, Reason, Schema
from datasets.services import DatasetImportError, dataset_import
from tests.datasets import sources

pytestmark = pytest.mark.django_db

HYPERLINK = '=HYPERLINK("http://example.invalid","click")'


@pytest.mark.parametrize(
    "text",
    ["=1+1", "+1", "-1", "@SUM(A1)", "\uff1d1", "\uff0b1", "\uff0d1", "\uff20x", "\ufe661", " =1", "\tx"],
)
def test_formula_starts_including_full_width_forms_are_found(text):
    assert formula_start(text) is not None
    assert "formula" in (formula_refusal(text) or "")


@pytest.mark.parametrize("text", ["plain", "a=b", "", "  it was", "\u2212 is a minus sign, not a formula"])
def test_other_text_is_not_a_formula(text):
    assert formula_start(text) is None


def nothing_written() -> tuple:
    return (
        ImportBatch.objects.count(),
        Schema.objects.count(),
        Reason.objects.count(),
        ComVEItem.objects.count(),
    )


def refused(fmt: str, paths: list[Path], options: dict | None = None) -> DatasetImportError:
    with pytest.raises(DatasetImportError) as caught:
        dataset_import(format=fmt, paths=paths, options=options)
    assert nothing_written() == (0, 0, 0, 0)
    assert "formula" in caught.value.message
    return caught.value


def where(error: DatasetImportError) -> set[tuple[int | None, str | None]]:
    return {(p.row, p.field) for p in error.problems} or {(error.row, error.field)}


def test_own_comve_items_csv_with_a_hyperlink_formula_is_refused_with_row_and_field(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text(
        "id,sent0,sent1,false_index\n"
        "c1,Fish swim in water.,Fish swim in sand.,1\n"
        f'c2,"{HYPERLINK.replace(chr(34), chr(34) * 2)}",Birds fly.,0\n',
        encoding="utf-8",
    )
    error = refused("comve-items", [path], {"collection": "mine"})
    assert where(error) == {(2, "sent0")}


def test_own_schemas_and_reasons_refuse_full_width_formula_starts(tmp_path):
    path = tmp_path / "schemas.jsonl"
    rows = [
        {
            "id": "s1",
            "sentence": "The cup broke because [it] fell.",
            "candidate_a": "the cup",
            "candidate_b": "\uff1dcmd",
            "answer": "A",
        },
        {
            "id": "s2",
            "sentence": "The box is heavy so [it] stays. \uff0b",
            "candidate_a": "x",
            "candidate_b": "y",
            "answer": "A",
        },
        {
            "id": "s3",
            "sentence": "Tom met Bob because [he] -called.",
            "candidate_a": "Tom",
            "candidate_b": "Bob",
            "answer": "B",
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    error = refused("schemas", [path], {"collection": "mine"})
    assert where(error) == {(1, "candidate_b"), (3, "sentence")}
    reasons = tmp_path / "reasons.csv"
    reasons.write_text("schema,text\ns1,@mention the cup\n", encoding="utf-8")
    assert where(refused("reasons", [reasons], {"collection": "mine"})) == {(1, "text")}


def test_public_comve_csv_formula_cell_is_refused_with_row_and_field(tmp_path):
    files = sources.comve_files()
    files["subtaskB_dev_data.csv"] = files["subtaskB_dev_data.csv"].replace("Gloves cover hands.", "+Gloves")
    error = refused("comve", [sources.write_comve(tmp_path / "comve", files)], {"split": "dev"})
    assert (error.file, error.row, error.field) == ("subtaskB_dev_data.csv", 2, "OptionA")
    files = sources.comve_files()
    files["subtaskC_gold_answers.csv"] = files["subtaskC_gold_answers.csv"].replace(
        "Reference two for 11.", "\uff1dSUM(1)"
    )
    error = refused("comve", [sources.write_comve(tmp_path / "comve2", files)], {"split": "dev"})
    assert (error.file, error.row, error.field) == ("subtaskC_gold_answers.csv", 2, "ref2")


def test_senmaking_formula_cell_is_refused_with_row_and_field(tmp_path):
    rows = sources.senmaking_rows()
    rows[2]["C"] = "-Option C"
    error = refused("senmaking", [sources.write_senmaking(tmp_path, rows)])
    assert (error.row, error.field) == (3, "C")


def test_winowhy_reason_and_candidate_formula_cells_are_refused_with_row_and_field(tmp_path):
    rows = sources.winowhy_rows()
    rows[1]["reasons"] = [list(r) for r in rows[1]["reasons"]]
    rows[1]["reasons"][0][0] = "=cmd|' /C calc'!A0"
    error = refused("winowhy", [sources.write_winowhy(tmp_path, rows)], {"collection": "t"})
    assert (error.row, error.field) == (2, "reasons[0][0]")
    rows = sources.winowhy_rows()
    rows[3]["answers"] = ["Mia", "@Omar"]  # a new list: the rows share their lists with sources
    error = refused("winowhy", [sources.write_winowhy(tmp_path, rows)], {"collection": "t"})
    assert (error.row, error.field) == (4, "answers[1]")


def test_trichelair_switched_sentence_formula_is_refused_with_row_and_field(tmp_path):
    dataset_import(
        format="winowhy", paths=[sources.write_winowhy(tmp_path)], options={"collection": "wsc273"}
    )
    before = nothing_written()
    switched, associative = sources.trichelair_rows()
    switched[1]["sentence_switched"] = "\uff0b" + switched[1]["sentence_switched"]
    with pytest.raises(DatasetImportError) as caught:
        dataset_import(
            format="trichelair", paths=[sources.write_trichelair(tmp_path / "t", switched, associative)]
        )
    assert nothing_written() == before
    assert (caught.value.file, caught.value.row, caught.value.field) == (
        "WSC_switched_label.json",
        2,
        "sentence_switched",
    )
