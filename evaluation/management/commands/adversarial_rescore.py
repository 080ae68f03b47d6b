"""python manage.py adversarial_rescore --round N --collection C: earlier rounds' kept items
scored by round N's models (docs/adversarial.md, "Re-scoring")."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import WinnowError
from evaluation.adversarial.services import adversarial_rescore, adversarial_round_get


class Command(BaseCommand):
    help = (
        "Score the kept items of the rounds before round N of an adversarial collection with round N's "
        "models (and method), one re-score per item and model; the items are not rewritten, and a "
        "re-score already there is kept (safe to run again)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--round", type=int, required=True, help="the round whose models score (1, 2, ...)"
        )
        parser.add_argument(
            "--collection", required=True, help="the adversarial collection the rounds write into"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            found = adversarial_round_get(collection=options["collection"], number=options["round"])
            models = ", ".join(m["name"] for m in found.models_in_loop) or "no model"
            self.stdout.write(f"round {found.number} of {found.pipeline.collection}: {models}")
            done = adversarial_rescore(round=found)
        except WinnowError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"{done.items} earlier kept items: {done.created} new re-scores, {done.kept} there already"
        )
