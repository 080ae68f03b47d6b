"""python manage.py dataset_summary [--json]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from datasets.selectors import dataset_summary


class Command(BaseCommand):
    help = (
        "Counts a curator wants at a glance: schemas, answers A/B, twins, switchable, associative, "
        "reasons by origin and by label, questions per knowledge type, ComVE items per split and subtask."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print JSON instead of text")

    def handle(self, *args: Any, **options: Any) -> None:
        summary = dataset_summary()
        if options["json"]:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        if not summary["schemas"] and not summary["comve"]:
            self.stdout.write("No items yet: see `python manage.py import_dataset --help`.")
        for collection, s in summary["schemas"].items():
            self.stdout.write(f"Winograd schemas [{collection}]: {s['schemas']}")
            self.stdout.write(f"  answers: A {s['answers']['A']}, B {s['answers']['B']}")
            self.stdout.write(
                f"  twins: {s['twins']['schemas_with_twin']} schemas in {s['twins']['pairs']} pairs"
            )
            self.stdout.write(f"  switchable: {s['switchable']['yes']} yes, {s['switchable']['no']} no")
            self.stdout.write(f"  associative: {s['associative']['yes']} yes, {s['associative']['no']} no")
            kinds = ", ".join(f"{k} {n}" for k, n in s["knowledge_types"].items())
            self.stdout.write(f"  questions per knowledge type: {kinds}")
            r = s["reasons"]
            self.stdout.write(f"  reasons: {r['total']}")
            self.stdout.write("    by origin: " + ", ".join(f"{k} {n}" for k, n in r["by_origin"].items()))
            self.stdout.write("    by label: " + ", ".join(f"{k} {n}" for k, n in r["by_label"].items()))
        for dataset, splits in summary["comve"].items():
            self.stdout.write(f"ComVE items [{dataset}]:")
            for split, c in splits.items():
                self.stdout.write(
                    f"  {split}: {c['items']} items (A {c['subtask_a']}, B {c['subtask_b']}, C {c['subtask_c']})"
                )
