"""An annotator page that forgives (issue 14), the pages: an item's own address, the
previous items and their answers changed, the skip, the time left on a lease, and what
a request from a page whose session or form has expired gets back. Every endpoint is
tried by a second annotator, who never reaches the first one's items, answers,
revisions or progress."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, AssignmentStatus, Judgment, JudgmentRevision
from annotation.services import assignment_next, campaign_aggregate, campaign_create, judgment_submit
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


@pytest.fixture
def campaign():
    SchemaFactory.create_batch(4)
    return campaign_create(name="sw", task="switchability", items="schemas", k=2)


def _page(campaign, item=None):
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    return url if item is None else f"{url}?item={item}"


def _answered(campaign, annotator, answer="switchable"):
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    return judgment_submit(annotator=annotator, assignment=lease, answer=answer).judgment


def _checked(html):
    return re.findall(r'value="(\w+)"[^>]*required checked', html)


def test_an_answered_item_has_its_own_address_with_the_answer_to_change(client, annotator, campaign):
    first = _answered(campaign, annotator, "not_switchable")
    client.force_login(annotator)
    html = client.get(_page(campaign, first.campaign_item_id)).content.decode()
    assert f"Your answer on item {first.campaign_item_id}" in html
    assert _checked(html) == ["not_switchable"]
    change = reverse("annotation:item-change", args=[campaign.name, first.campaign_item_id])
    assert f'action="{change}"' in html
    assert 'name="assignment"' not in html  # a change leases nothing and submits nothing new
    assert not Assignment.objects.filter(status=AssignmentStatus.LEASED).exists()


def test_the_current_item_links_to_the_previous_one_and_lists_recent_answers(client, annotator, campaign):
    first = _answered(campaign, annotator)
    second = _answered(campaign, annotator, "not_switchable")
    current = assignment_next(campaign=campaign, annotator=annotator)
    assert current is not None
    client.force_login(annotator)
    html = client.get(_page(campaign)).content.decode()
    assert f'href="{_page(campaign, second.campaign_item_id)}" id="previous-item"' in html
    recent = re.findall(r'<li><a href="[^"]*\?item=(\d+)"', html)
    assert recent == [str(second.campaign_item_id), str(first.campaign_item_id)]  # newest first
    # the review page of the second answer goes back to the first and on to the current item
    html = client.get(_page(campaign, second.campaign_item_id)).content.decode()
    assert f'href="{_page(campaign, first.campaign_item_id)}" id="previous-item"' in html
    assert f'href="{_page(campaign)}" id="current-item"' in html
    # the item in hand at its own address is the item form, with its lease's time
    html = client.get(_page(campaign, current.campaign_item_id)).content.decode()
    assert f'name="assignment" value="{current.pk}"' in html
    assert "data-lease-expires" in html and "Held for you until" in html


def test_an_htmx_answer_brings_the_next_item_and_its_recent_answers_on_demand(
    client, annotator, campaign, django_assert_max_num_queries
):
    first = _answered(campaign, annotator)
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    client.force_login(annotator)
    client.get(_page(campaign))  # the session is read once: the count below is the answer's
    # what the answer costs: the session, the lease, the judgment, the next lease, the
    # progress and the next item (no recent-answers list, no look-up of the previous item)
    with django_assert_max_num_queries(17):
        response = client.post(
            _page(campaign), {"assignment": lease.pk, "answer": "not_switchable"}, headers=HX
        )
    html = response.content.decode()
    # Previous opens the answer just given; the list itself is not in the fragment
    assert f'href="{_page(campaign, lease.campaign_item_id)}" id="previous-item"' in html
    assert "<li><a href" not in html
    recent_url = reverse("annotation:campaign-recent", args=[campaign.name])
    assert f'hx-get="{recent_url}" hx-trigger="toggle"' in html and "Loading" in html
    # opening the fold fetches the list, newest first, the changed answer marked
    client.post(
        reverse("annotation:item-change", args=[campaign.name, first.campaign_item_id]),
        {"answer": "not_switchable"},
    )
    listing = client.get(recent_url, headers=HX).content.decode()
    assert listing.lstrip().startswith("<ol>")
    assert re.findall(r"\?item=(\d+)", listing) == [str(lease.campaign_item_id), str(first.campaign_item_id)]
    assert listing.count("(changed)") == 1


def test_changing_an_answer_without_javascript_returns_to_the_item_in_hand(client, annotator, campaign):
    first = _answered(campaign, annotator, "switchable")
    current = assignment_next(campaign=campaign, annotator=annotator)
    assert current is not None
    client.force_login(annotator)
    url = reverse("annotation:item-change", args=[campaign.name, first.campaign_item_id])
    response = client.post(url, {"answer": "not_switchable"})
    assert response.status_code == 302 and response["Location"] == _page(campaign, current.campaign_item_id)
    assert Judgment.objects.get(pk=first.pk).answer == "not_switchable"
    assert Judgment.objects.filter(annotator=annotator).count() == 1
    assert JudgmentRevision.objects.get().answer == "switchable"
    page = client.get(response["Location"])
    assert "was changed" in page.content.decode()
    assert page.context["assignment"].pk == current.pk  # the same item, nothing skipped


def test_changing_an_answer_with_htmx_returns_the_item_fragment_and_its_address(client, annotator, campaign):
    first = _answered(campaign, annotator, "switchable")
    client.force_login(annotator)
    url = reverse("annotation:item-change", args=[campaign.name, first.campaign_item_id])
    response = client.post(url, {"answer": "not_switchable"}, headers=HX)
    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith('<section id="item"')
    assert response["HX-Push-Url"] == _page(campaign)  # no item in hand: the campaign page
    assert "was changed" in html and 'id="start-form"' in html
    assert not Assignment.objects.filter(status=AssignmentStatus.LEASED).exists()


def test_a_bad_changed_answer_says_why_and_changes_nothing(client, annotator, campaign):
    first = _answered(campaign, annotator, "switchable")
    client.force_login(annotator)
    url = reverse("annotation:item-change", args=[campaign.name, first.campaign_item_id])
    response = client.post(url, {"answer": "dunno"})
    assert response.status_code == 400
    assert "answer: &#x27;dunno&#x27; is not one of" in response.content.decode()
    assert Judgment.objects.get().answer == "switchable" and not JudgmentRevision.objects.exists()


def test_an_aggregated_item_shows_its_answer_locked_and_refuses_a_change(client, annotator, annotator2):
    SchemaFactory.create()
    campaign = campaign_create(name="one", task="switchability", items="schemas", k=2)
    first = _answered(campaign, annotator, "switchable")
    _answered(campaign, annotator2, "switchable")
    campaign_aggregate(campaign=campaign)
    client.force_login(annotator)
    html = client.get(_page(campaign, first.campaign_item_id)).content.decode()
    assert 'id="locked"' in html and "can no longer be changed" in html
    assert '<fieldset class="answer-area" disabled>' in html
    url = reverse("annotation:item-change", args=[campaign.name, first.campaign_item_id])
    response = client.post(url, {"answer": "not_switchable"})
    assert response.status_code == 409 and "aggregated" in response.content.decode()
    assert Judgment.objects.get(pk=first.pk).answer == "switchable"


def test_skipping_without_javascript_goes_to_the_next_items_address(client, annotator, campaign):
    client.force_login(annotator)
    client.post(_page(campaign), {"start": "1"})
    lease = Assignment.objects.get()
    response = client.post(reverse("annotation:campaign-skip", args=[campaign.name]), {"skip": lease.pk})
    following = Assignment.objects.get(status=AssignmentStatus.LEASED)
    assert following.campaign_item_id != lease.campaign_item_id
    assert response.status_code == 302 and response["Location"] == _page(campaign, following.campaign_item_id)
    lease.refresh_from_db()
    assert lease.status == AssignmentStatus.SKIPPED and lease.skipped_at is not None
    assert "skipped" in client.get(response["Location"]).content.decode()
    # the skipped item's address says so and shows the item in hand
    html = client.get(_page(campaign, lease.campaign_item_id)).content.decode()
    assert f"You skipped item {lease.campaign_item_id}" in html
    assert f'name="assignment" value="{following.pk}"' in html


def test_skipping_with_htmx_returns_the_next_item_and_pushes_its_address(client, annotator, campaign):
    client.force_login(annotator)
    client.post(_page(campaign), {"start": "1"})
    lease = Assignment.objects.get()
    response = client.post(
        reverse("annotation:campaign-skip", args=[campaign.name]), {"skip": lease.pk}, headers=HX
    )
    following = Assignment.objects.get(status=AssignmentStatus.LEASED)
    assert response["HX-Push-Url"] == _page(campaign, following.campaign_item_id)
    assert f'name="skip" value="{following.pk}"' in response.content.decode()


def test_the_curator_page_counts_skips(client, annotator, curator, campaign):
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    client.force_login(annotator)
    client.post(reverse("annotation:campaign-skip", args=[campaign.name]), {"skip": lease.pk})
    client.force_login(curator)
    html = client.get(reverse("annotation:campaign-detail", args=[campaign.name])).content.decode()
    assert "1 skip (items given back unanswered)" in html
    assert '<td class="num" data-figure="skipped">1</td>' in html


def test_a_history_restore_gets_the_whole_page(client, annotator, campaign):
    first = _answered(campaign, annotator)
    client.force_login(annotator)
    response = client.get(
        _page(campaign, first.campaign_item_id),
        HTTP_HX_REQUEST="true",
        HTTP_HX_HISTORY_RESTORE_REQUEST="true",
    )
    assert "<html" in response.content.decode()


@pytest.mark.parametrize("role", ["researcher", "nobody", "curator"])
def test_only_annotators_may_skip_or_change(client, campaign, annotator, role, request):
    first = _answered(campaign, annotator)
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    client.force_login(request.getfixturevalue(role))
    skip = client.post(reverse("annotation:campaign-skip", args=[campaign.name]), {"skip": lease.pk})
    change = client.post(
        reverse("annotation:item-change", args=[campaign.name, first.campaign_item_id]),
        {"answer": "not_switchable"},
    )
    assert (skip.status_code, change.status_code) == (403, 403)
    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.LEASED
    assert Judgment.objects.get(pk=first.pk).answer == "switchable"


def test_anonymous_skip_and_change_are_sent_to_sign_in(client, campaign, annotator):
    first = _answered(campaign, annotator)
    for url in (
        reverse("annotation:campaign-skip", args=[campaign.name]),
        reverse("annotation:item-change", args=[campaign.name, first.campaign_item_id]),
    ):
        response = client.post(url, {"answer": "not_switchable", "skip": "1"})
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert JudgmentRevision.objects.count() == 0


# --- isolation: annotator B never reaches A's items, answers, revisions or progress ----


@pytest.fixture
def a_and_b(campaign, annotator, annotator2):
    """A answered one item (and changed it once) and holds another; B has none of them."""
    answered = _answered(campaign, annotator, "switchable")
    client_a = Client()
    client_a.force_login(annotator)
    change = reverse("annotation:item-change", args=[campaign.name, answered.campaign_item_id])
    client_a.post(change, {"answer": "not_switchable"})
    held = assignment_next(campaign=campaign, annotator=annotator)
    assert held is not None and JudgmentRevision.objects.count() == 1
    client_b = Client()
    client_b.force_login(annotator2)
    return answered, held, client_b


def test_b_cannot_open_the_address_of_as_items(campaign, a_and_b):
    answered, held, b = a_and_b
    for item in (answered.campaign_item_id, held.campaign_item_id):
        assert b.get(_page(campaign, item)).status_code == 404
        assert b.get(_page(campaign, item), headers=HX).status_code == 404
    assert b.get(_page(campaign) + "?item=x").status_code == 404


def test_b_cannot_change_as_answer(campaign, a_and_b):
    answered, _held, b = a_and_b
    url = reverse("annotation:item-change", args=[campaign.name, answered.campaign_item_id])
    assert b.post(url, {"answer": "switchable"}).status_code == 404
    assert b.post(url, {"answer": "switchable"}, headers=HX).status_code == 404
    assert Judgment.objects.get(pk=answered.pk).answer == "not_switchable"
    assert JudgmentRevision.objects.count() == 1


def test_b_cannot_skip_as_item(campaign, a_and_b):
    _answered_item, held, b = a_and_b
    url = reverse("annotation:campaign-skip", args=[campaign.name])
    assert b.post(url, {"skip": held.pk}).status_code == 404
    assert b.post(url, {"skip": held.pk}, headers=HX).status_code == 404
    assert Assignment.objects.get(pk=held.pk).status == AssignmentStatus.LEASED


def test_b_sees_none_of_as_answers_revisions_or_progress(campaign, a_and_b):
    answered, held, b = a_and_b
    response = b.get(_page(campaign))
    html = response.content.decode()
    assert response.context["recent"] == [] and response.context["previous_item"] is None
    assert 'id="recent"' not in html and 'id="previous-item"' not in html
    assert "0 done" in html and "Changed" not in html
    # B answers the item A answered and changed (K = 2): B's list and review page show
    # B's own answer, not A's, and nothing of A's revision
    b.post(_page(campaign), {"start": "1"})
    lease = Assignment.objects.get(annotator=response.context["user"], status=AssignmentStatus.LEASED)
    assert lease.campaign_item_id == answered.campaign_item_id  # the fullest item first
    b.post(_page(campaign), {"assignment": lease.pk, "answer": "switchable"})
    [mine] = b.get(_page(campaign)).context["recent"]
    assert (mine.item_id, mine.answer, mine.changed) == (answered.campaign_item_id, "Switchable", 0)
    html = b.get(_page(campaign, answered.campaign_item_id)).content.decode()
    assert _checked(html) == ["switchable"] and "Changed" not in html


def test_a_stale_form_says_csrf_and_a_signed_out_one_asks_to_sign_in(annotator, campaign):
    strict = Client(enforce_csrf_checks=True)
    response = strict.post(_page(campaign), {"start": "1"}, headers=HX)
    assert response.status_code == 403
    assert (response["X-Winnow-Failure"], response["X-Winnow-Sign-In"]) == ("csrf", "required")
    strict.force_login(annotator)
    response = strict.post(_page(campaign), {"start": "1"}, headers=HX)
    assert response.status_code == 403 and response["X-Winnow-Failure"] == "csrf"
    assert "X-Winnow-Sign-In" not in response
    assert not Assignment.objects.exists()


def test_a_changed_answer_marks_the_dashboards_agreement_out_of_date(client, curator, annotator, annotator2):
    SchemaFactory.create_batch(2)
    campaign = campaign_create(name="ag", task="switchability", items="schemas", k=2)
    for a, answer in ((annotator, "switchable"), (annotator2, "not_switchable")):
        for _ in range(2):
            _answered(campaign, a, answer)
    client.force_login(curator)
    client.post(reverse("annotation:campaign-agreement-compute", args=[campaign.name]))
    dashboard = reverse("annotation:dashboard")
    assert "<strong>out of date</strong>" not in client.get(dashboard).content.decode()
    changed = Judgment.objects.filter(annotator=annotator).first()
    assert changed is not None
    client.force_login(annotator)
    client.post(
        reverse("annotation:item-change", args=[campaign.name, changed.campaign_item_id]),
        {"answer": "not_switchable"},
    )
    client.force_login(curator)
    # as many judgments as when it was computed, but one answer changed since
    html = client.get(dashboard).content.decode()
    assert "<strong>out of date</strong>" in html and "Compute agreement" in html
    client.post(reverse("annotation:campaign-agreement-compute", args=[campaign.name]))
    assert "<strong>out of date</strong>" not in client.get(dashboard).content.decode()


def test_an_old_copy_of_an_answered_item_says_the_answer_was_kept(client, annotator, campaign):
    client.force_login(annotator)
    client.post(_page(campaign), {"start": "1"})
    lease = Assignment.objects.get()
    client.post(_page(campaign), {"assignment": lease.pk, "answer": "switchable"})
    # the browser's cache shows the answered item again and another answer is sent
    response = client.post(_page(campaign), {"assignment": lease.pk, "answer": "not_switchable"}, headers=HX)
    assert "that answer was kept. To change it, open it with Previous (p)." in response.content.decode()
    assert Judgment.objects.get().answer == "switchable" and not JudgmentRevision.objects.exists()
    # a double click (the same answer again) says nothing of the kind
    response = client.post(_page(campaign), {"assignment": lease.pk, "answer": "switchable"}, headers=HX)
    assert "that answer was kept" not in response.content.decode()
