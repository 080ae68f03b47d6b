"""pipeline_demo (run by ./winnow up): one small WinoWhy pipeline on the template's three
schemas and one ComVE pipeline, each with its first campaign open; safe to run again."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign, Pipeline, StageStatus
from datasets.models import Schema

pytestmark = pytest.mark.django_db


def _run() -> str:
    out = StringIO()
    call_command("pipeline_demo", stdout=out)
    return out.getvalue()


def test_demo_leaves_two_pipelines_ready_and_runs_twice(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    with pytest.raises(CommandError, match="seed_demo"):
        _run()
    call_command("seed_demo", stdout=StringIO())
    out = _run()
    assert "demo-kettles: imported" in out
    assert sorted(Schema.objects.filter(collection="demo-kettles").values_list("external_id", flat=True)) == [
        "kettle-1",
        "kettle-2",
        "lamp-1",
    ]
    winowhy = Pipeline.objects.get(name="demo-winowhy-pipeline")
    comve = Pipeline.objects.get(name="demo-comve-pipeline")
    assert winowhy.created_by is not None and comve.created_by is not None
    assert winowhy.created_by.username == comve.created_by.username == "curator"
    writing = winowhy.stages.get(key="writing")
    assert writing.status == StageStatus.ACTIVE and writing.campaign_id is not None
    assert Campaign.objects.get(pk=writing.campaign_id).items.count() == 3
    comve_writing = comve.stages.get(key="writing").campaign_id
    assert comve_writing is not None and Campaign.objects.get(pk=comve_writing).items.count() == 3
    again = _run()
    assert again.count("exists") == 2 and "imported" not in again
    assert Campaign.objects.filter(name__contains="-pipeline-").count() == 2
