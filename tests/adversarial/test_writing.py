"""The writer's side of adversarial writing on the annotate page: check with the models
(every try kept), bad input refused with the field named and nothing written, keep and
retract, the rows a kept item becomes (and a retracted one does not), a lost worker, the
inspiration panel, and the web process without torch."""

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import (
    AdversarialItem,
    AdversarialStatus,
    AdversarialTry,
    Judgment,
    PipelineKind,
    Task,
    TryStatus,
    ValidationStatus,
    Verdict,
)
from annotation.services import assignment_next, campaign_aggregate
from datasets.models import ComVEItem, Schema
from datasets.services import campaign_source_file
from tests.adversarial.factories import PAIR, TWINS, adversarial_round, slot_for, writing_campaign
from tests.annotation.factories import campaign_for
from tests.annotation.test_task_types import TEMPLATE_SYNTAX


def _clean(html: str) -> str:
    """The page or fragment, once checked for leaked template syntax."""
    assert [token for token in TEMPLATE_SYNTAX if token in html] == []
    return html


pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
HTMX = {"HTTP_HX_REQUEST": "true"}


def _check(client, found, assignment, content, captured, *, execute=True):
    url = reverse("adversarial:check", args=[writing_campaign(found).name])
    with captured(execute=execute):
        return client.post(url, {"assignment": assignment.pk, **content}, **HTMX)


@pytest.fixture
def writing(client, annotator, models_dir):
    """A Winograd round with the tiny causal LM in the loop, and the writer's slot in hand."""
    found = adversarial_round()
    assignment = slot_for(found, annotator)
    client.force_login(annotator)
    return found, assignment


def test_checking_shows_each_models_choice_and_margin_and_every_try_is_kept(
    client, writing, django_capture_on_commit_callbacks
):
    found, assignment = writing
    first = _check(client, found, assignment, TWINS, django_capture_on_commit_callbacks)
    assert first.status_code == 200 and first["HX-Retarget"] == "#adversarial-panel"
    attempt = AdversarialTry.objects.get()
    assert attempt.status == TryStatus.SCORED and attempt.number == 1
    verdict = attempt.verdicts["tiny-llama"]
    assert verdict["method"] == "partial" and len(verdict["twins"]) == 2
    for twin in verdict["twins"]:
        assert twin["choice"] in ("A", "B") and isinstance(twin["margin"], float)
        assert twin["fooled"] == (twin["margin"] < 0 or twin["choice"] != twin["right"])
    # the answer to the check says the try is with the models; the panel polls its verdict
    assert 'data-state="waiting"' in first.content.decode()
    html = _clean(client.get(reverse("adversarial:try", args=[attempt.pk]), **HTMX).content.decode())
    assert 'id="adversarial-verdict"' in html and "tiny-llama" in html and 'id="adversarial-keep"' in html
    assert f"{verdict['twins'][0]['margin']:.3f}" in html
    # revise and check again: a second try, the first kept as it was
    revised = {**TWINS, "twin": "The trophy doesn't fit into the suitcase because [it] is too little."}
    _check(client, found, assignment, revised, django_capture_on_commit_callbacks)
    tries = list(AdversarialTry.objects.order_by("number"))
    assert [t.number for t in tries] == [1, 2] and tries[0].content["twin"] == TWINS["twin"]
    assert tries[1].content["twin"].endswith("too little.") and tries[1].status == TryStatus.SCORED
    item = AdversarialItem.objects.get()
    assert item.tries == 2 and item.status == AdversarialStatus.WRITING and item.round == found
    # the page shows the latest try, its verdict and the tries
    page = client.get(reverse("annotation:campaign-annotate", args=[writing_campaign(found).name]))
    text = _clean(page.content.decode())
    assert "too little." in text and 'id="adversarial-tries"' in text and 'id="adversarial-verdict"' in text
    assert "Check with the models" in text


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (
            {"sentence": "The trophy doesn't fit into the suitcase because it is too large."},
            "sentence",
            "mark the pronoun",
        ),
        (
            {"twin": "The trophy doesn't fit into the box because [it] is too small."},
            "twin",
            "does not appear",
        ),
        ({"twin": TWINS["sentence"]}, "twin", "must differ"),
        ({"twin_answer": "A"}, "twin_answer", "flip"),
    ],
)
def test_bad_input_is_refused_with_the_field_named_and_nothing_written(
    change, field, words, client, writing, django_capture_on_commit_callbacks
):
    found, assignment = writing
    response = _check(client, found, assignment, {**TWINS, **change}, django_capture_on_commit_callbacks)
    html = response.content.decode()
    assert response.status_code == 200 and "Nothing was sent to the models" in html
    start = html.index(f'id="adv-error-{field}"')
    assert words in html[start : html.index("</span>", start)]
    assert 'id="adv-error-candidate_a" hx-swap-oob="true" role="alert"></span>' in html  # the others cleared
    assert not AdversarialItem.objects.exists() and not AdversarialTry.objects.exists()
    assert not Judgment.objects.exists()


