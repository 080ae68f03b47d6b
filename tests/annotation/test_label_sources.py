"""Labels keep their sources (issue 13): an aggregation adds its layer beside an import's,
never over it, and a release takes each label from the source the curator chooses."""

import pytest

from annotation.models import CampaignItem
from annotation.services import assignment_next, campaign_aggregate, campaign_create, judgment_submit
from datasets.labels import LABEL_FIELDS
from datasets.models import Label, LabelSource, Reason, Schema
from datasets.services import dataset_import
from releases.card import render_card
from releases.errors import ReleaseValidationError
from releases.models import ReleaseItem
from releases.services import release_create, release_meta

PILOT = 50


def _pilot(reasons, annotators, name="pilot-plausibility"):
    """Two annotators vote on ``reasons``, each time against the imported score (plausible
    when the score is under 0.5): the pilot's score (0 or 1) differs from every imported one."""
    campaign = campaign_create(
        name=name, task="reason_plausibility", items="reasons", ids=[r.pk for r in reasons], k=2
    )
    answer = {r.pk: "plausible" if (r.plausibility or 0) < 0.5 else "implausible" for r in reasons}
    for user in annotators:
        while (lease := assignment_next(campaign=campaign, annotator=user)) is not None:
            judgment_submit(annotator=user, assignment=lease, answer=answer[lease.campaign_item.reason_id])
    return campaign


def _schema(external_id, **extra):
    return Schema.objects.create(
        external_id=external_id,
        text_before="A",
        pronoun="it",
        text_after="b.",
        candidate_a="x",
        candidate_b="y",
        answer="A",
        source_file="f",
        source_row=1,
        file_checksum="",
        **extra,
    )


def _reason(schema, position, text, **labels):
    return Reason.objects.create(
        schema=schema,
        position=position,
        text=text,
        origin="human",
        source_file="f",
        source_row=position + 1,
        file_checksum="",
        **labels,
    )


