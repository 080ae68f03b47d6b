import re

import pytest
from django.urls import reverse

from evaluation.models import EvaluationRun, RunStatus
from evaluation.services import evaluation_run_create
from evaluation.tasks import evaluation_run_task
from tests.releases.factories import create_release, make_schemas

pytestmark = pytest.mark.django_db


def _urls(runs) -> list[str]:
    a, b = runs
    return [
        reverse("evaluation:run-list"),
        reverse("evaluation:run-detail", args=[a.pk]),
        reverse("evaluation:leaderboard", args=[a.release_name, a.release_version]),
        reverse("evaluation:run-compare") + f"?a={a.pk}&b={b.pk}",
        reverse("evaluation:run-file", args=[a.pk, "predictions.jsonl"]),
    ]


@pytest.mark.parametrize("role", ["annotator", "nobody"])
def test_annotators_and_users_without_a_role_are_denied_every_evaluation_page(
    client, request, role, two_runs
):
    client.force_login(request.getfixturevalue(role))
    for url in _urls(two_runs):
        assert client.get(url).status_code == 403, url
    assert (
        client.post(
            reverse("evaluation:run-list"), {"release": "x", "method": "first", "seed": 0}
        ).status_code
        == 403
    )
    assert EvaluationRun.objects.count() == 2


def test_anonymous_users_are_sent_to_login(client, two_runs):
    for url in _urls(two_runs):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.parametrize("role", ["researcher", "curator"])
def test_researchers_and_curators_see_every_evaluation_page(client, request, role, two_runs):
    client.force_login(request.getfixturevalue(role))
    for url in _urls(two_runs):
        assert client.get(url).status_code == 200, url


def test_researcher_starts_a_run_as_a_background_job_and_follows_its_progress(
    client, researcher, release, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(
            reverse("evaluation:run-list"),
            {"release": str(release), "method": "first", "seed": 0, "limit": ""},
        )
    assert len(callbacks) == 1  # enqueued only once the run row is committed
    run = EvaluationRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "evaluation:run-detail", args=[run.pk]
    )
    assert run.created_by == researcher
    assert run.status == RunStatus.DONE  # eager Celery in the tests
    page = client.get(reverse("evaluation:run-detail", args=[run.pk]))
    assert b"0.5000" in page.content and b"consistency" in page.content
    fragment = client.get(reverse("evaluation:run-detail", args=[run.pk]), HTTP_HX_REQUEST="true")
    assert b"<html" not in fragment.content and b"Done: <strong" in fragment.content
    assert b"4 / 4 schemas</strong> scored" in fragment.content  # counted in schemas, not sentences
    assert b"hx-trigger" not in fragment.content  # polling stops once the run is done
    assert fragment["HX-Refresh"] == "true"  # the page reloads with the results, without a click


def test_a_queued_run_polls_for_progress(client, researcher, release):
    run = evaluation_run_create(release=str(release), method="first")
    client.force_login(researcher)
    fragment = client.get(reverse("evaluation:run-detail", args=[run.pk]), HTTP_HX_REQUEST="true")
    assert (
        b'hx-trigger="every 1s"' in fragment.content and b"Queued: waiting for a worker" in fragment.content
    )
    assert "HX-Refresh" not in fragment  # a run still working keeps polling


def test_starting_a_run_on_a_missing_release_shows_the_reason_and_stores_nothing(
    client, researcher, tmp_path
):
    client.force_login(researcher)
    for release, reason in [
        ("nope@1.0.0", b"Choose a published release from the list."),
        (str(tmp_path), b"Choose a published release from the list."),  # no server folders from the web
    ]:
        response = client.post(
            reverse("evaluation:run-list"), {"release": release, "method": "first", "seed": 0}
        )
        assert response.status_code == 400
        assert reason in response.content
    assert not EvaluationRun.objects.exists()


def test_a_start_token_that_is_not_bos_eos_or_an_id_is_refused_on_the_page(client, researcher, release):
    client.force_login(researcher)
    response = client.post(
        reverse("evaluation:run-list"),
        {"release": str(release), "method": "first", "seed": 0, "start_token": "two words"},
    )
    assert response.status_code == 400 and b"a token&#x27;s text (no spaces)" in response.content
    response = client.post(
        reverse("evaluation:run-list"),
        {"release": str(release), "method": "first", "seed": 0, "start_token": "eos"},
    )
    assert (
        response.status_code == 400
        and b"A start token applies to a model&#x27;s methods only" in response.content
    )
    assert not EvaluationRun.objects.exists()


def test_run_task_is_idempotent(release):
    run = evaluation_run_create(release=str(release), method="first")
    assert evaluation_run_task(run_id=run.pk) == "done"
    finished = EvaluationRun.objects.get().finished_at
    assert evaluation_run_task(run_id=run.pk) == "done"
    assert EvaluationRun.objects.get().finished_at == finished
    assert evaluation_run_task(run_id=999999) == "gone"


