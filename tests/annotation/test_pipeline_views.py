"""The curator's pipeline pages: only curators see them; the form refuses bad input
naming the field; Confirm advances once, refuses an incomplete stage unless forced."""

import pytest
from django.urls import reverse

from annotation.models import Campaign, Pipeline, PipelineStage, StageStatus
from annotation.pipelines.services import pipeline_create
from tests.annotation.answering import answer_all
from tests.annotation.test_pipelines import _schemas

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("who", ["annotator", "researcher", "nobody"])
def test_only_curators_see_pipeline_pages(client, request, curator, who):
    _schemas()
    pipeline_create(curator=curator, kind="winowhy", collection="mine", name="p")
    client.force_login(request.getfixturevalue(who))
    for url in (reverse("annotation:pipeline-list"), reverse("annotation:pipeline-detail", args=["p"])):
        assert client.get(url).status_code == 403
    response = client.post(reverse("annotation:pipeline-advance", args=["p"]), {"stage": "0", "force": "1"})
    assert response.status_code == 403
    assert PipelineStage.objects.get(pipeline__name="p", key="writing").status == StageStatus.ACTIVE


def test_anonymous_is_sent_to_log_in(client):
    response = client.get(reverse("annotation:pipeline-list"))
    assert response.status_code == 302 and "login" in response["Location"]


def test_curator_starts_a_pipeline_from_the_form(client, curator):
    _schemas()
    client.force_login(curator)
    page = client.get(reverse("annotation:pipeline-list"))
    assert page.status_code == 200 and b"Start pipeline" in page.content and b"mine" in page.content
    response = client.post(
        reverse("annotation:pipeline-list"),
        {"kind": "winowhy", "collection": "mine", "name": "", "k_winowhy_writing": "3"},
    )
    assert response.status_code == 302
    pipeline = Pipeline.objects.get()
    assert pipeline.name == "mine-winowhy"
    assert Campaign.objects.get(name="mine-winowhy-writing").judgments_per_item == 3
    detail = client.get(response["Location"])
    text = detail.content.decode()
    assert "Waiting for you" in text and "3 of 3 items of reason writing still need judgments" in text
    assert "generate_reasons --collection mine" in text


@pytest.mark.parametrize(
    ("post", "message"),
    [
        (
            {"kind": "winowhy", "collection": "nothing-here"},
            "collection: no questions in &#x27;nothing-here&#x27;",
        ),
        (
            {"kind": "comve", "collection": "c", "slots": "2", "k_comve_check": "2"},
            "k of check (check by testees): 2 is not between 3",
        ),
        ({"kind": "comve", "collection": "c"}, "slots: 0 is not between 1"),
        ({"kind": "tea", "collection": "c"}, "Select a valid choice"),
    ],
)
def test_bad_input_says_which_field_and_writes_nothing(client, curator, post, message):
    client.force_login(curator)
    response = client.post(reverse("annotation:pipeline-list"), post)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Pipeline.objects.exists() and not Campaign.objects.exists()


