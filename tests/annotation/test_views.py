"""Annotator and curator pages: roles, the flow with and without htmx, exports."""

import csv
import io
import json
import re

import pytest
from django.urls import reverse

from annotation.models import Assignment, CampaignAnnotator, Judgment
from annotation.services import assignment_next, campaign_create, judgment_submit
from tests.datasets.factories import ReasonFactory, SchemaFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    SchemaFactory.create_batch(2)
    return campaign_create(name="sw", task="switchability", items="schemas", k=2)


def _assignment_in(html):
    match = re.search(r'name="assignment" value="(\d+)"', html)
    return int(match.group(1)) if match else None


def _login(client, user):
    client.force_login(user)
    return client


def _start(client, url):
    """Press Start without JavaScript: the POST leases, the page it redirects to (the
    item's own address) shows the item."""
    response = client.post(url, {"start": "1"}, follow=True)
    [(location, status)] = response.redirect_chain
    item = response.context["assignment"].campaign_item_id
    assert (location, status) == (f"{url}?item={item}", 302)
    return response


ANNOTATOR_PAGES = [("annotation:campaign-annotate", "get"), ("annotation:campaign-annotate", "post")]
CURATOR_PAGES = [
    ("annotation:campaign-detail", "get"),
    ("annotation:campaign-aggregate", "post"),
]


def test_anonymous_users_are_sent_to_log_in(client, campaign):
    for name in ("annotation:campaign-list", "annotation:campaign-create"):
        response = client.get(reverse(name))
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    response = client.get(reverse("annotation:campaign-annotate", args=[campaign.name]))
    assert response.status_code == 302


@pytest.mark.parametrize("role", ["researcher", "nobody", "curator"])
def test_only_annotators_may_annotate(client, campaign, role, request):
    _login(client, request.getfixturevalue(role))
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    assert client.get(url).status_code == 403
    assert client.post(url, {"assignment": 1, "answer": "switchable"}).status_code == 403
    assert not Judgment.objects.exists()


@pytest.mark.parametrize("role", ["researcher", "nobody", "annotator"])
def test_only_curators_may_curate(client, campaign, role, request):
    user = request.getfixturevalue(role)
    _login(client, user)
    name = campaign.name
    assert client.get(reverse("annotation:campaign-create")).status_code == 403
    assert client.post(reverse("annotation:campaign-create"), {"name": "x"}).status_code == 403
    assert client.get(reverse("annotation:campaign-detail", args=[name])).status_code == 403
    assert client.post(reverse("annotation:campaign-aggregate", args=[name])).status_code == 403
    assert client.get(reverse("annotation:campaign-export", args=[name, "csv"])).status_code == 403
    assert (
        client.post(reverse("annotation:annotator-pause", args=[name, user.pk]), {"paused": "1"}).status_code
        == 403
    )
    item = campaign.items.first()
    assert (
        client.post(
            reverse("annotation:item-adjudicate", args=[name, item.pk]), {"decision": "switchable"}
        ).status_code
        == 403
    )
    assert not CampaignAnnotator.objects.filter(paused=True).exists()


def test_people_without_a_role_see_no_campaign_list(client, nobody, researcher):
    for user in (nobody, researcher):
        _login(client, user)
        assert client.get(reverse("annotation:campaign-list")).status_code == 403


def test_annotator_sees_the_campaign_list_with_own_progress(client, annotator, campaign):
    _login(client, annotator)
    response = client.get(reverse("annotation:campaign-list"))
    assert response.status_code == 200
    assert reverse("annotation:campaign-annotate", args=["sw"]) in response.content.decode()


def test_opening_the_annotator_page_leases_nothing_until_start(client, annotator, campaign):
    _login(client, annotator)
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    for _ in range(2):  # a reload, a link preview, a prefetch
        page = client.get(url)
        assert page.status_code == 200 and page.context["assignment"] is None
        html = page.content.decode()
        assert 'id="start-form"' in html and 'name="start"' in html and 'name="answer"' not in html
    assert not Assignment.objects.exists()
    assert not CampaignAnnotator.objects.exists()
    response = client.post(url, {"start": "1"}, HTTP_HX_REQUEST="true")  # with htmx: the fragment
    lease = Assignment.objects.get()
    assert lease.annotator == annotator
    assert _assignment_in(response.content.decode()) == lease.pk
    # the page shows the item in hand from now on, and reading it leases nothing more
    for _ in range(2):
        assert client.get(url).context["assignment"] == lease
    assert Assignment.objects.count() == 1


def test_a_finished_campaign_offers_no_start(client, annotator, campaign):
    _login(client, annotator)
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    for _ in range(2):
        lease = assignment_next(campaign=campaign, annotator=annotator)
        assert lease is not None
        judgment_submit(annotator=annotator, assignment=lease, answer="switchable")
    html = client.get(url).content.decode()
    assert 'id="done"' in html and 'id="start-form"' not in html


