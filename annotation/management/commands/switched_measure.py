"""manage.py switched_measure: our switched sentences against Trichelair et al.'s."""

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.switching import measure_against_trichelair


class Command(BaseCommand):
    help = "Share of Trichelair's switchable schemas whose switched sentence we reproduce."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--file", default=str(Path(settings.WINNOW_DATA_DIR) / "wsc_switched" / "WSC_switched_label.json")
        )
        parser.add_argument("--show-misses", action="store_true")

    def handle(self, *args: Any, **opts: Any) -> None:
        path = Path(opts["file"])
        if not path.exists():
            raise CommandError(f"{path}: not found (set WINNOW_DATA_DIR)")
        rows = json.loads(path.read_text(encoding="utf-8"))
        matching, total, misses = measure_against_trichelair(rows)
        self.stdout.write(
            f"switched sentences matching Trichelair et al. (whitespace+case normalised): "
            f"{matching}/{total} = {matching / total:.1%}"
        )
        if opts["show_misses"]:
            for m in misses:
                self.stdout.write(f"#{m['index']}\n  ours:   {m['ours']}\n  theirs: {m['theirs']}")
