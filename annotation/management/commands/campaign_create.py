"""manage.py campaign_create NAME --task T --items {schemas,reasons,comve,slots} ..."""

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.answers import ITEM_KINDS
from annotation.models import Task
from annotation.services import CampaignError, campaign_create


class Command(BaseCommand):
    help = "Create an annotation campaign over chosen items."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--task", required=True, choices=Task.values)
        parser.add_argument("--items", required=True, choices=ITEM_KINDS)
        parser.add_argument(
            "--filter",
            action="append",
            default=[],
            metavar="FIELD=VALUE",
            help="e.g. origin=human (repeatable)",
        )
        parser.add_argument("--ids", nargs="+", type=int, help="only these item ids")
        parser.add_argument("-k", type=int, default=None, help="judgments per item (default: the paper's)")
        parser.add_argument("--gold-ids", nargs="+", type=int, default=None)
        parser.add_argument("--gold-rate", type=float, default=0.1)
        parser.add_argument("--lease", type=int, default=600, help="lease seconds")
        parser.add_argument("--slots", type=int, default=0, help="writing slots (items=slots)")
        parser.add_argument("--instructions-file", default=None)
        parser.add_argument("--created-by", default=None, help="username")

    def handle(self, *args: Any, **opts: Any) -> None:
        filters: dict[str, str] = {}
        for f in opts["filter"]:
            if "=" not in f:
                raise CommandError(f"--filter {f!r}: write FIELD=VALUE")
            key, value = f.split("=", 1)
            filters[key.strip()] = value.strip()
        instructions = None
        if opts["instructions_file"]:
            with open(opts["instructions_file"], encoding="utf-8") as fh:
                instructions = fh.read()
        user = None
        if opts["created_by"]:
            user = get_user_model().objects.filter(username=opts["created_by"]).first()
            if user is None:
                raise CommandError(f"--created-by: no user {opts['created_by']!r}")
        try:
            campaign = campaign_create(
                name=opts["name"],
                task=opts["task"],
                items=opts["items"],
                filters=filters,
                ids=opts["ids"],
                k=opts["k"],
                gold_ids=opts["gold_ids"],
                gold_rate=opts["gold_rate"],
                lease_seconds=opts["lease"],
                slots=opts["slots"],
                instructions=instructions,
                created_by=user,
            )
        except CampaignError as exc:
            raise CommandError(str(exc)) from None
        n = campaign.items.filter(is_gold=False).count()
        gold = campaign.items.filter(is_gold=True).count()
        self.stdout.write(
            f"campaign {campaign.name}: task {campaign.task}, {n} items, {gold} gold, "
            f"K={campaign.judgments_per_item}, lease {campaign.lease_seconds}s"
        )
