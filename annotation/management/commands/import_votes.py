"""manage.py import_votes FORMAT PATH --campaign NAME [--task TASK]"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Task
from annotation.votes_import import FORMATS, VotesImportError, votes_import


class Command(BaseCommand):
    help = (
        "Import published votes as the judgments of an imported campaign, so the data set can be "
        "audited like our own. FORMAT: winowhy (winowhy.json; each reason's plausibility score "
        "becomes 5 votes by 5 anonymous raters) or jsonl (rows of item, annotator, answer; see the "
        "docs page /docs/agreement/). A bad file writes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("format", choices=FORMATS)
        parser.add_argument("path")
        parser.add_argument("--campaign", required=True, help="name (slug) of the campaign to create")
        parser.add_argument("--task", choices=Task.values, help="task of a new jsonl campaign")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = votes_import(
                format=options["format"],
                path=options["path"],
                campaign_name=options["campaign"],
                task=options["task"],
            )
        except VotesImportError as exc:
            raise CommandError(f"{exc} (nothing was imported)") from exc
        self.stdout.write(
            f"campaign {result.campaign.name}: {result.judgments} judgments on {result.items} items "
            f"by {result.annotators} annotators imported"
        )
