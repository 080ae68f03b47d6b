"""manage.py annotation_demo: one demo campaign per task over the demo items, and a
Prolific study link on the switchability campaign (safe to run again)."""

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from annotation.crowd.services import study_link_create, study_link_path, study_link_token
from annotation.models import Campaign, StudyLink
from annotation.services import CampaignError, campaign_create
from datasets.models import Schema

#: the demo's study: what a participant reads before the first item
DEMO_CONSENT = (
    "This is Winnow's demo study. You will judge 5 sentence pairs (about 2 minutes). "
    "Your answers are stored under your Prolific id only, used to build a benchmark, "
    "and you may stop at any time by closing the page."
)

#: gold items of demo-switchability (schemas with a known switchable label), so that the
#: demo study's screening can be tried: its first items are these, with known answers
DEMO_GOLD = 2

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
        parser.add_argument(
            "--curator", default="curator", help="username of the curator who opens the demo study link"
        )
        parser.add_argument(
            "--site",
            default="http://127.0.0.1:8000",
            help="the site's address, printed before the study link's path (default %(default)s)",
        )

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
            gold: list[int] = []
            if name == "demo-switchability":
                known = Schema.objects.filter(collection=opts["collection"], switchable__isnull=False)
                gold = list(known.order_by("pk").values_list("pk", flat=True)[:DEMO_GOLD])
            try:
                campaign = campaign_create(
                    name=name,
                    task=task,
                    items=items,
                    filters=chosen if items != "slots" else None,
                    slots=3 if items == "slots" else 0,
                    gold_ids=gold or None,
                    gold_rate=0.2 if gold else 0.0,
                )
            except CampaignError as exc:
                self.stdout.write(f"{name}: skipped ({exc})")
                continue
            golds = campaign.items.filter(is_gold=True).count()
            self.stdout.write(
                f"{name}: created with {campaign.items.count()} items" + (f" ({golds} gold)" if golds else "")
            )
        self._study_link(opts["curator"], opts["site"].rstrip("/"))

    def _study_link(self, username: str, site: str) -> None:
        """demo-switchability opened to Prolific: batches of 5, answers under 2 s flagged, and
        its gold items as the screening (one right of two passes)."""
        campaign = Campaign.objects.filter(name="demo-switchability").first()
        curator = get_user_model().objects.filter(username=username).first()
        if campaign is None or curator is None:
            self.stdout.write("study link: skipped (needs demo-switchability and the curator)")
            return
        link = StudyLink.objects.filter(campaign=campaign).order_by("pk").first()
        if link is None:
            screening = campaign.items.filter(is_gold=True).count()
            link = study_link_create(
                campaign=campaign,
                platform="prolific",
                consent=DEMO_CONSENT,
                completion_code="DEMO5DONE",
                batch_size=5,
                min_seconds=2,
                screening_items=screening,
                pass_mark=0.5,
                user=curator,
            )
            self.stdout.write(
                "study link: created on demo-switchability (Prolific, batches of 5"
                + (f", {screening} screening items" if screening else "")
                + ")"
            )
        token = study_link_token(link)
        trial = urlencode({"PROLIFIC_PID": "DEMO-PARTICIPANT-1", "STUDY_ID": "demo", "SESSION_ID": "demo-1"})
        self.stdout.write(f"  the link to paste into Prolific: {site}{study_link_path(link)}")
        self.stdout.write(f"  enter as a participant: {site}{reverse('study:enter', args=[token])}?{trial}")
