"""Crowd text with HTML, hx- attributes and javascript: links is shown as text everywhere;
exports keep it exactly (CSV only neutralises formula starts)."""

import csv
import io
import json

import pytest
from django.urls import reverse

from annotation.exports import csv_lines, csv_safe
from annotation.models import Assignment, AssignmentStatus, CampaignItem, Judgment
from annotation.services import (
    JudgmentRefused,
    adjudication_record,
    assignment_next,
    campaign_aggregate,
    campaign_create,
    judgment_submit,
)
from datasets.models import Reason
from tests.datasets.factories import ReasonFactory, SchemaFactory

EVIL = [
    "<script>alert('x')</script>",
    '<a hx-get="/admin/" hx-trigger="load">click</a>',
    '<a href="javascript:alert(1)">link</a>',
    "<img src=x onerror=alert(1)>",
]
EVIL_TEXT = " ".join(EVIL)


def _assert_inert(html):
    assert "<script>alert" not in html
    assert '<a hx-get="/admin/"' not in html and 'hx-get="/admin/"' not in html
    assert '<a href="javascript:' not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html


@pytest.mark.django_db
def test_crowd_written_reason_is_text_on_the_annotator_page(client, annotator):
    ReasonFactory.create(text=EVIL_TEXT)
    campaign_create(name="pl", task="reason_plausibility", items="reasons")
    client.force_login(annotator)
    html = client.post(
        reverse("annotation:campaign-annotate", args=["pl"]), {"start": "1"}, follow=True
    ).content.decode()
    _assert_inert(html)


@pytest.mark.django_db
def test_crowd_text_in_schemas_is_text_in_every_task_view(client, annotator):
    SchemaFactory.create(text_before=EVIL_TEXT + " because", candidate_a="<b>the trophy</b>")
    for task in ("switchability", "reason_writing"):
        campaign_create(name=task.replace("_", "-"), task=task, items="schemas")
        client.force_login(annotator)
        url = reverse("annotation:campaign-annotate", args=[task.replace("_", "-")])
        html = client.post(url, {"start": "1"}, follow=True).content.decode()
        _assert_inert(html)
        assert "<b>the trophy</b>" not in html


@pytest.mark.django_db
def test_written_reasons_are_text_on_the_curator_page_and_untouched_in_exports(client, annotator, curator):
    SchemaFactory.create()
    campaign = campaign_create(name="rw", task="reason_writing", items="schemas", k=1)
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    # a formula start is refused where it is written (issue 16): the page says why
    with pytest.raises(JudgmentRefused, match="may not start with '='"):
        judgment_submit(annotator=annotator, assignment=lease, text='=HYPERLINK("http://x") ' + EVIL_TEXT)
    # one stored before that rule (or by hand) is still neutralised in the CSV export
    Judgment.objects.create(
        campaign_item=lease.campaign_item,
        annotator=annotator,
        text='=HYPERLINK("http://x") ' + EVIL_TEXT,
    )
    CampaignItem.objects.filter(pk=lease.campaign_item_id).update(judgment_count=1)
    Assignment.objects.filter(pk=lease.pk).update(status=AssignmentStatus.SUBMITTED)
    campaign_aggregate(campaign=campaign)
    written = Reason.objects.get(source_file="campaign:rw")
    assert written.text == '=HYPERLINK("http://x") ' + EVIL_TEXT  # stored as written
    adjudication_record(item=lease.campaign_item, curator=curator, decision="accept", note=EVIL_TEXT)
    # the written reason then shows up in a plausibility campaign and on its curator page
    campaign_create(name="pl", task="reason_plausibility", items="reasons", filters={"origin": "human"})
    client.force_login(curator)
    adjudication = reverse("annotation:campaign-adjudicate", args=["rw"]) + "?show=all"
    rw_page = client.get(adjudication).content.decode()
    assert "=HYPERLINK(&quot;http://x&quot;) &lt;script&gt;" in rw_page  # the written reason, as text
    for name in ("rw", "pl"):
        page = reverse("annotation:campaign-adjudicate", args=[name]) + "?show=all"
        _assert_inert(client.get(page).content.decode())
    jsonl = b"".join(
        client.get(reverse("annotation:campaign-export", args=["rw", "jsonl"])).streaming_content
    )
    assert json.loads(jsonl.decode().splitlines()[0])["text"] == '=HYPERLINK("http://x") ' + EVIL_TEXT
    raw = b"".join(client.get(reverse("annotation:campaign-export", args=["rw", "csv"])).streaming_content)
    row = next(csv.DictReader(io.StringIO(raw.decode())))
    assert row["text"] == '\'=HYPERLINK("http://x") ' + EVIL_TEXT
    client.force_login(annotator)
    html = client.post(
        reverse("annotation:campaign-annotate", args=["pl"]), {"start": "1"}, follow=True
    ).content.decode()
    _assert_inert(html)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\uff1dHYPERLINK(1)", "'\uff1dHYPERLINK(1)"),
        (" =1", "' =1"),
        ("\tx", "'\tx"),
        ("plain", "plain"),
        ("a=b", "a=b"),
        (None, ""),
        (True, "true"),
        (12, "12"),
        (-3, "'-3"),
        ({"option": "A"}, '{"option": "A"}'),
    ],
)
def test_csv_cells_starting_with_a_formula_character_are_neutralised(value, expected):
    assert csv_safe(value) == expected


def test_csv_lines_round_trip_other_text_exactly():
    rows = [{"a": "<script>x</script>", "b": 'quote " and, comma'}]
    parsed = list(csv.reader(io.StringIO("".join(csv_lines(rows, ["a", "b"])))))
    assert parsed == [["a", "b"], ["<script>x</script>", 'quote " and, comma']]
