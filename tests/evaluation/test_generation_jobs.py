"""Generation as a job (issue 13, "Model-generated candidates"): a curator asks a causal model
for candidate reasons, or turns a run's ComVE explanations into a plausibility campaign; the
job shows its progress, records its settings and model, drops empty and duplicate outputs,
and a second delivery does nothing twice. People's votes give the run a human score beside
its BLEU, on the run page and the leaderboard."""

from __future__ import annotations

import pytest
from django.urls import reverse
from statsmodels.stats.proportion import proportion_confint

from annotation.aggregation_rules import explanation_plausible
from annotation.models import Campaign, CampaignItem, Judgment, Task
from annotation.selectors import item_presentation
from annotation.services import campaign_aggregate
from datasets.models import Explanation, ImportBatch, Reason
from evaluation.generation_jobs.services import (
    GenerationError,
    generation_explanations_create,
    generation_job_run,
    generation_reasons_create,
)
from evaluation.metrics.human import human_score
from evaluation.models import GenerationJob, GenerationKind, GenerationStatus
from evaluation.services import evaluation_run, evaluation_run_create
from evaluation.tasks import generation_job_task
from tests.evaluation.tiny_models import build_tiny_causal
from tests.releases.factories import make_comve, make_schemas, published_release

# --- the human score (pure) -----------------------------------------------------------------


@pytest.mark.parametrize(("plausible", "judged"), [(0, 1), (1, 1), (7, 10), (0, 25), (25, 25), (131, 200)])
def test_the_human_scores_interval_is_statsmodels_wilson(plausible, judged):
    score = human_score(plausible, judged, judged + 3)
    low, high = proportion_confint(plausible, judged, alpha=0.05, method="wilson")
    assert score.share == plausible / judged
    assert (score.low, score.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert (score.judged, score.total) == (judged, judged + 3)


def test_a_run_with_nothing_judged_has_no_human_score_and_bad_counts_are_refused():
    score = human_score(0, 0, 5)
    assert (score.share, score.low, score.high, score.total) == (None, None, None, 5)
    with pytest.raises(ValueError, match="judged"):
        human_score(0, 6, 5)
    with pytest.raises(ValueError, match="plausible"):
        human_score(3, 2, 5)


def test_an_explanation_is_plausible_when_more_than_half_of_its_votes_say_so():
    assert explanation_plausible(["plausible", "plausible", "implausible"])
    assert not explanation_plausible(["plausible", "implausible", "implausible"])
    assert not explanation_plausible(["plausible", "implausible"])  # a tie is not a majority
    with pytest.raises(ValueError):
        explanation_plausible([])


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    build_tiny_causal(folder / "tiny-causal")
    return folder


@pytest.fixture
def registry(settings, models_dir):
    settings.WINNOW_MODELS_DIR = models_dir
    return models_dir


def _post(client, user, data):
    client.force_login(user)
    return client.post(reverse("evaluation:generation-create"), data)


REASONS_FORM = {
    "collection": "mine",
    "model": "tiny-causal",
    "k": "2",
    "beams": "3",
    "max_new_tokens": "5",
    "seed": "7",
}


# --- kind reasons -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_curator_starts_a_reasons_job_that_stores_generated_reasons_with_its_counts(
    client, curator, registry, django_capture_on_commit_callbacks
):
    make_schemas(5, collection="mine")
    client.force_login(curator)
    page = client.get(reverse("evaluation:generation-create") + "?collection=mine")
    assert page.status_code == 200
    assert 'value="mine" selected' in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(client, curator, REASONS_FORM)
    job = GenerationJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "evaluation:generation-detail", args=[job.pk]
    )
    assert job.status == GenerationStatus.DONE, job.error
    assert (job.kind, job.collection, job.model_name, job.created_by) == (
        "reasons",
        "mine",
        "tiny-causal",
        curator,
    )
    assert job.settings["seed"] == 7 and job.settings["num_beams"] == 3 and job.settings["k"] == 2
    assert len(job.model_sha256) == 64
    assert job.progress_done == job.progress_total == 5
    assert job.outputs == 10 and job.stored == job.outputs - job.empty - job.duplicates
    stored = Reason.objects.filter(origin="generated")
    assert stored.count() == job.stored and {r.import_batch_id for r in stored} == {job.import_batch_id}
    assert job.import_batch is not None
    batch = ImportBatch.objects.get(pk=job.import_batch.pk)
    assert batch.options["seed"] == 7 and batch.options["model"]["sha256"] == job.model_sha256
    assert batch.created_by == curator
    page = client.get(reverse("evaluation:generation-detail", args=[job.pk])).content.decode()
    assert "Done:" in page and f"import batch #{job.import_batch_id}" in page and "hx-get" not in page
    assert "seed (torch.manual_seed)" in page and job.model_sha256 in page
    assert (
        reverse("evaluation:generation-create") in client.get(reverse("evaluation:run-list")).content.decode()
    )


