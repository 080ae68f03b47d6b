"""manage.py annotation_demo: one demo campaign per task over the demo items (safe to run again)."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Campaign
from annotation.services import CampaignError, campaign_create

# name, task, items, filters (the collection / dataset is added from the options)
DEMO_CAMPAIGNS: list[tuple[str, str, str, dict[str, str]]] = [
    ("demo-switchability", "switchability", "schemas", {}),
    ("demo-associativity", "associativity", "schemas", {}),
    ("demo-reason-writing", "reason_writing", "schemas", {}),
    ("demo-plausibility", "reason_plausibility", "reasons", {}),
    ("demo-knowledge-type", "knowledge_type", "reasons", {"label": "positive"}),
    ("demo-comve-writing", "comve_writing", "slots", {}),
    ("demo-comve-check", "comve_check", "comve", {}),
    # shows the answers of demo-comve-check's testees once there are some
    ("demo-comve-rewrite", "comve_rewrite", "comve", {}),
]


class Command(BaseCommand):
    help = "Create a demo campaign for each annotation task over the demo data (after seed_demo)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", default="demo", help="schemas/reasons collection to use")
        parser.add_argument("--dataset", default="demo", help="ComVE dataset to use")

    def handle(self, *args: Any, **opts: Any) -> None:
        if getattr(settings, "WINNOW_PRODUCTION", False):
            raise CommandError("annotation_demo is for the embedded demo; it does not run in production.")
        for name, task, items, filters in DEMO_CAMPAIGNS:
            if Campaign.objects.filter(name=name).exists():
                self.stdout.write(f"{name}: exists")
                continue
            chosen = dict(filters)
            if items == "schemas":
                chosen["collection"] = opts["collection"]
            elif items == "reasons":
                chosen["schema__collection"] = opts["collection"]
            elif items == "comve":
                chosen["dataset"] = opts["dataset"]
            try:
                campaign = campaign_create(
                    name=name,
                    task=task,
                    items=items,
                    filters=chosen if items != "slots" else None,
                    slots=3 if items == "slots" else 0,
                )
            except CampaignError as exc:
                self.stdout.write(f"{name}: skipped ({exc})")
                continue
            self.stdout.write(f"{name}: created with {campaign.items.count()} items")