def test_leaderboard_ranks_runs_and_draws_inline_svg_charts(client, researcher, two_runs):
    first, other = two_runs
    client.force_login(researcher)
    page = client.get(reverse("evaluation:leaderboard", args=[first.release_name, first.release_version]))
    html = page.content.decode()
    assert html.count("<svg xmlns") == 3  # overall, per knowledge type, switched vs unswitched
    assert "Accuracy per knowledge type" in html and "unswitched" in html
    assert not re.search(r'(?:src|href)="(?:https?:)?//', html)  # nothing from another host (no CDN)
    ranked = (
        [first, other]
        if first.metrics["all"]["accuracy"] >= other.metrics["all"]["accuracy"]
        else [other, first]
    )
    assert html.index(f"#{ranked[0].pk} ") < html.index(f"#{ranked[1].pk} ")


def test_markup_in_a_run_label_is_escaped_in_the_leaderboard_charts(client, researcher, two_runs):
    first, _ = two_runs
    # the label is the model file's name, and a file name can hold markup
    EvaluationRun.objects.filter(pk=first.pk).update(model_path="/models/<img src=x onerror=alert(1)>")
    client.force_login(researcher)
    page = client.get(reverse("evaluation:leaderboard", args=[first.release_name, first.release_version]))
    html = page.content.decode()
    assert "<img" not in html
    overall = html[html.index('data-chart="overall"') : html.index("</svg>")]
    assert f'data-label="#{first.pk} &lt;img src=x onerror=alert(1)&gt; (first)"' in overall
    assert html.count('class="bar"') >= 2 and "chance" in overall


def test_compare_shows_items_where_the_runs_differ_and_mcnemar(client, researcher, two_runs):
    a, b = two_runs
    client.force_login(researcher)
    page = client.get(reverse("evaluation:run-compare") + f"?a={a.pk}&b={b.pk}&all=1")
    html = page.content.decode()
    assert "McNemar (exact)" in html
    assert html.count('<td data-label="item">') == 6  # every shared item and variant
    from evaluation.selectors import run_compare

    result = run_compare(run_a=a, run_b=b, show="all")
    assert len(result["items"]) == 6
    m = result["mcnemar"]
    assert m["only_a"] + m["only_b"] == int(result["items"]["differ"].sum())


def test_compare_of_an_unknown_run_is_404(client, researcher, two_runs):
    client.force_login(researcher)
    assert client.get(reverse("evaluation:run-compare") + f"?a={two_runs[0].pk}&b=99999").status_code == 404


def test_run_files_download_and_nothing_else(client, researcher, two_runs):
    run = two_runs[0]
    client.force_login(researcher)
    response = client.get(reverse("evaluation:run-file", args=[run.pk, "results.json"]))
    assert response.status_code == 200
    assert b'"metrics"' in b"".join(response.streaming_content)
    assert (
        client.get(reverse("evaluation:run-file", args=[run.pk, "subtaskA_answers.csv"])).status_code == 404
    )
    assert client.get(reverse("evaluation:run-file", args=[run.pk, "..%2Fmanifest.json"])).status_code == 404
    page = client.get(reverse("evaluation:run-detail", args=[run.pk]))
    assert reverse("evaluation:run-file", args=[run.pk, "predictions.jsonl"]).encode() in page.content


def test_the_evaluation_link_is_shown_to_researchers_only_not_annotators(client, researcher, annotator):
    client.force_login(researcher)
    assert reverse("evaluation:run-list").encode() in client.get("/").content
    client.force_login(annotator)
    assert reverse("evaluation:run-list").encode() not in client.get("/").content


def test_run_page_lists_knowledge_types_in_the_papers_order(client, researcher, two_runs):
    client.force_login(researcher)
    html = client.get(reverse("evaluation:run-detail", args=[two_runs[0].pk])).content.decode()
    positions = [html.index(f"knowledge type {t}") for t in ("Property", "Object", "Spatial")]
    assert positions == sorted(positions)


def test_the_run_form_says_nothing_about_unpublished_releases(
    client, researcher, curator, tmp_path, settings, django_capture_on_commit_callbacks
):
    """Issue 16, item 5: a draft of a name and no release at all read the same."""
    settings.MEDIA_ROOT = tmp_path
    make_schemas(3)
    create_release(django_capture_on_commit_callbacks, user=curator, name="secret-draft")
    client.force_login(researcher)

    def refusal(release: str) -> str:
        response = client.post(
            reverse("evaluation:run-list"), {"release": release, "method": "first", "seed": 0}
        )
        assert response.status_code == 400
        html = response.content.decode()
        start = html.index("Choose a published release from")
        return html[start : html.index("<", start)].replace(release, "NAME")

    assert refusal("secret-draft@1.0.0") == refusal("never-made@1.0.0")
    assert "draft" not in refusal("secret-draft@1.0.0").replace("secret-draft", "")
    assert not EvaluationRun.objects.exists()
