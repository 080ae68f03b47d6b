"""python manage.py generate_reasons --collection C --model NAME [--k 5] [--limit N] [--dry-run]"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.commands import LaidOutHelpCommand
from datasets.models import Reason, Schema
from datasets.services import DatasetImportError, generated_reasons_add
from evaluation.lm import model_cache
from evaluation.lm.generation import generate_reasons, keep_reasons, reason_prompt
from evaluation.lm.modeling import ModelLoadError
from evaluation.selectors import model_get

HELP = """Candidate reasons for Winograd questions written by a local causal language model, as
WinoWhy made its `generated` reasons (Zhang et al. 2020, section 3.1): each question, then
"The '<pronoun>' refers to <answer> because", finished by the model; the k best of a beam
search (k = 5 in WinoWhy), each cut at its first sentence end. Empty outputs and outputs
that repeat another (or a reason the question has already) are dropped and counted. The
rest are stored as reasons of origin `generated`, their import batch naming the model
(name, SHA-256) and the decoding settings, ready for a plausibility campaign.

Example:
  python manage.py generate_reasons --collection wsc273 --model SmolLM2-135M-Instruct.Q4_1 --limit 3 --dry-run
"""


class Command(LaidOutHelpCommand):
    help = HELP

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--collection", required=True, help="the schemas' collection (wsc273, or your own)"
        )
        parser.add_argument(
            "--model", required=True, help="a name of the server's model registry (`manage.py models`)"
        )
        parser.add_argument("--k", type=int, default=5, help="reasons per question (WinoWhy: 5)")
        parser.add_argument("--beams", type=int, default=5, help="beams of the search (at least k)")
        parser.add_argument("--max-new-tokens", type=int, default=20, help="longest reason, in tokens")
        parser.add_argument("--limit", type=int, help="only the first N questions of the collection")
        parser.add_argument(
            "--dry-run", action="store_true", help="print what would be stored; store nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        entry = model_get(name=options["model"])
        if entry is None:
            raise CommandError(
                f"no model {options['model']!r} in the registry; `manage.py models` lists them"
            )
        if entry.kind != "causal":
            raise CommandError(f"{entry.name} is a {entry.kind} model; generating reasons needs a causal one")
        schemas = list(Schema.objects.filter(collection=options["collection"]).order_by("id"))
        if options["limit"]:
            schemas = schemas[: options["limit"]]
        if not schemas:
            raise CommandError(f"no schemas in collection {options['collection']!r}")
        try:
            loaded = model_cache.load(entry.path)
        except ModelLoadError as exc:
            raise CommandError(str(exc)) from exc
        prompts = [reason_prompt(s.sentence, s.pronoun, s.correct_candidate) for s in schemas]
        started = time.perf_counter()
        try:
            outputs = generate_reasons(
                loaded,
                prompts,
                k=options["k"],
                num_beams=options["beams"],
                max_new_tokens=options["max_new_tokens"],
                progress=lambda done, total: self.stderr.write(f"\r{done} / {total} questions", ending=""),
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stderr.write("")
        existing: dict[int, list[str]] = {}
        for schema_id, text in Reason.objects.filter(schema__in=schemas).values_list("schema_id", "text"):
            existing.setdefault(schema_id, []).append(text)
        kept: dict[str, list[str]] = {}
        empty = duplicate = 0
        for schema, texts in zip(schemas, outputs, strict=True):
            keep, e, d = keep_reasons(texts, existing.get(schema.pk, []))
            kept[schema.external_id] = keep
            empty, duplicate = empty + e, duplicate + d
        total = sum(len(t) for t in outputs)
        seconds = time.perf_counter() - started
        self.stdout.write(
            f"{len(schemas)} questions, {total} outputs in {seconds:.1f} s: {empty} empty, "
            f"{duplicate} duplicate, {total - empty - duplicate} kept"
        )
        for schema in schemas[:3]:
            self.stdout.write(f"  {reason_prompt(schema.sentence, schema.pronoun, schema.correct_candidate)}")
            for text in kept[schema.external_id]:
                self.stdout.write(f"    - {text}")
        if options["dry_run"]:
            self.stdout.write("dry run: nothing stored")
            return
        settings = {
            "k": options["k"],
            "num_beams": options["beams"],
            "max_new_tokens": options["max_new_tokens"],
            "decoding": "beam search",
            "prompt": "{sentence} The '{pronoun}' refers to {answer} because",
        }
        model = {"name": entry.name, "sha256": loaded.settings.get("sha256", ""), "kind": entry.kind}
        try:
            stored = generated_reasons_add(
                collection=options["collection"], reasons=kept, model=model, settings=settings
            )
        except DatasetImportError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(
            f"stored {stored.created} reasons of origin 'generated' (import batch #{stored.batch.pk})"
        )
