"""Input built to break a parser or a query gets a clear 4xx, never a 500 (issue 16, item 10):
deeply nested JSON on the import page and the annotation submit API, a page number too
large for the database on the curator's campaign page."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.answers import AnswerError
from annotation.models import Judgment
from annotation.services import campaign_create
from annotation.task_types import answer_clean
from core.jsonl import JsonLinesError, read_jsonl
from datasets.models import ImportBatch, Schema
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 50_000 + "1" + "}" * 50_000


@pytest.fixture
def campaign():
    SchemaFactory.create_batch(2)
    return campaign_create(name="sw", task="switchability", items="schemas", k=1)


@pytest.mark.parametrize("text", [DEEP, '{"votes": ' + DEEP + "}"])
def test_deeply_nested_json_on_the_import_page_is_refused_with_the_file_and_reason(client, curator, text):
    client.force_login(curator)
    upload = SimpleUploadedFile("winowhy.json", text.encode(), content_type="application/json")
    response = client.post("/datasets/import/", {"format": "winowhy", "uploads": [upload]})
    assert response.status_code == 400
    page = response.content.decode()
    assert "winowhy.json" in page and "nested" in page
    assert Schema.objects.count() == 0 and ImportBatch.objects.count() == 0


def test_deeply_nested_json_lines_name_the_row() -> None:
    with pytest.raises(JsonLinesError, match=r"votes\.jsonl, row 2: .*nested"):
        list(read_jsonl(['{"ok": 1}', DEEP_OBJECT], name="votes.jsonl"))


def test_deeply_nested_json_to_the_submit_api_is_a_400(annotator, campaign):
    api = APIClient()
    api.force_authenticate(annotator)
    body = api.post(reverse("annotation-api:next", args=["sw"])).json()
    submit = reverse("annotation-api:submit", args=[body["assignment"]])
    response = api.post(submit, data=DEEP_OBJECT, content_type="application/json")
    assert response.status_code == 400
    assert "nested" in response.json()["detail"]
    assert Judgment.objects.count() == 0


@pytest.mark.parametrize("page", ["10" * 20, "99999999999", "-3", "x"])
def test_a_page_number_out_of_range_is_a_404_or_the_first_page(client, curator, campaign, page):
    client.force_login(curator)
    response = client.get(
        reverse("annotation:campaign-adjudicate", args=["sw"]), {"page": page, "show": "all"}
    )
    if page in ("-3", "x"):  # not a page number at all: the first page, as before
        assert response.status_code == 200
    else:
        assert response.status_code == 404


COMVE_ITEM = {
    "statement_0": "He put a turkey into the fridge.",
    "statement_1": "He put an elephant into the fridge.",
    "false_index": "1",
    "option_a": "An elephant is much bigger than a fridge.",
    "option_b": "Elephants are usually gray.",
    "option_c": "An elephant cannot eat a turkey.",
    "correct_option": "A",
    "references": ["An elephant is too big.", "A fridge is small.", "Elephants do not fit."],
}


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "  =", "\t@", "\uff1d", "\uff0b", "\uff0d", "\uff20"])
def test_crowd_text_that_would_start_a_spreadsheet_formula_is_refused_where_it_is_written(start) -> None:
    """Issue 16, item 9: such text would reach a release's SemEval CSVs as a formula."""
    with pytest.raises(AnswerError, match=r"text: may not start with .* formula"):
        answer_clean("reason_writing", text=start + 'HYPERLINK("http://x")')
    for field in ("statement_1", "option_b"):
        with pytest.raises(AnswerError, match=rf"{field}: may not start with .* formula"):
            answer_clean("comve_writing", payload={**COMVE_ITEM, field: start + "cmd|' /C calc'!A0"})
    refs = [COMVE_ITEM["references"][0], start + "1+1", COMVE_ITEM["references"][2]]
    with pytest.raises(AnswerError, match=r"references: may not start with .* formula"):
        answer_clean("comve_writing", payload={**COMVE_ITEM, "references": refs})
    # the same characters inside the text are fine
    assert answer_clean("reason_writing", text="a=b, 1+1 and -3 @ noon")[1] == "a=b, 1+1 and -3 @ noon"
    assert answer_clean("comve_writing", payload=COMVE_ITEM)[2]["statement_1"] == COMVE_ITEM["statement_1"]