def test_without_javascript_a_refusal_returns_to_the_page_with_the_fields_named(
    client, writing, django_capture_on_commit_callbacks
):
    found, assignment = writing
    url = reverse("adversarial:check", args=[writing_campaign(found).name])
    response = client.post(url, {"assignment": assignment.pk, **{**TWINS, "twin_answer": "A"}}, follow=True)
    assert "twin_answer: the twin must flip the answer" in response.content.decode()
    assert not AdversarialTry.objects.exists()


def test_a_kept_item_becomes_a_twin_pair_of_the_rounds_collection_linked_to_it(
    client, writing, annotator, django_capture_on_commit_callbacks
):
    found, assignment = writing
    _check(client, found, assignment, TWINS, django_capture_on_commit_callbacks)
    kept = client.post(
        reverse("adversarial:keep", args=[writing_campaign(found).name]),
        {"assignment": assignment.pk},
        **HTMX,
    )
    assert kept.status_code == 204
    assert kept["HX-Redirect"] == reverse("annotation:campaign-annotate", args=[writing_campaign(found).name])
    item = AdversarialItem.objects.get()
    attempt = AdversarialTry.objects.get()
    assert item.status == AdversarialStatus.KEPT and item.content == attempt.content
    assert item.verdict == attempt.verdict and item.seconds is not None and item.finished_at is not None
    assert item.fooled == [n for n, m in attempt.verdicts.items() if m["verdict"] != Verdict.NONE]
    judgment = Judgment.objects.get()
    assert (
        judgment.answer == "kept" and judgment.payload == attempt.content and judgment.annotator == annotator
    )
    campaign = writing_campaign(found)
    # the kept item is final: the annotate page's change of an answer is refused
    change = client.post(
        reverse("annotation:item-change", args=[campaign.name, assignment.campaign_item_id]),
        {"answer": "retracted"},
    )
    assert change.status_code == 409 and "final" in change.content.decode()
    judgment.refresh_from_db()
    assert judgment.answer == "kept"
    summary = campaign_aggregate(campaign=campaign)
    assert summary.created == 2 and summary.labels["kept"] == 1
    item.refresh_from_db()
    sentence, twin = item.schema, item.twin
    assert sentence is not None and twin is not None
    assert sentence.twin_id == twin.pk and twin.twin_id == sentence.pk
    assert (sentence.text_before, sentence.pronoun, sentence.text_after, sentence.answer) == (
        "The trophy doesn't fit into the suitcase because",
        "it",
        "is too large.",
        "A",
    )
    assert twin.text_after == "is too small." and twin.answer == "B" and twin.candidate_b == "the suitcase"
    assert {sentence.collection, twin.collection} == {"adv"}
    assert sentence.source_file == campaign_source_file(campaign.name) and sentence.source_row == judgment.pk
    assert sentence.import_batch is not None and len(sentence.file_checksum) == 64
    # aggregating again makes nothing new
    assert campaign_aggregate(campaign=campaign).created == 0 and Schema.objects.count() == 2


