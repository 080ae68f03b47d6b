"""Uploaded predictions: JSONL or CSV, errors that name the file, row and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation.lm.scorers import PredictionsFileError, WscItem, WscText, read_predictions, score_wsc

ITEMS = [
    WscItem(
        "a1",
        "The trophy doesn't fit into the suitcase because",
        "it",
        "is too large.",
        ("the trophy", "the suitcase"),
        0,
        switched=WscText("The suitcase doesn't fit into the trophy because", "it", "is too large."),
    ),
    WscItem("a2", "Jim comforted Kevin because", "he", "was so upset.", ("Jim", "Kevin"), 1),
]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_predictions_accept_indexes_letters_and_candidate_text(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "preds.txt",
        '{"id": "a1", "prediction": 0}\n'
        '{"id": "a1", "variant": "switched", "prediction": "B"}\n'
        "\n"
        '{"id": "a2", "prediction": "kevin"}\n',
    )
    preds = read_predictions(path, ITEMS)
    assert preds == {("a1", "original"): 0, ("a1", "switched"): 1, ("a2", "original"): 1}
    scores = score_wsc(None, ITEMS, "predictions", predictions=preds)
    assert [(s.id, s.variant, s.prediction, s.correct) for s in scores] == [
        ("a1", "original", 0, True),
        ("a1", "switched", 1, True),
        ("a2", "original", 1, True),
    ]


def test_csv_predictions_are_read_by_content_not_name(tmp_path: Path) -> None:
    path = write(tmp_path, "preds.jsonl", "id,prediction\na1,1\na2,A\n")
    assert read_predictions(path, ITEMS) == {("a1", "original"): 1, ("a2", "original"): 0}
    scores = score_wsc(None, ITEMS, "predictions", predictions=read_predictions(path, ITEMS))
    assert [s.variant for s in scores] == ["original", "original"]  # no switched rows: originals only
    assert [s.correct for s in scores] == [False, False]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"id": "a1", "prediction": 0}\n{"id": "a2", "prediction": 1\n', r"preds, row 2: not valid JSON"),
        (
            '{"id": "a1", "prediction": 0}\n{"id": "zz", "prediction": 1}\n',
            r"row 2, field 'id': 'zz' is not an item",
        ),
        (
            '{"id": "a1", "prediction": 2}\n',
            r"row 1, field 'prediction': 2 is not 0/1, A/B or one of the candidates",
        ),
        ('{"id": "a1"}\n', r"row 1, field 'prediction': missing"),
        ('{"prediction": 1}\n', r"row 1, field 'id': missing"),
        (
            '{"id": "a1", "prediction": 0}\n{"id": "a1", "prediction": 1}\n',
            r"row 2, field 'id': a second prediction",
        ),
        ('{"id": "a1", "variant": "upside-down", "prediction": 0}\n', r"row 1, field 'variant'"),
        ('{"id": "a1", "prediction": true}\n', r"row 1, field 'prediction'"),
        ("item,answer\na1,0\n", r"preds, row 1: a CSV predictions file needs a header"),
        ("id,prediction\na1,0\na2,the moon\n", r"row 3, field 'prediction': 'the moon'"),
        ("", r"preds: no predictions"),
    ],
)
def test_a_bad_predictions_file_names_the_row_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "preds", text)
    with pytest.raises(PredictionsFileError, match=message):
        read_predictions(path, ITEMS)


def test_missing_items_are_listed(tmp_path: Path) -> None:
    preds = read_predictions(write(tmp_path, "p.jsonl", '{"id": "a1", "prediction": 0}\n'), ITEMS)
    with pytest.raises(PredictionsFileError, match=r"no row for 1 item\(s\): a2/original"):
        score_wsc(None, ITEMS, "predictions", predictions=preds)


def test_a_missing_or_binary_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PredictionsFileError, match="no such file"):
        read_predictions(tmp_path / "nope.jsonl", ITEMS)
    path = tmp_path / "bin.jsonl"
    path.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(PredictionsFileError, match="not UTF-8"):
        read_predictions(path, ITEMS)