@pytest.mark.django_db
def test_the_job_writes_its_progress_per_question_batch(curator, registry, monkeypatch):
    from evaluation.generation_jobs import services

    make_schemas(6, collection="mine")
    job = generation_reasons_create(
        collection="mine", model="tiny-causal", k=1, beams=1, max_new_tokens=3, created_by=curator
    )
    seen: list[tuple[int, int]] = []
    real = services.generate_reasons

    def watched(*args, **kwargs):
        row = GenerationJob.objects.get(pk=job.pk)
        seen.append((row.progress_done, row.progress_total))
        return real(*args, **kwargs)

    monkeypatch.setattr(services, "REASON_BATCH", 2)
    monkeypatch.setattr(services, "generate_reasons", watched)
    generation_job_run(job=job)
    job.refresh_from_db()
    assert seen == [(0, 6), (2, 6), (4, 6)]  # before each batch of two questions
    assert (job.progress_done, job.status) == (6, GenerationStatus.DONE)


@pytest.mark.django_db
def test_a_second_delivery_of_a_done_job_stores_nothing_twice(curator, registry):
    make_schemas(2, collection="mine")
    job = generation_reasons_create(
        collection="mine", model="tiny-causal", k=2, beams=2, max_new_tokens=4, created_by=curator
    )
    assert generation_job_task.delay(job_id=job.pk).get() == "done"
    count, batches = Reason.objects.count(), ImportBatch.objects.count()
    job.refresh_from_db()
    finished = job.finished_at
    assert generation_job_task.delay(job_id=job.pk).get() == "done"
    job.refresh_from_db()
    assert (Reason.objects.count(), ImportBatch.objects.count(), job.attempts, job.finished_at) == (
        count,
        batches,
        1,
        finished,
    )
    assert generation_job_task(job_id=987654) == "gone"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"k": "4", "beams": "3"}, "beams", "3 beams cannot give 4 reasons"),
        ({"k": "0"}, "k", "greater than or equal to 1"),
        ({"collection": "nope"}, "collection", "Choose a collection of schemas from the list."),
        ({"model": "cloze-bert"}, "model", "Choose a causal model from the list."),
        ({"seed": "-1"}, "seed", "greater than or equal to 0"),
        ({"max_new_tokens": "many"}, "max_new_tokens", "Enter a whole number."),
    ],
)
def test_bad_input_is_named_beside_its_field_and_writes_nothing(
    client, curator, registry, change, field, message
):
    make_schemas(1, collection="mine")
    response = _post(client, curator, REASONS_FORM | change)
    assert response.status_code == 400
    assert message in " ".join(response.context["form"].errors[field])
    assert GenerationJob.objects.count() == 0


@pytest.mark.django_db
def test_the_service_refuses_a_masked_model_and_a_missing_collection_by_field(curator, settings, tmp_path):
    from tests.evaluation.cloze_models import build_masked

    build_masked(tmp_path / "m" / "masked-one")
    settings.WINNOW_MODELS_DIR = tmp_path / "m"
    make_schemas(1, collection="mine")
    with pytest.raises(GenerationError, match="needs a causal one") as refused:
        generation_reasons_create(collection="mine", model="masked-one", created_by=curator)
    assert refused.value.field == "model"
    with pytest.raises(GenerationError, match="no schemas in collection 'none'") as refused:
        generation_reasons_create(collection="none", model="masked-one", created_by=curator)
    assert refused.value.field == "collection"
    assert GenerationJob.objects.count() == 0


