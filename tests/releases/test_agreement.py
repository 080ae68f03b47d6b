"""The release quotes the agreement figures of the campaigns that judged its items."""

import pytest
from django.urls import reverse

from annotation.models import Campaign, CampaignItem
from releases import services
from tests.releases.factories import create_release, make_schemas

pytestmark = pytest.mark.django_db


def test_items_no_campaign_judged_give_a_card_without_agreement_figures(
    settings, tmp_path, curator, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(2)
    # a campaign over other items only: it says nothing about these
    other = Campaign.objects.create(name="elsewhere", task="switchability", judgments_per_item=3)
    CampaignItem.objects.create(campaign=other, schema=make_schemas(1, collection="other")[0])
    release = create_release(django_capture_on_commit_callbacks, user=curator, collection="wsc273")
    assert release.agreement_summary["campaigns"] == {}
    card = (services.release_folder(release) / "README.md").read_text(encoding="utf-8")
    assert "No agreement figures" in card


def test_campaign_figures_are_frozen_into_the_release_card_and_pages(
    settings, tmp_path, curator, django_capture_on_commit_callbacks, monkeypatch, client
):
    settings.MEDIA_ROOT = tmp_path / "media"
    schemas = make_schemas(2)
    campaign = Campaign.objects.create(name="switch-1", task="switchability", judgments_per_item=3)
    CampaignItem.objects.create(campaign=campaign, schema=schemas[0])
    Campaign.objects.create(name="unrelated", task="switchability", judgments_per_item=3)
    calls = []

    def campaign_agreement_summary(*, campaign):  # the agreement helper's function shape
        calls.append(campaign.name)
        return {
            "campaign": campaign.name,
            "task_label": "Switchability (Trichelair et al.)",
            "items_judged": 1,
            "judgments": 3,
            "annotators": 3,
            "figures": {"fleiss_kappa": {"value": 0.5, "ci_low": 0.25, "ci_high": 0.75, "undefined": None}},
            "per_annotator": [{"annotator": "cora"}],  # never copied into a release
        }

    # Replace the function, not the module: the agreement pages import the module's other names.
    monkeypatch.setattr(
        "annotation.agreement.services.campaign_agreement_summary", campaign_agreement_summary
    )
    release = create_release(django_capture_on_commit_callbacks, user=curator)
    assert calls == ["switch-1"]
    figures = release.agreement_summary["campaigns"]["switch-1"]
    assert figures["figures"]["fleiss_kappa"]["value"] == 0.5
    assert "per_annotator" not in figures
    card = (services.release_folder(release) / "README.md").read_text(encoding="utf-8")
    assert "| Fleiss' kappa | 0.5000 | 0.2500 – 0.7500 |" in card
    client.force_login(curator)
    page = client.get(reverse("releases:release-detail", args=[release.name, release.version]))
    assert b"Campaign switch-1" in page.content and b"0.5000" in page.content
