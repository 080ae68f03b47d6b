"""The guided path (a newcomer's hour): the curator home leads with the four steps of a
benchmark and where each stands; the import result, a finished pipeline and a finished run
each end with the next action."""

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from django.conf import settings
from django.urls import reverse

from annotation.models import PipelineStage, StageStatus
from annotation.pipelines.services import pipeline_advance, pipeline_create
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db
TEMPLATE = Path(settings.BASE_DIR) / "static" / "import-templates" / "schemas.csv"


def test_the_curator_home_leads_with_the_steps_of_a_benchmark(client, curator):
    client.force_login(curator)
    html = client.get(reverse("home")).content.decode()
    assert "Build a benchmark: import, pipeline, release, evaluate" in html
    assert html.index('id="home-build"') < html.index('id="home-curator"')
    assert "nothing of your own yet" in html and "no pipeline yet" in html
    # the first step not done is the suggested one
    assert 'data-step="import" class=" next"' in html
    SchemaFactory.create(collection="mine")
    html = client.get(reverse("home")).content.decode()
    assert "1 collection of your own: mine" in html
    assert 'data-step="import" class="done"' in html and 'data-step="pipeline" class=" next"' in html


def test_the_import_result_offers_a_pipeline_or_a_campaign_on_the_collection(client, curator):
    client.force_login(curator)
    with TEMPLATE.open("rb") as upload:
        response = client.post(
            reverse("datasets:import"),
            {"format": "schemas", "collection": "mine", "uploads": upload, "action": "import"},
            headers={"HX-Request": "true"},
        )
    html = response.content.decode()
    assert "Imported" in html and 'id="next-pipeline"' in html and "Start a pipeline on mine" in html
    start = reverse("annotation:pipeline-list") + "?kind=winowhy&amp;collection=mine"
    assert start in html
    # the link fills the pipeline form
    page = client.get(reverse("annotation:pipeline-list"), {"kind": "winowhy", "collection": "mine"})
    form = page.context["form"]
    assert form["collection"].value() == "mine" and form["kind"].value() == "winowhy"
    campaign = client.get(
        reverse("annotation:campaign-create"), {"items": "schemas", "filters": "collection=mine"}
    )
    assert campaign.context["form"]["filters"].value() == "collection=mine"
    # a preview wrote nothing: no next step
    with TEMPLATE.open("rb") as upload:
        preview = client.post(
            reverse("datasets:import"),
            {"format": "schemas", "collection": "other", "uploads": upload, "action": "preview"},
            headers={"HX-Request": "true"},
        )
    assert 'id="next-pipeline"' not in preview.content.decode()


def test_a_finished_pipeline_says_where_its_output_went_and_offers_the_release(client, curator):
    SchemaFactory.create(collection="mine")
    pipeline = pipeline_create(curator=curator, kind="winowhy", collection="mine", name="fin")
    client.force_login(curator)
    assert (
        'id="release-these"'
        not in client.get(reverse("annotation:pipeline-detail", args=["fin"])).content.decode()
    )
    while (
        stage := PipelineStage.objects.filter(pipeline=pipeline, status=StageStatus.ACTIVE).first()
    ) is not None:
        pipeline_advance(pipeline=pipeline, position=stage.position, curator=curator, force=True)
    html = client.get(reverse("annotation:pipeline-detail", args=["fin"])).content.decode()
    assert (
        "Where the output went" in html
        and "the questions of collection mine, in the data set WinoWhy" in html
    )
    link = html.split('id="release-these" href="')[1].split('"')[0].replace("&amp;", "&")
    assert urlparse(link).path == reverse("releases:release-create")
    query = parse_qs(urlparse(link).query)
    assert query == {"name": ["fin"], "dataset": ["winowhy"], "collection": ["mine"]}
    form = client.get(link).context["form"]
    assert (form["dataset"].value(), form["collection"].value(), form["name"].value()) == (
        "winowhy",
        "mine",
        "fin",
    )


def test_a_finished_comve_pipeline_names_the_pilot_split(client, curator):
    pipeline = pipeline_create(curator=curator, kind="comve", collection="written", name="cv", slots=1)
    while (
        stage := PipelineStage.objects.filter(pipeline=pipeline, status=StageStatus.ACTIVE).first()
    ) is not None:
        pipeline_advance(pipeline=pipeline, position=stage.position, curator=curator, force=True)
    client.force_login(curator)
    html = client.get(reverse("annotation:pipeline-detail", args=["cv"])).content.decode()
    assert "collection written, split pilot, of the data set ComVE" in html
    assert "split=pilot" in html and "dataset=comve" in html