def test_confirm_refuses_an_incomplete_stage_then_advances_once(client, curator, make_annotators):
    _schemas()
    pipeline = pipeline_create(curator=curator, kind="winowhy", collection="mine", name="p")
    client.force_login(curator)
    url = reverse("annotation:pipeline-advance", args=["p"])
    response = client.post(url, {"stage": "0"}, follow=True)
    assert "3 of 3 items still need judgments" in response.content.decode()
    assert not Campaign.objects.filter(name="p-validation").exists()
    writing = Campaign.objects.get(name="p-writing")
    # while the annotators work the page shows their progress, and the preview (which runs
    # the advance and undoes it) only when asked for, with the force box
    detail = reverse("annotation:pipeline-detail", args=["p"])
    page = client.get(detail).content.decode()
    assert 'id="preview-link"' in page and 'id="preview"' not in page and 'id="force"' not in page
    page = client.get(detail, {"preview": "1"}).content.decode()
    assert 'id="preview"' in page and 'id="force"' in page
    assert "Confirming anyway: every answer written so far is kept" in page
    answer_all(writing, make_annotators(5), lambda item, i: {"text": f"because {i}"})
    page = client.get(reverse("annotation:pipeline-detail", args=["p"])).content.decode()
    assert "reasons written: <strong>15</strong>" in page and 'id="force"' not in page
    client.post(url, {"stage": "0"})
    response = client.post(url, {"stage": "0"}, follow=True)  # the second click
    assert "advanced already" in response.content.decode()
    assert Campaign.objects.filter(name__startswith="p-").count() == 2
    assert PipelineStage.objects.get(pipeline=pipeline, key="validation").status == StageStatus.ACTIVE
    bad = client.post(url, {"stage": "x"}, follow=True)
    assert "stage: missing or not a number" in bad.content.decode()


def test_pages_are_linked_for_curators(client, curator):
    client.force_login(curator)
    target = reverse("annotation:pipeline-list")
    for page in ("home", "annotation:dashboard", "annotation:campaign-list"):
        assert f'href="{target}"' in client.get(reverse(page)).content.decode(), page


def test_the_rewrite_page_shows_the_item_and_the_testees_answers_and_takes_the_new_item(
    client, curator, make_annotators
):
    from annotation.models import Assignment
    from datasets.models import ComVEItem
    from tests.annotation.test_pipelines import _comve_answer

    people = make_annotators(3)
    pipeline = pipeline_create(curator=curator, kind="comve", collection="mine", name="c", slots=1)
    answer_all(Campaign.objects.get(name="c-writing"), people[:1], lambda item, i: _comve_answer(i))
    client.force_login(curator)
    client.post(reverse("annotation:pipeline-advance", args=["c"]), {"stage": "0"})
    answer_all(
        Campaign.objects.get(name="c-check"),
        people,
        lambda item, i: {"answer": "0", "payload": {"option": "B"}},
    )
    client.post(reverse("annotation:pipeline-advance", args=["c"]), {"stage": "1"})
    assert PipelineStage.objects.get(pipeline=pipeline, key="rewrite").status == StageStatus.ACTIVE

    client.force_login(people[0])
    url = reverse("annotation:campaign-annotate", args=["c-rewrite"])
    client.post(url, {"start": "1"})
    page = client.get(url).content.decode()
    assert page.count("<li>Statement 1, reason B</li>") == 3  # every testee's answer
    assert 'value="He put an elephant into the fridge 0."' in page  # the fields start as the item is
    assignment = Assignment.objects.get(annotator=people[0], campaign_item__campaign__name="c-rewrite")
    fields = dict(_comve_answer(0)["payload"])
    fields["statement_0"] = "He put a cold turkey into the fridge."
    response = client.post(url, {"assignment": str(assignment.pk), **fields}, follow=True)
    assert response.status_code == 200 and "Nothing left for you" in response.content.decode()
    client.force_login(curator)
    client.post(reverse("annotation:pipeline-advance", args=["c"]), {"stage": "2"})
    item = ComVEItem.objects.get(collection="mine")
    assert item.statement_0 == "He put a cold turkey into the fridge."


def test_a_confirm_after_the_session_ended_comes_back_to_the_pipeline(client, curator):
    _schemas()
    pipeline_create(curator=curator, kind="winowhy", collection="mine", name="p")
    url = reverse("annotation:pipeline-advance", args=["p"])
    response = client.post(url, {"stage": "0"})
    assert response.status_code == 302 and "login" in response["Location"]
    client.force_login(curator)
    back = client.get(url)  # where the sign-in page sends them next
    assert back.status_code == 302 and back["Location"] == reverse("annotation:pipeline-detail", args=["p"])
    assert PipelineStage.objects.get(pipeline__name="p", key="writing").status == StageStatus.ACTIVE
