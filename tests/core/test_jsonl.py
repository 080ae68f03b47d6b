"""The one JSON-Lines reader (core.jsonl): numbered rows, blank lines skipped, one error."""

from pathlib import Path

import pytest

from core.errors import WinnowError
from core.jsonl import JsonLinesError, last_key, read_jsonl


def _file(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "rows.jsonl"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file_gives_each_row_with_its_number(tmp_path):
    path = _file(tmp_path, '{"id": 1}\n{"id": 2, "text": "caf\u00e9"}\n[1, 2]\n"x"\n')
    assert list(read_jsonl(path)) == [(1, {"id": 1}), (2, {"id": 2, "text": "café"}), (3, [1, 2]), (4, "x")]


def test_blank_lines_are_skipped_but_counted_so_rows_match_the_editor(tmp_path):
    path = _file(tmp_path, '\n{"a": 1}\n   \n\n{"a": 2}\r\n\n')
    assert list(read_jsonl(path)) == [(2, {"a": 1}), (5, {"a": 2})]
    assert list(read_jsonl(_file(tmp_path, ""))) == []


def test_bad_json_on_row_n_names_the_file_the_row_and_the_reason(tmp_path):
    path = _file(tmp_path, '{"id": 1}\n\n{"id": 2, "answer": "A"\n{"id": 3}\n')
    with pytest.raises(JsonLinesError) as caught:
        list(read_jsonl(path, name="wsc.jsonl"))
    error = caught.value
    assert str(error) == "wsc.jsonl, row 3: not valid JSON (Expecting ',' delimiter at column 24)"
    assert (error.name, error.row, error.field) == ("wsc.jsonl", 3, "answer")
    assert isinstance(error, WinnowError) and isinstance(error, ValueError) and error.status == 400


def test_rows_before_the_bad_one_are_yielded_first(tmp_path):
    rows = read_jsonl(_file(tmp_path, '{"id": 1}\nnope\n'))
    assert next(rows) == (1, {"id": 1})
    with pytest.raises(JsonLinesError, match="row 2: not valid JSON"):
        next(rows)


def test_the_file_is_named_by_its_path_unless_a_name_is_given(tmp_path):
    path = _file(tmp_path, "{\n")
    with pytest.raises(JsonLinesError, match=f"^{path}, row 1: "):
        list(read_jsonl(path))
    with pytest.raises(JsonLinesError, match="^input, row 1: "):
        list(read_jsonl(["{"]))


def test_objects_refuses_a_row_that_is_not_a_json_object():
    lines = ['{"id": 1}', '["id", 2]']
    assert list(read_jsonl(lines[:1], objects=True)) == [(1, {"id": 1})]
    with pytest.raises(JsonLinesError, match=r"^votes.jsonl, row 2: expected a JSON object, found list$"):
        list(read_jsonl(lines, name="votes.jsonl", objects=True))
    assert list(read_jsonl(lines)) == [(1, {"id": 1}), (2, ["id", 2])]


def test_two_values_on_one_line_are_refused():
    with pytest.raises(JsonLinesError, match="row 1: more than one JSON value on the line"):
        list(read_jsonl(['{"a": 1} {"b": 2}']))


def test_lines_may_come_from_text_an_open_file_or_a_list(tmp_path):
    text = '{"a": "x\u2028y"}\n\n{"a": 2}\n'  # U+2028 is a line break to splitlines(), not to JSON Lines
    expected = [(1, {"a": "x\u2028y"}), (3, {"a": 2})]
    assert list(read_jsonl(text.split("\n"))) == expected
    assert list(read_jsonl(_file(tmp_path, text))) == expected
    with _file(tmp_path, text).open(encoding="utf-8") as handle:
        assert list(read_jsonl(handle)) == expected


def test_a_str_is_refused_since_it_could_be_a_path_or_the_text():
    with pytest.raises(TypeError):
        list(read_jsonl('{"a": 1}'))


def test_a_byte_order_mark_is_ignored_and_bad_bytes_name_their_row(tmp_path):
    assert list(read_jsonl(_file(tmp_path, b'\xef\xbb\xbf{"a": 1}\n'))) == [(1, {"a": 1})]
    assert list(read_jsonl(["\ufeff" + '{"a": 1}'])) == [(1, {"a": 1})]
    with pytest.raises(JsonLinesError, match=r"rows.jsonl, row 2: not UTF-8 text") as caught:
        list(read_jsonl(_file(tmp_path, b'{"a": 1}\n{"a": "\xff"}\n'), name="rows.jsonl"))
    assert caught.value.row == 2


def test_last_key_is_the_field_a_broken_row_stops_in():
    assert last_key('{"id": 3, "text": "unfinished') == "text"
    assert last_key('{"say \\"hi\\"": 1, "b') == 'say \\"hi\\"'
    assert last_key("[1, 2") is None