def _keys(reasons):
    return {f"{r.schema.collection}:{r.schema.external_id}.{r.position}" for r in reasons}


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.django_db
def test_a_pilot_over_the_real_winowhy_reasons_leaves_the_import_and_a_release_chooses(
    data_dir, curator, make_annotators
):
    dataset_import(format="winowhy", paths=[data_dir / "winowhy" / "winowhy.json"])
    imported = {
        r.pk: (r.plausibility, r.label) for r in Reason.objects.all()
    }  # as the file gave them: 4,095 reasons, each with its five-vote score
    assert len(imported) == 4095
    batch_layers = Label.objects.filter(name="plausibility", source__kind="import")
    assert batch_layers.count() == 4095
    # importing the same file again adds no layer
    dataset_import(format="winowhy", paths=[data_dir / "winowhy" / "winowhy.json"])
    assert batch_layers.count() == 4095

    before = release_create(name="winowhy-layers", dataset="winowhy", version="1.0.0", user=curator)

    pilot_reasons = list(Reason.objects.select_related("schema").order_by("pk")[:: 4095 // PILOT][:PILOT])
    assert len(pilot_reasons) == PILOT
    campaign = _pilot(pilot_reasons, make_annotators(2, prefix="pilot"))

    preview = campaign_aggregate(campaign=campaign, dry_run=True)
    assert (preview.labels_changed, preview.labels_over_import) == (PILOT, PILOT)
    assert not Label.objects.filter(source__kind="campaign").exists()  # the preview wrote nothing

    summary = campaign_aggregate(campaign=campaign)
    assert (summary.aggregated, summary.labels_changed, summary.labels_over_import) == (PILOT, PILOT, PILOT)
    # every imported score and label as imported
    assert {r.pk: (r.plausibility, r.label) for r in Reason.objects.all()} == imported
    # the pilot's own layer beside them
    pilot_layers = Label.objects.filter(source__name=f"campaign:{campaign.name}", name="plausibility")
    assert pilot_layers.count() == PILOT
    for layer in pilot_layers:
        assert layer.value["plausibility"] in (0.0, 1.0)
        assert layer.reason_id is not None
        assert layer.value["plausibility"] != imported[layer.reason_id][0]
    assert campaign_aggregate(campaign=campaign).labels_changed == 0  # idempotent

    # an import and a campaign disagree on 50 items: the release needs the curator's choice
    with pytest.raises(ReleaseValidationError, match=r"plausibility: 50 items .* choose"):
        release_create(name="winowhy-layers", dataset="winowhy", version="1.1.0", user=curator)

    as_imported = release_create(
        name="winowhy-layers",
        dataset="winowhy",
        version="1.0.1",
        label_sources={"plausibility": "import"},
        user=curator,
    )
    assert as_imported.diff["counts"]["changed"] == 0
    assert as_imported.diff["sources_changed"]["count"] == 0

    chosen = release_create(
        name="winowhy-layers",
        dataset="winowhy",
        version="1.1.0",
        label_sources={"plausibility": f"campaign:{campaign.name}"},
        user=curator,
    )
    pilot_keys = _keys(pilot_reasons)
    diff = chosen.diff
    assert diff["previous_version"] == "1.0.1"
    assert diff["counts"]["changed"] == PILOT and set(diff["changed"]) == pilot_keys
    assert {entry["key"] for entry in diff["labels_changed"]} == pilot_keys
    assert diff["sources_changed"]["count"] == PILOT
    assert {entry["key"] for entry in diff["sources_changed"]["items"]} == pilot_keys
    for entry in diff["sources_changed"]["items"]:
        change = entry["labels"]["plausibility"]
        assert change["old"].startswith("import:") and change["new"] == f"campaign:{campaign.name}"
    # each frozen item names its label's source
    sources = dict(ReleaseItem.objects.filter(release=chosen).values_list("key", "label_sources"))
    assert {k for k, s in sources.items() if s["plausibility"] == f"campaign:{campaign.name}"} == pilot_keys
    counts = (chosen.label_sources or {})["counts"]["plausibility"]
    assert counts[f"campaign:{campaign.name}"] == PILOT and sum(counts.values()) == 4095

    # the card says where each label came from, and which items changed source
    card = render_card(meta=release_meta(chosen), files=[], stats={})
    assert "### Label sources" in card
    assert f"campaign {campaign.name} (`campaign:{campaign.name}`) | {PILOT} |" in card
    assert "| `plausibility` | WinoWhy (winowhy.json), import #" in card
    assert f"Items whose labels come from another source than in 1.0.1: {PILOT}." in card
    assert (before.label_sources or {})["chosen"] == {}


@pytest.mark.django_db
def test_aggregation_writes_the_fields_only_where_no_import_labelled(make_annotators, curator):
    schema = _schema("s1")
    fresh = _reason(schema, 1, "fresh")
    batch_reason = _reason(schema, 2, "imported", plausibility=0.8, label="positive")
    from datasets.labels import import_labels_record
    from datasets.models import ImportBatch

    batch = ImportBatch.objects.create(format="reasons")
    assert import_labels_record(batch, [fresh, batch_reason], ["plausibility"]) == 1  # fresh has none
    campaign = _pilot([fresh, batch_reason], make_annotators(2, prefix="agg"), name="agg")
    summary = campaign_aggregate(campaign=campaign)
    assert (summary.labels_changed, summary.labels_over_import) == (2, 1)
    fresh.refresh_from_db()
    batch_reason.refresh_from_db()
    assert (fresh.plausibility, fresh.label) == (1.0, "positive")  # no import: the campaign's
    assert (batch_reason.plausibility, batch_reason.label) == (0.8, "positive")  # as imported
    source = LabelSource.objects.get(campaign_id=campaign.pk)
    assert source.kind == "campaign" and source.name == "campaign:agg"
    # a curator's decision changes the campaign's layer, never the import's
    from annotation.services import adjudication_record

    item = CampaignItem.objects.get(campaign=campaign, reason=batch_reason)
    adjudication_record(item=item, curator=curator, decision="acceptable")
    batch_reason.refresh_from_db()
    assert batch_reason.label == "positive"
    assert Label.objects.get(source=source, reason=batch_reason).value["label"] == "acceptable"
    assert Label.objects.get(source__kind="import", reason=batch_reason).value == {
        "plausibility": 0.8,
        "label": "positive",
    }


def test_every_label_names_fields_of_its_model():
    for model, labels in LABEL_FIELDS.items():
        names = {f.name for f in model._meta.get_fields()}
        for fields in labels.values():
            assert set(fields) <= names


@pytest.mark.django_db
def test_existing_labels_migrate_into_layers_losing_nothing(make_annotators):
    """The data migration (annotation 0004) on a database whose labels predate layers:
    the campaign's aggregated labels become its layer, the rest the import's."""
    import importlib

    from django.apps import apps

    migration = importlib.import_module("annotation.migrations.0004_label_layers_from_existing")
    schema = _schema("m1", switchable=False)
    reasons = [_reason(schema, i, f"r{i}", plausibility=0.6, label="acceptable") for i in range(3)]
    campaign = _pilot(reasons[:2], make_annotators(2, prefix="mig"), name="old-campaign")
    campaign_aggregate(campaign=campaign)
    Label.objects.all().delete()  # as before layers
    LabelSource.objects.all().delete()
    migration.forwards(apps, None)
    layers = {(x.source.name, x.reason_id or x.schema_id, x.name): x.value for x in Label.objects.all()}
    assert layers[("campaign:old-campaign", reasons[0].pk, "plausibility")] == {
        "plausibility": 0.0,  # the pilot voted against 0.6: implausible
        "label": "negative",
    }
    assert layers[("import:before-layers", reasons[2].pk, "plausibility")] == {
        "plausibility": 0.6,
        "label": "acceptable",
    }
    assert layers[("import:before-layers", schema.pk, "switchable")] == {"switchable": False}
    assert len(layers) == 4  # two campaign layers, one reason and one schema label from before


@pytest.mark.django_db
def test_the_release_page_asks_for_a_source_and_shows_them(client, curator, make_annotators):
    from django.urls import reverse

    from datasets.labels import import_labels_record
    from datasets.models import ImportBatch

    schema = _schema("p1", collection="mine")
    reasons = [_reason(schema, i, f"r{i}", plausibility=0.8, label="positive") for i in range(3)]
    import_labels_record(ImportBatch.objects.create(format="reasons"), reasons, ["plausibility"])
    release_create(name="mine", dataset="winowhy", version="1.0.0", collection="mine", user=curator)
    campaign = _pilot(reasons[:2], make_annotators(2, prefix="page"), name="page-pilot")
    client.force_login(curator)
    preview = client.get(reverse("annotation:campaign-aggregate", args=[campaign.name])).content.decode()
    assert 'data-figure="labels-over-import">2<' in preview and 'id="over-import"' in preview
    client.post(reverse("annotation:campaign-aggregate", args=[campaign.name]), {"confirm": "1"})

    url = reverse("releases:release-create")
    form = {"name": "mine", "dataset": "winowhy", "collection": "mine", "version": "1.1.0", "step": "preview"}
    refused = client.post(url, form)
    assert refused.status_code == 400
    assert "2 items have an imported label and a different one" in refused.content.decode()
    form["label_plausibility"] = "campaign:page-pilot"
    page = client.post(url, form)
    assert page.status_code == 200 and 'id="sources-changed"' in page.content.decode()
    client.post(url, {**form, "step": "create", "previewed": page.context["previewed"]})
    detail = client.get(reverse("releases:release-detail", args=["mine", "1.1.0"])).content.decode()
    assert 'id="label-sources"' in detail and "campaign page-pilot" in detail
    assert "2 items take their labels from another source than in 1.0.0" in detail


@pytest.mark.django_db
def test_the_api_previews_an_aggregation_with_dry_run(client, curator, make_annotators):
    from django.urls import reverse

    schema = _schema("a1")
    reason = _reason(schema, 1, "r")
    campaign = _pilot([reason], make_annotators(2, prefix="api"), name="api-pilot")
    client.force_login(curator)
    url = reverse("annotation-api:campaign-aggregate", args=[campaign.name])
    preview = client.post(url, {"dry_run": True}, content_type="application/json").json()
    assert (
        preview["dry_run"] is True and preview["labels_changed"] == 1 and preview["labels_over_import"] == 0
    )
    assert not Label.objects.exists()
    done = client.post(url, {}, content_type="application/json").json()
    assert done["dry_run"] is False and done["labels_changed"] == 1
    assert Label.objects.get(reason=reason).source.name == "campaign:api-pilot"