@pytest.mark.django_db
def test_annotators_and_researchers_cannot_start_or_see_generation_jobs(
    client, annotator, researcher, curator, registry
):
    make_schemas(1, collection="mine")
    job = generation_reasons_create(collection="mine", model="tiny-causal", created_by=curator)
    for user in (annotator, researcher):
        client.force_login(user)
        assert client.get(reverse("evaluation:generation-create")).status_code == 403
        assert client.post(reverse("evaluation:generation-create"), REASONS_FORM).status_code == 403
        assert client.get(reverse("evaluation:generation-detail", args=[job.pk])).status_code == 403
        with pytest.raises(GenerationError, match="only curators"):
            generation_reasons_create(collection="mine", model="tiny-causal", created_by=user)
    # the researcher's run list does not offer the page
    assert (
        reverse("evaluation:generation-create")
        not in client.get(reverse("evaluation:run-list")).content.decode()
    )
    client.logout()
    assert client.get(reverse("evaluation:generation-create")).status_code == 302
    assert GenerationJob.objects.count() == 1


@pytest.mark.django_db
def test_a_running_job_page_polls_and_a_failed_one_says_why(client, curator, registry):
    make_schemas(1, collection="mine")
    job = generation_reasons_create(collection="mine", model="tiny-causal", created_by=curator)
    GenerationJob.objects.filter(pk=job.pk).update(status="running", progress_done=1, progress_total=4)
    client.force_login(curator)
    url = reverse("evaluation:generation-detail", args=[job.pk])
    page = client.get(url).content.decode()
    assert "hx-get" in page and "1 / 4 questions" in page
    fragment = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert fragment.strip().startswith('<div id="generation-progress"') and "<html" not in fragment
    GenerationJob.objects.filter(pk=job.pk).update(status="failed", error="the model could not be read")
    page = client.get(url).content.decode()
    assert "failed" in page and "the model could not be read" in page and "hx-get" not in page


# --- kind explanations --------------------------------------------------------------------------


