"""manage.py pipeline_demo: one small WinoWhy pipeline and one ComVE pipeline ready to walk
through (issue 13), started by the demo curator (after seed_demo; safe to run again)."""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Pipeline
from annotation.pipelines.services import pipeline_create
from datasets.models import Schema
from datasets.services import dataset_import

TEMPLATE = Path(settings.BASE_DIR) / "static" / "import-templates" / "schemas.csv"
WINOWHY = "demo-winowhy-pipeline"
COMVE = "demo-comve-pipeline"


class Command(BaseCommand):
    help = (
        "Import the schemas template (kettle-1, kettle-2, lamp-1) as the collection "
        "demo-kettles and start a WinoWhy pipeline on it, and a ComVE pipeline of three "
        "writing slots into demo-comve, both by the demo curator (after seed_demo)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--collection", default="demo-kettles", help="collection of the template's schemas"
        )
        parser.add_argument(
            "--comve-collection", default="demo-comve", help="collection of the written ComVE items"
        )
        parser.add_argument("--curator", default="curator", help="username of the curator who starts them")

    def handle(self, *args: Any, **opts: Any) -> None:
        if getattr(settings, "WINNOW_PRODUCTION", False):
            raise CommandError("pipeline_demo is for the embedded demo; it does not run in production.")
        curator = get_user_model().objects.filter(username=opts["curator"]).first()
        if curator is None:
            raise CommandError(f"no user {opts['curator']!r}: run manage.py seed_demo first")
        collection = opts["collection"]
        if not Schema.objects.filter(collection=collection).exists():
            result = dataset_import(
                format="schemas", paths=[TEMPLATE], options={"collection": collection}, user=curator
            )
            self.stdout.write(f"{collection}: imported {result.created} rows from {TEMPLATE.name}")
        for name, kind, coll, slots in (
            (WINOWHY, "winowhy", collection, 0),
            (COMVE, "comve", opts["comve_collection"], 3),
        ):
            if Pipeline.objects.filter(name=name).exists():
                self.stdout.write(f"{name}: exists")
                continue
            pipeline = pipeline_create(curator=curator, kind=kind, collection=coll, name=name, slots=slots)
            self.stdout.write(f"{name}: started ({pipeline.get_kind_display()} on {coll})")
