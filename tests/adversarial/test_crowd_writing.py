"""A crowd participant writing through a study link on a round's writing campaign: the
writing form on the study's page, the models' verdict, keep and retract counted as the
participant's answers (batch, fast answers, completion code), a session that ends on the
writer's actions, no curator links, and screening refused for a writing campaign."""

import re

import pytest
from django.conf import settings
from django.urls import reverse

from annotation.crowd import services as crowd
from annotation.errors import AnnotationError
from annotation.models import (
    AdversarialItem,
    AdversarialStatus,
    AdversarialTry,
    Assignment,
    Judgment,
    Participant,
    ParticipantState,
    TryStatus,
)
from annotation.services import campaign_create
from tests.adversarial.factories import TWINS, adversarial_round, writing_campaign
from tests.annotation.factories import adversarial_item
from tests.annotation.factories import adversarial_round as validation_round

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def study(client, curator, models_dir):
    """A Winograd round with the tiny causal LM in the loop, its writing campaign opened to
    Prolific (a batch of 2, answers under 600 s flagged), and a participant past the consent."""
    found = adversarial_round(slots=3)
    link = crowd.study_link_create(
        campaign=writing_campaign(found),
        platform="prolific",
        consent="ok",
        completion_code="WROTE2",
        batch_size=2,
        min_seconds=600,
        fooling_bonus="0.50",
        user=curator,
    )
    token = crowd.study_link_token(link)
    client.post(f"/study/{token}/?PROLIFIC_PID=WRITER1&STUDY_ID=S&SESSION_ID=X")
    client.post(reverse("study:consent", args=[token]), {"agree": "yes"})
    return found, link, token


def _lease(participant):
    return Assignment.objects.select_related("campaign_item").get(annotator=participant.user, status="leased")


def _start(client, found):
    url = reverse("annotation:campaign-annotate", args=[writing_campaign(found).name])
    return client.post(url, {"start": "1"}, **HTMX)


def _check(client, found, assignment, captured, content=TWINS):
    with captured(execute=True):
        return client.post(
            reverse("adversarial:check", args=[writing_campaign(found).name]),
            {"assignment": assignment.pk, **content},
            **HTMX,
        )


def test_a_participant_writes_checks_keeps_and_retracts_through_the_study_link(
    client, study, django_capture_on_commit_callbacks
):
    found, link, token = study
    campaign = writing_campaign(found)
    participant = Participant.objects.get()
    assert participant.state == ParticipantState.WORKING
    # the study's page is the annotate page with the writing form, and no curator links
    html = _start(client, found).content.decode()
    assert "Check with the models" in html and 'name="sentence"' in html and 'name="twin_answer"' in html
    assert reverse("adversarial:check", args=[campaign.name]) in html
    assert "0 of 2 done in your batch" in html
    page = client.get(reverse("annotation:campaign-annotate", args=[campaign.name])).content.decode()
    assert f'data-study-entry="{crowd.participant_reentry_path(participant)}"'.replace("&", "&amp;") in page
    for curator_only in (
        reverse("crowd:links", args=[campaign.name]),
        reverse("crowd:participants", args=[campaign.name]),
        reverse("annotation:campaign-detail", args=[campaign.name]),
        "/evaluation/adversarial/rounds/",
        "/adversarial/figures/",
        "Log out",
    ):
        assert curator_only not in page and curator_only not in html
    assert [href for href in re.findall(r'href="([^"]+)"', page) if "/pipelines/" in href] == []

    # check with the models: the try is scored at once (Celery eager), the panel shows the verdict
    first = _lease(participant)
    checked = _check(client, found, first, django_capture_on_commit_callbacks)
    assert checked.status_code == 200 and checked["HX-Retarget"] == "#adversarial-panel"
    attempt = AdversarialTry.objects.get()
    assert attempt.status == TryStatus.SCORED and attempt.item.writer == participant.user
    panel = client.get(reverse("adversarial:try", args=[attempt.pk]), **HTMX).content.decode()
    assert 'id="adversarial-verdict"' in panel and "tiny-llama" in panel and 'id="adversarial-keep"' in panel
    margin = attempt.verdicts["tiny-llama"]["twins"][0]["margin"]
    assert f"{margin:.3f}" in panel

    # keep: the participant's answer (their batch, the fast-answer flag), on to the next slot
    kept = client.post(reverse("adversarial:keep", args=[campaign.name]), {"assignment": first.pk}, **HTMX)
    assert kept.status_code == 204 and kept["HX-Redirect"] == reverse(
        "annotation:campaign-annotate", args=[campaign.name]
    )
    participant.refresh_from_db()
    assert participant.answered == 1 and participant.fast_answers == 1  # written in under 600 s
    assert participant.state == ParticipantState.WORKING
    item = AdversarialItem.objects.get()
    assert item.status == AdversarialStatus.KEPT and item.content == attempt.content
    assert Judgment.objects.get(annotator=participant.user).answer == "kept"
    # their study handed out the next slot already: the page they are sent to shows it
    second = _lease(participant)
    html = client.get(kept["HX-Redirect"]).content.decode()
    assert "1 of 2 done in your batch" in html and "Check with the models" in html
    assert f'name="assignment" value="{second.pk}"' in html and "Item kept after 1 try" in html

    # retract the second: it counts as their second answer, the batch is complete
    assert second.campaign_item_id != first.campaign_item_id
    _check(client, found, second, django_capture_on_commit_callbacks)
    retracted = client.post(
        reverse("adversarial:retract", args=[campaign.name]), {"assignment": second.pk}, **HTMX
    )
    assert retracted.status_code == 204
    participant.refresh_from_db()
    assert participant.answered == 2 and participant.fast_answers == 2
    assert participant.state == ParticipantState.DONE
    assert AdversarialItem.objects.get(assignment=second).status == AdversarialStatus.RETRACTED
    # the retract that completes the batch sends them to the completion code
    assert retracted["HX-Redirect"] == reverse("study:done", args=[token])
    done = client.get(retracted["HX-Redirect"]).content.decode()
    assert "WROTE2" in done and "submissions/complete?cc=WROTE2" in done
    # no third slot for them, and the writer's actions are closed with the batch
    again = client.post(
        reverse("adversarial:check", args=[campaign.name]), {"assignment": second.pk, **TWINS}
    )
    assert again.status_code == 302 and AdversarialTry.objects.count() == 2  # refused: retracted already
    assert client.get(again.url).url == reverse("study:done", args=[token])
    assert Assignment.objects.filter(annotator=participant.user).count() == 2