def test_a_retracted_item_makes_no_rows_and_keeps_its_tries(
    client, writing, django_capture_on_commit_callbacks
):
    found, assignment = writing
    _check(client, found, assignment, TWINS, django_capture_on_commit_callbacks)
    retracted = client.post(
        reverse("adversarial:retract", args=[writing_campaign(found).name]),
        {"assignment": assignment.pk},
        **HTMX,
    )
    assert retracted.status_code == 204
    item = AdversarialItem.objects.get()
    assert item.status == AdversarialStatus.RETRACTED and item.content == {} and item.fooled == []
    assert AdversarialTry.objects.filter(item=item).count() == 1
    assert Judgment.objects.get().answer == "retracted"
    summary = campaign_aggregate(campaign=writing_campaign(found))
    assert summary.created == 0 and summary.labels["retracted"] == 1
    assert not Schema.objects.exists() and item.validation == ValidationStatus.NOT_SENT
    # a retracted item takes no more tries and cannot be kept
    again = _check(client, found, assignment, TWINS, django_capture_on_commit_callbacks)
    assert again["X-Winnow-Status"] == "400" and "no longer in your hands" in again.content.decode()
    assert AdversarialTry.objects.count() == 1


def test_the_annotate_pages_own_form_cannot_keep_an_item_past_the_models(client, writing):
    found, assignment = writing
    campaign = writing_campaign(found)
    page = client.post(
        reverse("annotation:campaign-annotate", args=[campaign.name]),
        {"assignment": assignment.pk, "answer": "kept", **PAIR},
        **HTMX,
    )
    assert "kept or retracted from its page" in page.content.decode()
    assert not Judgment.objects.exists() and not AdversarialItem.objects.exists()
    # the service behind the page and the API refuses it (judgment_submit)
    from annotation.errors import JudgmentRefused
    from annotation.services import judgment_submit

    with pytest.raises(JudgmentRefused, match="after checking it with the models"):
        judgment_submit(annotator=assignment.annotator, assignment=assignment, answer="retracted")


def test_keeping_needs_a_scored_try(client, writing, django_capture_on_commit_callbacks):
    found, assignment = writing
    url = reverse("adversarial:keep", args=[writing_campaign(found).name])
    assert client.post(url, {"assignment": assignment.pk}, **HTMX)["X-Winnow-Status"] == "400"
    _check(client, found, assignment, TWINS, django_capture_on_commit_callbacks, execute=False)  # no worker
    refused = client.post(url, {"assignment": assignment.pk}, **HTMX)
    assert refused["X-Winnow-Status"] == "400" and "No try has its verdict yet" in refused.content.decode()
    assert 'id="adversarial-note"' in refused.content.decode()
    assert not Judgment.objects.exists()


def test_a_waiting_try_polls_and_a_lost_worker_leaves_a_clear_message_and_the_try_to_check_again(
    client, writing, django_capture_on_commit_callbacks
):
    found, assignment = writing
    waiting = _check(client, found, assignment, TWINS, django_capture_on_commit_callbacks, execute=False)
    attempt = AdversarialTry.objects.get()
    poll = reverse("adversarial:try", args=[attempt.pk])
    assert attempt.status == TryStatus.QUEUED
    assert f'hx-get="{poll}"' in waiting.content.decode() and "is with the models" in waiting.content.decode()
    # no worker answered within WINNOW_ADVERSARIAL_TIMEOUT: the page says so and stops polling
    AdversarialTry.objects.filter(pk=attempt.pk).update(queued_at=timezone.now() - timedelta(hours=1))
    lost = _clean(client.get(poll, **HTMX).content.decode())
    assert "No model worker answered try 1 in time" in lost and "Your try is kept" in lost
    assert "hx-get" not in lost and 'id="adversarial-again"' in lost
    # check again: the same try goes to the models once more and is scored
    with django_capture_on_commit_callbacks(execute=True):
        again = client.post(reverse("adversarial:again", args=[attempt.pk]), **HTMX)
    assert again.status_code == 200 and 'data-state="waiting"' in again.content.decode()
    assert 'id="adversarial-verdict"' in client.get(poll, **HTMX).content.decode()
    attempt.refresh_from_db()
    assert attempt.status == TryStatus.SCORED and attempt.number == 1 and AdversarialTry.objects.count() == 1