@pytest.fixture
def comve_run(tmp_path, settings, curator, models_dir, django_capture_on_commit_callbacks):
    """A finished causal-LM run on a published ComVE release that generated subtask-C explanations."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.WINNOW_MODELS_DIR = models_dir
    make_comve(3)
    release = published_release(
        django_capture_on_commit_callbacks, user=curator, name="comve-mini", dataset="comve", split="test"
    )
    run = evaluation_run_create(
        release=f"{release.name}@{release.version}",
        method="full",
        model_name="tiny-causal",
        generate_explanations=True,
        out_dir=str(tmp_path / "run"),
    )
    return evaluation_run(run=run)


def _vote(campaign: Campaign, answers: dict[int, list[str]], annotators) -> None:
    items = list(campaign.items.order_by("pk"))
    for index, votes in answers.items():
        for annotator, answer in zip(annotators, votes, strict=False):
            Judgment.objects.create(campaign_item=items[index], annotator=annotator, answer=answer)


@pytest.mark.django_db
def test_a_runs_explanations_become_a_plausibility_campaign_and_a_human_score(
    client, curator, comve_run, django_user_model, django_capture_on_commit_callbacks
):
    run = comve_run
    assert run.status == "done" and run.metrics["c"]["computed"], run.error
    client.force_login(curator)
    page = client.get(reverse("evaluation:run-detail", args=[run.pk])).content.decode()
    assert 'id="explanations-form"' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("evaluation:generation-create"), {"run": run.pk, "k": 3})
    job = GenerationJob.objects.get()
    assert response.status_code == 302 and job.status == GenerationStatus.DONE, job.error
    assert (job.kind, job.run, job.model_name) == (GenerationKind.EXPLANATIONS, run, "tiny-causal")
    explanations = list(Explanation.objects.filter(run_id=run.pk))
    assert job.outputs == 3 and len(explanations) == job.stored == 3 - job.empty
    assert {e.model_name for e in explanations} == {"tiny-causal"}
    campaign = job.campaign
    assert campaign is not None and campaign.task == Task.EXPLANATION_PLAUSIBILITY
    assert campaign.judgments_per_item == 3 and campaign.items.count() == job.stored
    item = campaign.items.select_related("explanation__comve_item").first()
    assert item is not None and item.explanation is not None
    shown = item_presentation(item=item, task=campaign.task)
    assert shown["explanation"] == item.explanation.text
    assert shown["statement"] == item.explanation.comve_item.false_statement
    # a second delivery does nothing twice; a second job for the run is refused
    assert generation_job_task.delay(job_id=job.pk).get() == "done"
    assert Explanation.objects.count() == len(explanations) and Campaign.objects.count() == 1
    with pytest.raises(GenerationError, match="have a job already") as refused:
        generation_explanations_create(run=run, created_by=curator)
    assert refused.value.field == "run"
    page = client.get(reverse("evaluation:run-detail", args=[run.pk])).content.decode()
    assert 'id="explanations-form"' not in page and campaign.name in page
    assert f"— (0 of {job.stored} judged yet)" in page
    # people vote: 2 of 3 say plausible on the first, 1 of 3 on the second; the third waits
    people = [django_user_model.objects.create_user(f"judge{i}") for i in range(3)]
    _vote(
        campaign,
        {0: ["plausible", "plausible", "implausible"], 1: ["implausible", "plausible", "implausible"]},
        people,
    )
    campaign_aggregate(campaign=campaign)
    labels = [i.aggregate.get("label") for i in CampaignItem.objects.filter(campaign=campaign).order_by("pk")]
    assert labels[:2] == ["plausible", "implausible"]
    low, high = proportion_confint(1, 2, alpha=0.05, method="wilson")
    page = client.get(reverse("evaluation:run-detail", args=[run.pk])).content.decode()
    assert "human score 0.5000" in page and f"{low:.4f}–{high:.4f}" in page
    assert f"(1 plausible of 2 judged, {job.stored} stored)" in page
    assert "BLEU" in page
    # a second run on the release, whose explanations nobody judged: "—" beside it, and the
    # counts of the first stay whole numbers
    evaluation_run(run=evaluation_run_create(release="comve-mini@1.0.0", method="first"))
    board = client.get(reverse("evaluation:leaderboard", args=["comve-mini", "1.0.0"])).content.decode()
    assert "human score" in board and f"2 / {job.stored} judged" in board and "0.5000" in board
    assert board.count('class="num human-score">—') == 1
    table = client.get(reverse("evaluation:leaderboard-table", args=["comve-mini", "1.0.0", "json"])).json()
    rows = table["rows"] if isinstance(table, dict) and "rows" in table else table
    judged = {row["run"]: row["human_judged"] for row in rows}
    assert judged == {run.pk: 2, run.pk + 1: None}


@pytest.mark.django_db
def test_a_run_without_generated_explanations_cannot_be_judged(
    client, curator, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_comve(2)
    release = published_release(
        django_capture_on_commit_callbacks, user=curator, name="comve-mini", dataset="comve", split="test"
    )
    run = evaluation_run(
        run=evaluation_run_create(release=f"{release.name}@{release.version}", method="first")
    )
    client.force_login(curator)
    response = client.post(reverse("evaluation:generation-create"), {"run": run.pk, "k": 3})
    assert response.status_code == 400
    assert "generated no explanations" in " ".join(response.context["explanations_form"].errors["run"])
    response = client.post(reverse("evaluation:generation-create"), {"run": run.pk, "k": 0})
    assert "greater than or equal to 1" in " ".join(response.context["explanations_form"].errors["k"])
    assert GenerationJob.objects.count() == 0
    board = client.get(reverse("evaluation:leaderboard", args=["comve-mini", "1.0.0"])).content.decode()
    assert "human score" in board and "—" in board


@pytest.mark.django_db
def test_an_annotator_sees_the_statement_and_the_explanation_and_answers_by_key(client, annotator):
    from annotation.services import campaign_create

    (comve,) = make_comve(1)
    Explanation.objects.create(comve_item=comve, text="an elephant is too big.", run_id=4, model_name="tiny")
    campaign = campaign_create(
        name="judge-run-4", task="explanation_plausibility", items="explanations", filters={"run_id": 4}
    )
    assert campaign.judgments_per_item == 3  # the default K
    client.force_login(annotator)
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    html = client.post(url, {"start": "1"}, follow=True).content.decode()
    assert comve.false_statement in html and "an elephant is too big." in html
    assert "tiny" not in html and "run #4" not in html  # the annotator is not told whose it is
    assert 'data-key="y"' in html and 'data-key="n"' in html


@pytest.mark.django_db
def test_the_admin_lists_generation_jobs_and_explanations(admin_client, curator, registry):
    make_schemas(1, collection="mine")
    generation_reasons_create(collection="mine", model="tiny-causal", created_by=curator)
    (comve,) = make_comve(1)
    Explanation.objects.create(comve_item=comve, text="it is too big.", run_id=4, model_name="tiny")
    jobs = admin_client.get(reverse("admin:evaluation_generationjob_changelist"))
    assert jobs.status_code == 200 and "tiny-causal" in jobs.content.decode()
    explanations = admin_client.get(reverse("admin:datasets_explanation_changelist"))
    assert explanations.status_code == 200 and "it is too big." in explanations.content.decode()
