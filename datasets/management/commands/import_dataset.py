"""python manage.py import_dataset FORMAT PATH... [--categories FILE] [--split S]"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.commands import LaidOutHelpCommand
from datasets.importers import PARSERS
from datasets.services import DatasetImportError, dataset_import

HELP = """Import a public data set, or your own items, into Winnow (atomic and idempotent).

Formats and what to give them (files are recognised by content, not by name):
  winowhy     winowhy.json (273 questions with 15 reasons each) [--categories cat_ref.json]
  trichelair  the folder with WSC_switched_label.json and WSC_associative_label.json
              (labels put onto the schemas imported by `winowhy`, matched by text)
  comve       one split folder of SemEval-2020 Task 4 (train/, dev/, test/ or trial/),
              or its data and answer CSV files; the split comes from the file names or --split
  senmaking   the pilot dataset.jsonl

Your own items (one JSON Lines or CSV file each, --collection required; the fields are on
the docs page /docs/formats/#importing-your-own-items, template files in static/import-templates/):
  schemas      new Winograd schemas: id, sentence with the pronoun in [brackets],
               candidate_a, candidate_b, answer, optional twin and source
  reasons      reasons for schemas of the collection: schema, text, optional origin,
               plausibility, label, knowledge_type
  comve-items  new ComVE items: id, sent0, sent1, false_index; option_a..c, correct_option;
               references (or ref1..ref3); --split (default test)
Every problem in such a file is listed at once, with its row and field.

A bad file writes nothing and the error names the file, the row and the field.
Running the same import again creates nothing and reports what it left unchanged.

Example:
  python manage.py import_dataset winowhy ../shared/data/winowhy/winowhy.json \\
      --categories ../shared/data/winowhy/cat_ref.json
"""


class Command(LaidOutHelpCommand):
    help = HELP

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("format", choices=sorted(PARSERS), help="the data-set format")
        parser.add_argument("paths", nargs="+", type=Path, help="files or folders to import")
        parser.add_argument(
            "--categories", type=Path, help="winowhy: cat_ref.json (knowledge type -> question indexes)"
        )
        parser.add_argument(
            "--split",
            choices=["train", "dev", "test", "trial", "pilot"],
            help="comve: the split, if the file names do not tell",
        )
        parser.add_argument(
            "--collection",
            help="winowhy/trichelair: schema collection (default wsc273); your own items: their collection (required)",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="check the files and count what would change; write nothing",
        )
        parser.add_argument("--dataset", help="comve/senmaking: dataset name (default comve / senmaking)")

    def handle(self, *args: Any, **options: Any) -> None:
        import_options = {
            key: options[key]
            for key in ("categories", "split", "collection", "dataset", "dry_run")
            if options.get(key) is not None
        }
        try:
            result = dataset_import(format=options["format"], paths=options["paths"], options=import_options)
        except DatasetImportError as exc:
            every = "".join(f"\n  {problem.message}" for problem in exc.problems)
            raise CommandError(f"nothing imported: {exc.message}{every}") from exc
        if options["dry_run"]:
            self.stdout.write(f"dry run, nothing written: {options['format']} would give {result.describe()}")
        else:
            self.stdout.write(f"{options['format']} import #{result.batch.pk}: {result.describe()}")
        for line in result.highlights():
            self.stdout.write(line)
        if options["format"] == "winowhy":
            self.stdout.write(f"without a twin: {', '.join(result.summary['without_twin']) or 'none'}")
        for warning in result.warnings[:20]:
            self.stdout.write(self.style.WARNING(f"warning: {warning}"))
        if len(result.warnings) > 20:
            self.stdout.write(self.style.WARNING(f"... and {len(result.warnings) - 20} more warnings"))