def test_a_try_the_models_cannot_score_says_why_and_is_kept_to_check_again(
    client, annotator, models_dir, django_capture_on_commit_callbacks
):
    found = adversarial_round(models=("gone-model",))
    assignment = slot_for(found, annotator)
    client.force_login(annotator)
    _check(client, found, assignment, TWINS, django_capture_on_commit_callbacks)
    attempt = AdversarialTry.objects.get()
    html = client.get(reverse("adversarial:try", args=[attempt.pk]), **HTMX).content.decode()
    assert (
        attempt.status == TryStatus.FAILED
        and "'gone-model' is not in this server's registry" in attempt.error
    )
    assert "is not in this server&#x27;s registry" in html and 'id="adversarial-again"' in html
    found.models_in_loop = [{"name": "tiny-llama", "sha256": ""}]
    found.save()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("adversarial:again", args=[attempt.pk]), **HTMX)
    attempt.refresh_from_db()
    assert attempt.status == TryStatus.SCORED and attempt.error == ""


def test_a_broker_that_refuses_the_try_fails_it_with_a_message_not_a_spinner(
    client, writing, monkeypatch, django_capture_on_commit_callbacks
):
    from evaluation.adversarial import tasks

    def refuse(**kwargs):
        raise OSError("connection refused")

    monkeypatch.setattr(tasks.adversarial_try_task, "delay", refuse)
    found, assignment = writing
    _check(client, found, assignment, TWINS, django_capture_on_commit_callbacks)
    attempt = AdversarialTry.objects.get()
    assert attempt.status == TryStatus.FAILED and "the Celery broker" in attempt.error
    html = client.get(reverse("adversarial:try", args=[attempt.pk]), **HTMX).content.decode()
    assert "the Celery broker" in html and 'id="adversarial-again"' in html


def test_the_embedded_setup_says_the_verdict_takes_longer(
    client, writing, settings, django_capture_on_commit_callbacks
):
    found, assignment = writing
    settings.CELERY_BROKER_URL = "filesystem://"
    html = _check(
        client, found, assignment, TWINS, django_capture_on_commit_callbacks, execute=False
    ).content.decode()
    assert "embedded setup" in html and "takes longer" in html
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/3"
    html = client.get(
        reverse("adversarial:try", args=[AdversarialTry.objects.get().pk]), **HTMX
    ).content.decode()
    assert "embedded setup" not in html


def test_a_comve_pair_is_checked_and_kept_as_one_comve_item(
    client, annotator, models_dir, django_capture_on_commit_callbacks
):
    found = adversarial_round(kind=PipelineKind.ADVERSARIAL_COMVE, method="full", collection="adv-comve")
    assignment = slot_for(found, annotator)
    client.force_login(annotator)
    refused = _check(
        client,
        found,
        assignment,
        {**PAIR, "statement_1": PAIR["statement_0"]},
        django_capture_on_commit_callbacks,
    )
    assert (
        "the two statements must differ" in refused.content.decode() and not AdversarialTry.objects.exists()
    )
    _check(client, found, assignment, PAIR, django_capture_on_commit_callbacks)
    attempt = AdversarialTry.objects.get()
    (pair,) = attempt.verdicts["tiny-llama"]["twins"]
    assert attempt.verdicts["tiny-llama"]["method"] == "full" and pair["right"] == "1"
    assert attempt.verdict in (Verdict.BOTH, Verdict.NONE)  # one question: fooled or not
    client.post(
        reverse("adversarial:keep", args=[writing_campaign(found).name]),
        {"assignment": assignment.pk},
        **HTMX,
    )
    campaign_aggregate(campaign=writing_campaign(found))
    item = AdversarialItem.objects.get()
    comve = ComVEItem.objects.get()
    assert item.comve_item == comve and comve.collection == "adv-comve" and comve.false_index == 1
    assert comve.statement_1 == PAIR["statement_1"] and comve.has_a and not comve.has_b and not comve.has_c


