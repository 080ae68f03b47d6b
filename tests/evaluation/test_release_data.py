import json

import pytest

from evaluation.release_data import (
    ReleaseDataError,
    open_release_folder,
    read_comve,
    read_winowhy,
    read_wsc,
    split_switched,
)
from tests.evaluation.factories import write_comve_release, write_winowhy_release, write_wsc_release


def test_wsc_rows_become_scorer_items_with_switched_sentences_for_switchable_items_only(tmp_path):
    folder = open_release_folder(write_wsc_release(tmp_path / "r"))
    assert (folder.name, folder.version, folder.dataset) == ("wsc-mini", "1.0.0", "wsc")
    rows = read_wsc(folder)
    first, second, third = rows[0], rows[1], rows[2]
    assert first.item.answer == 0 and second.item.answer == 1
    assert first.item.switched is not None and first.item.switched.pronoun == "they"
    assert first.item.switched.text_before == "The demonstrators refused the city councilmen a permit because"
    assert second.item.switched is not None and second.item.switched.text_after == "advocated violence."
    assert third.item.switched is None  # not switchable: its switch is not scored
    assert first.knowledge_types == ("Eventuality",) and third.associative is True


def test_switched_sentence_without_brackets_is_cut_at_the_pronoun():
    t = split_switched("Susan thanked Joan because she had helped.", "she", "wsc.jsonl, row 1")
    assert (t.text_before, t.pronoun, t.text_after) == ("Susan thanked Joan because", "she", "had helped.")
    with pytest.raises(ReleaseDataError, match="row 1, field 'switched': cannot find the pronoun 'it'"):
        split_switched("Susan thanked Joan.", "it", "wsc.jsonl, row 1")


def test_winowhy_reasons_carry_their_question_and_label(tmp_path):
    rows = read_winowhy(open_release_folder(write_winowhy_release(tmp_path / "r")))
    assert len(rows) == 7
    assert [r.positive for r in rows[:3]] == [True, False, None]
    assert rows[0].context.endswith("'they' refers to The city councilmen because")
    assert rows[0].continuation == " councilmen are responsible for order"


def test_comve_files_are_read_per_subtask(tmp_path):
    data = read_comve(open_release_folder(write_comve_release(tmp_path / "r")))
    assert [x.answer for x in data.a] == [0, 1, 0]
    assert [x.answer for x in data.b] == ["A", "B"]
    assert data.c[0].references[1] == "the park does not have beds"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"answer": "C"}, "row 1, field 'answer': 'C' is not A/B or 0/1"),
        ({"switchable": "yes"}, "row 1, field 'switchable': expected true, false or null"),
        ({"pronoun": None}, "row 1, field 'pronoun': missing"),
        (
            {"switched": "", "switchable": True},
            "row 1, field 'switched': switchable but no switched sentence",
        ),
    ],
)
def test_bad_wsc_rows_are_named(tmp_path, row, message):
    from tests.evaluation.factories import WSC_ROWS

    bad = {**WSC_ROWS[2], **row}
    folder = open_release_folder(write_wsc_release(tmp_path / "r", rows=[bad]))
    with pytest.raises(ReleaseDataError, match=message):
        read_wsc(folder)


def test_a_line_that_is_not_json_is_named(tmp_path):
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "wsc.jsonl").write_text('{"id": "0"}\nnot json\n')
    with pytest.raises(ReleaseDataError, match="wsc.jsonl, row 1, field 'candidates': missing"):
        read_wsc(open_release_folder(folder))
    (folder / "wsc.jsonl").write_text("not json\n")
    with pytest.raises(ReleaseDataError, match="wsc.jsonl, row 1: not valid JSON"):
        read_wsc(open_release_folder(folder))


def test_a_folder_without_manifest_is_told_apart_by_its_files(tmp_path):
    folder = tmp_path / "loose"
    folder.mkdir()
    (folder / "winowhy.jsonl").write_text(json.dumps({"id": "0.0"}) + "\n")
    opened = open_release_folder(folder)
    assert (opened.dataset, opened.name, opened.version) == ("winowhy", "loose", "unversioned")
    (folder / "wsc.jsonl").write_text("")
    with pytest.raises(ReleaseDataError, match="cannot tell the data set"):
        open_release_folder(folder)