def test_a_participants_expired_session_on_the_writers_actions_goes_back_through_the_link(
    client, study, django_capture_on_commit_callbacks
):
    """The writer's actions, as every page, answer a signed-out htmx request with
    HX-Redirect to the sign-in page; the participant's page carries their way back
    (``data-study-entry``), which htmx-errors.js follows instead, and the link resumes them
    on the slot in hand with its latest try."""
    found, link, token = study
    campaign = writing_campaign(found)
    participant = Participant.objects.get()
    _start(client, found)
    slot = _lease(participant)
    _check(client, found, slot, django_capture_on_commit_callbacks)
    attempt = AdversarialTry.objects.get()
    page = client.get(reverse("annotation:campaign-annotate", args=[campaign.name])).content.decode()
    entry = crowd.participant_reentry_path(participant)
    assert f'data-study-entry="{entry.replace("&", "&amp;")}"' in page
    # the session ends (the browser keeps its study cookie, not the session)
    del client.cookies[settings.SESSION_COOKIE_NAME]
    here = reverse("annotation:campaign-annotate", args=[campaign.name])
    for response in (
        client.post(
            reverse("adversarial:check", args=[campaign.name]),
            {"assignment": slot.pk, **TWINS},
            HTTP_HX_CURRENT_URL=f"http://testserver{here}",
            **HTMX,
        ),
        client.post(reverse("adversarial:keep", args=[campaign.name]), {"assignment": slot.pk}, **HTMX),
        client.post(reverse("adversarial:retract", args=[campaign.name]), {"assignment": slot.pk}, **HTMX),
        client.get(reverse("adversarial:try", args=[attempt.pk]), **HTMX),
        client.post(reverse("adversarial:again", args=[attempt.pk]), **HTMX),
    ):
        # htmx-errors.js takes a participant's page to data-study-entry on this redirect
        assert response.status_code == 204 and response["HX-Redirect"].startswith("/accounts/login/")
    assert AdversarialTry.objects.count() == 1 and not Judgment.objects.exists()
    # the study's link (its landing page's button) signs them in again, on the slot in hand
    resumed = client.post(entry)
    assert resumed.status_code == 302
    assert client.get(resumed.url, follow=True).status_code == 200
    page = client.get(here).content.decode()
    assert "Check with the models" in page and 'id="adversarial-verdict"' in page
    assert f'value="{TWINS["candidate_a"]}"' in page
    kept = client.post(reverse("adversarial:keep", args=[campaign.name]), {"assignment": slot.pk}, **HTMX)
    assert kept.status_code == 204
    participant.refresh_from_db()
    assert participant.answered == 1 and participant.entries == 2


@pytest.mark.parametrize(
    "make",
    [
        lambda: writing_campaign(adversarial_round()),
        lambda: campaign_create(name="write", task="comve_writing", items="slots", slots=3, k=1),
        lambda: campaign_create(
            name="validate",
            task="adversarial_validation",
            items="adversarial",
            ids=[adversarial_item(round=validation_round()).pk],
        ),
    ],
    ids=["adversarial_winograd", "comve_writing", "adversarial_validation"],
)
def test_a_writing_campaigns_link_refuses_screening_with_the_field_named(client, curator, make):
    """A written item has no right answer to check (nor a known validation), so a writing
    campaign, or a round's validation, has no gold items: its study link screens nobody,
    and asking for it says so under the field."""
    campaign = make()
    with pytest.raises(AnnotationError) as refused:
        crowd.study_link_create(
            campaign=campaign, platform="prolific", consent="ok", screening_items=1, user=curator
        )
    assert refused.value.message.startswith("screening items: ")
    assert "written" in refused.value.message or "writing" in refused.value.message
    assert "no right answer" in refused.value.message and "add gold items" not in refused.value.message
    client.force_login(curator)
    response = client.post(
        reverse("crowd:links", args=[campaign.name]),
        {"platform": "prolific", "consent": "ok", "screening_items": "2", "pass_mark": "0.8"},
    )
    html = response.content.decode()
    assert response.status_code == 400 and "no right answer" in html
    assert not campaign.study_links.exists()
    # without screening the link opens
    assert crowd.study_link_create(campaign=campaign, platform="prolific", consent="ok", user=curator)