def test_the_inspiration_panel_shows_earlier_validated_items_that_fooled_a_model(
    client, annotator, annotator2, models_dir, django_capture_on_commit_callbacks
):
    found = adversarial_round()
    earlier = slot_for(found, annotator2)
    AdversarialItem.objects.create(
        round=found,
        writer=annotator2,
        assignment=earlier,
        status=AdversarialStatus.KEPT,
        content={**TWINS, "sentence": "The ball broke the table because [it] was made of steel."},
        verdict=Verdict.ONE,
        fooled=["tiny-llama"],
        validation=ValidationStatus.VALIDATED,
    )
    AdversarialItem.objects.create(  # validated but fooled nobody: not shown
        round=found,
        writer=annotator2,
        status=AdversarialStatus.KEPT,
        content={**TWINS, "sentence": "Unfooled [it]."},
        verdict=Verdict.NONE,
        validation=ValidationStatus.VALIDATED,
    )
    slot_for(found, annotator)
    client.force_login(annotator)
    html = client.get(
        reverse("annotation:campaign-annotate", args=[writing_campaign(found).name])
    ).content.decode()
    assert 'id="adversarial-inspiration"' in html and "made of steel" in html and "Unfooled" not in html


def test_another_writer_cannot_see_or_act_on_a_try_and_other_roles_are_refused(
    client, writing, annotator2, researcher, django_capture_on_commit_callbacks
):
    found, assignment = writing
    _check(client, found, assignment, TWINS, django_capture_on_commit_callbacks)
    attempt = AdversarialTry.objects.get()
    client.force_login(annotator2)
    assert client.get(reverse("adversarial:try", args=[attempt.pk]), **HTMX).status_code == 404
    assert client.post(reverse("adversarial:again", args=[attempt.pk]), **HTMX).status_code == 404
    keep = reverse("adversarial:keep", args=[writing_campaign(found).name])
    assert client.post(keep, {"assignment": assignment.pk}, **HTMX).status_code == 404
    client.force_login(researcher)
    assert client.post(keep, {"assignment": assignment.pk}).status_code == 403
    client.logout()
    assert client.post(keep, {"assignment": assignment.pk}).status_code == 302  # to the sign-in page
    assert AdversarialItem.objects.get().status == AdversarialStatus.WRITING


def test_the_web_process_never_imports_torch():
    code = (
        "import os, sys\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings')\n"
        "import django; django.setup()\n"
        "import config.urls, evaluation.tasks\n"
        "import evaluation.adversarial.views, evaluation.adversarial.services, evaluation.adversarial.verdict\n"
        "import annotation.task_types.adversarial, annotation.adversarial_content\n"
        "from django.urls import reverse\n"
        "reverse('adversarial:check', args=['c'])\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "assert 'transformers' not in sys.modules, 'transformers was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_an_item_of_another_task_is_refused_with_a_message(
    client, annotator, django_capture_on_commit_callbacks
):
    campaign = campaign_for(Task.SWITCHABILITY, k=1)
    assignment = assignment_next(campaign=campaign, annotator=annotator)
    assert assignment is not None
    client.force_login(annotator)
    response = client.post(
        reverse("adversarial:check", args=[campaign.name]), {"assignment": assignment.pk, **TWINS}
    )
    assert response.status_code == 400 and "not adversarial writing" in response.content.decode()
    assert not AdversarialTry.objects.exists()