def test_annotating_without_javascript_post_and_redirect(client, annotator, campaign):
    _login(client, annotator)
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    page = _start(client, url)
    html = page.content.decode()
    assert page.status_code == 200
    assert "<kbd>y</kbd>" in html and "<kbd>n</kbd>" in html
    assert "<details" in html and "Worked examples" in html
    assert 'id="switched"' in html and "The suitcase doesn&#x27;t fit into the trophy" in html
    lease = page.context["assignment"]
    response = client.post(url, {"assignment": lease.pk, "answer": "switchable", "client_elapsed_ms": "2345"})
    # the next item's own address: the browser's Back returns to the answered item
    assert response.status_code == 302 and response["Location"].startswith(f"{url}?item=")
    j = Judgment.objects.get()
    assert (j.answer, j.duration_ms, j.annotator_id) == ("switchable", 2345, annotator.pk)
    follow = client.get(response["Location"])
    assert follow.context["assignment"].campaign_item_id != lease.campaign_item_id
    assert response["Location"] == f"{url}?item={follow.context['assignment'].campaign_item_id}"


def test_htmx_post_returns_the_next_item_fragment(client, annotator, campaign):
    _login(client, annotator)
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    lease = _start(client, url).context["assignment"]
    response = client.post(url, {"assignment": lease.pk, "answer": "not_switchable"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<section id="item"')
    assert "<html" not in html and "topbar" not in html
    assert "1 done" in html
    second = _assignment_in(html)
    assert second is not None and second != lease.pk
    response = client.post(url, {"assignment": second, "answer": "switchable"}, HTTP_HX_REQUEST="true")
    assert 'id="done"' in response.content.decode()
    assert Judgment.objects.count() == 2


def test_a_double_click_records_one_judgment(client, annotator, campaign):
    _login(client, annotator)
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    lease = _start(client, url).context["assignment"]
    for _ in range(2):
        client.post(url, {"assignment": lease.pk, "answer": "switchable"}, HTTP_HX_REQUEST="true")
    assert Judgment.objects.count() == 1


def test_an_invalid_answer_shows_the_same_item_with_an_error(client, annotator, campaign):
    _login(client, annotator)
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    lease = _start(client, url).context["assignment"]
    response = client.post(url, {"assignment": lease.pk, "answer": "dunno"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "answer: &#x27;dunno&#x27; is not one of" in response.content.decode()
    assert _assignment_in(response.content.decode()) == lease.pk
    assert client.post(url, {"assignment": lease.pk, "answer": ""}).status_code == 400
    assert not Judgment.objects.exists()


def test_posting_someone_elses_assignment_records_nothing(client, annotator, annotator2, campaign):
    other = assignment_next(campaign=campaign, annotator=annotator2)
    _login(client, annotator)
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    assert other is not None
    response = client.post(url, {"assignment": other.pk, "answer": "switchable"})
    assert response.status_code == 404  # out of reach
    assert not Judgment.objects.exists()


def test_the_annotator_page_is_blind(client, make_annotators, curator):
    SchemaFactory.create()
    gold = SchemaFactory.create(switchable=True)
    campaign = campaign_create(
        name="b", task="switchability", items="schemas", k=3, gold_ids=[gold.pk], gold_rate=1
    )
    a, b = make_annotators(2)
    lease = assignment_next(campaign=campaign, annotator=a)
    judgment_submit(annotator=a, assignment=lease, answer="not_switchable")
    _login(client, b)
    html = _start(client, reverse("annotation:campaign-annotate", args=["b"])).content.decode()
    for leak in ("not_switchable: 1", "gold", "agreement", a.username, "votes"):
        assert leak not in html


@pytest.mark.parametrize(
    ("task", "items", "shown", "hidden"),
    [
        ("associativity", "schemas", ["it is too large", "the trophy", "the suitcase"], ["doesn&#x27;t fit"]),
        ("reason_writing", "schemas", ["refers to <strong>the trophy</strong> because", "<textarea"], []),
        ("reason_plausibility", "reasons", ["big things do not fit", "<kbd>y</kbd>"], []),
        ("knowledge_type", "reasons", ["<kbd>6</kbd> Others", "<kbd>1</kbd> Property"], []),
    ],
)
def test_each_task_shows_its_content(client, annotator, task, items, shown, hidden):
    ReasonFactory.create() if items == "reasons" else SchemaFactory.create()
    campaign_create(name="t", task=task, items=items)
    _login(client, annotator)
    html = _start(client, reverse("annotation:campaign-annotate", args=["t"])).content.decode()
    for s in shown:
        assert s in html
    for s in hidden:
        assert s not in html


def test_comve_check_hides_the_key(client, annotator):
    from tests.datasets.factories import ComVEItemFactory

    ComVEItemFactory.create(references=["SECRET REFERENCE"])
    campaign_create(name="cc", task="comve_check", items="comve")
    _login(client, annotator)
    response = _start(client, reverse("annotation:campaign-annotate", args=["cc"]))
    html = response.content.decode()
    assert "He put an elephant into the fridge." in html and "<kbd>c</kbd>" in html
    assert "SECRET REFERENCE" not in html
    assert "correct" not in html.lower()


def test_paused_annotator_is_told_so(client, annotator, campaign):
    from annotation.services import campaign_annotator_pause

    campaign_annotator_pause(campaign=campaign, annotator=annotator)
    _login(client, annotator)
    html = client.get(reverse("annotation:campaign-annotate", args=["sw"])).content.decode()
    assert 'id="refused"' in html and "paused" in html
    assert 'id="start-form"' not in html and not Assignment.objects.exists()


def test_curator_creates_a_campaign_on_the_page(client, curator):
    SchemaFactory.create_batch(3)
    _login(client, curator)
    response = client.post(
        reverse("annotation:campaign-create"),
        {
            "name": "new-one",
            "task": "associativity",
            "items": "schemas",
            "filters": "collection=wsc273",
            "gold_rate": "0",
            "lease_seconds": "600",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:campaign-detail", args=["new-one"])
    page = client.get(response["Location"])
    assert "0 of 9 judgments" in page.content.decode()


def test_curator_sees_a_service_error_on_the_create_page(client, curator):
    SchemaFactory.create()
    _login(client, curator)
    response = client.post(
        reverse("annotation:campaign-create"),
        {
            "name": "x",
            "task": "associativity",
            "items": "schemas",
            "filters": "colour=red",
            "gold_rate": "0",
            "lease_seconds": "600",
        },
    )
    assert response.status_code == 200
    assert "filter &#x27;colour&#x27;" in response.content.decode()


def test_curator_page_pause_adjudicate_aggregate(client, curator, make_annotators, campaign):
    a, b = make_annotators(2)
    for user in (a, b):
        while (lease := assignment_next(campaign=campaign, annotator=user)) is not None:
            judgment_submit(
                annotator=user, assignment=lease, answer="switchable" if user == a else "not_switchable"
            )
    _login(client, curator)
    detail = reverse("annotation:campaign-detail", args=["sw"])
    html = client.get(detail).content.decode()
    assert "4 of 4 judgments" in html and a.username in html
    client.post(reverse("annotation:annotator-pause", args=["sw", a.pk]), {"paused": "1"})
    assert CampaignAnnotator.objects.get(annotator=a).paused
    preview = client.get(reverse("annotation:campaign-aggregate", args=["sw"])).content.decode()
    assert 'data-figure="labels-changed">2<' in preview
    assert "2 flagged" not in client.get(detail).content.decode()  # the preview wrote nothing
    client.post(reverse("annotation:campaign-aggregate", args=["sw"]), {"confirm": "1"})
    html = client.get(detail).content.decode()
    assert "2 flagged for review" in html
    item = campaign.items.first()
    client.post(
        reverse("annotation:item-adjudicate", args=["sw", item.pk]), {"decision": "switchable", "note": "ok"}
    )
    assert item.adjudications.get().decision == "switchable"
    fragment = client.get(detail + "?part=progress", HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<section id="progress"')


def test_exports_jsonl_and_csv(client, curator, annotator, campaign):
    lease = assignment_next(campaign=campaign, annotator=annotator)
    judgment_submit(annotator=annotator, assignment=lease, answer="switchable", duration_ms=10)
    _login(client, curator)
    response = client.get(reverse("annotation:campaign-export", args=["sw", "jsonl"]))
    rows = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert rows[0]["answer"] == "switchable" and rows[0]["annotator"] == annotator.username
    response = client.get(reverse("annotation:campaign-export", args=["sw", "csv"]))
    table = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert table[0]["duration_ms"] == "10"
    assert client.get(reverse("annotation:campaign-export", args=["sw", "xlsx"])).status_code == 404


def test_curator_items_table_pages(client, curator):
    SchemaFactory.create_batch(201)
    campaign_create(name="big", task="associativity", items="schemas")
    _login(client, curator)
    url = reverse("annotation:campaign-adjudicate", args=["big"]) + "?show=all"
    first = client.get(url)
    assert len(first.context["listing"].rows) == 200 and "page=2" in first.content.decode()
    second = client.get(url + "&page=2")
    assert len(second.context["listing"].rows) == 1
    assert client.get(url + "&page=x").status_code == 200


def test_an_answer_on_an_item_in_hand_is_recorded_after_the_campaign_closed(client, annotator, campaign):
    from annotation.models import CampaignStatus
    from annotation.services import campaign_status_set

    _login(client, annotator)
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    lease = _start(client, url).context["assignment"]
    campaign_status_set(campaign=campaign, status=CampaignStatus.CLOSED)
    response = client.post(url, {"assignment": lease.pk, "answer": "switchable"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert Judgment.objects.filter(annotator=annotator).count() == 1
    assert 'id="refused"' in response.content.decode()  # and no next item: closed
    assert client.get(url).status_code == 404


def test_a_post_naming_another_campaign_or_garbage_records_nothing(client, annotator, campaign):
    SchemaFactory.create()
    campaign_create(name="other", task="associativity", items="schemas")
    _login(client, annotator)
    lease = _start(client, reverse("annotation:campaign-annotate", args=["sw"])).context["assignment"]
    other = reverse("annotation:campaign-annotate", args=["other"])
    assert client.post(other, {"assignment": lease.pk, "answer": "switchable"}).status_code == 404
    assert client.post(other, {"assignment": "x", "answer": "switchable"}).status_code == 404
    assert not Judgment.objects.exists()
