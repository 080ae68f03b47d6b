"""python manage.py audit (--release NAME@VERSION | --collection DATASET/NAME[/SPLIT]) --model NAME [...]"""

from __future__ import annotations

import json
import time
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from core.commands import LaidOutHelpCommand
from evaluation.audit.report import report_lines
from evaluation.audit.services import AuditError, audit_create, audit_run_here, source_parse
from evaluation.audit.tasks import audit_enqueue
from evaluation.models import Audit, AuditStatus

HELP = """An artifact audit of a release's or a collection's items (see the docs page /docs/filtering/).

Frozen features of every item's texts from a model of the registry (mean-pooled last hidden
states and per-option log-probabilities; cached by the model's SHA-256 and the text, so a
second audit recomputes nothing), then:
  - partial-input baselines, each a classifier on the frozen features with k-fold
    cross-validation (folds grouped by twin pair or question): Winograd without the context
    before the pronoun and the candidates alone (with twin-pair scoring), WinoWhy's reason
    alone and with its question, ComVE A's statements each alone; beside the majority
    baseline, with a Wilson interval and a binomial test;
  - the model's own answer from its per-option log-probabilities;
  - dataset cartography (confidence, variability, correctness per item over --epochs);
  - AfLite (Le Bras et al. 2020, Algorithm 1; --aflite NAME=VALUE to change a parameter).
On Winograd items with Trichelair et al.'s labels it also prints how well the automatic
scores find the associative schemas (ROC AUC, overlap of the top k).

The features are computed here (one process) or, with --queue, by the model workers
(`celery -A config worker -Q models`, any number: the chunks are shared), each with
WINNOW_AUDIT_THREADS threads (default 1: on a shared 2-core machine two one-thread workers
are much faster than one worker with two threads). Without --queue, chunks a running
worker has taken stay its own: the command then waits for the audit to end, as with
--queue. --show ID prints
a finished audit again. Bad input (a source too small for the parameters, a model not in
the registry, items with no labels) is refused with a message naming the setting; nothing
is written then.

Examples:
  python manage.py audit --release wsc273@1.0.0 --model SmolLM2-135M-Instruct.Q4_1
  python manage.py audit --release comve-train@1.0.0 --model SmolLM2-135M-Instruct.Q4_1 --queue
  python manage.py audit --show 3 --json
"""


class Command(LaidOutHelpCommand):
    help = HELP

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group()
        source.add_argument("--release", help="NAME@VERSION of a release")
        source.add_argument("--collection", help="DATASET/COLLECTION[/SPLIT], e.g. wsc/mine")
        source.add_argument("--show", type=int, metavar="ID", help="print audit ID's results again")
        parser.add_argument("--model", help="a name of the server's model registry (`manage.py models`)")
        parser.add_argument(
            "--folds", type=int, default=5, help="k of the k-fold cross-validation (default 5)"
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the folds, cartography and AfLite")
        parser.add_argument("--epochs", type=int, default=6, help="cartography's training epochs (default 6)")
        parser.add_argument(
            "--repeats",
            type=int,
            default=5,
            help="fold draws per baseline (default 5): how often each item was right",
        )
        parser.add_argument(
            "--aflite",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="an AfLite parameter (repeatable)",
        )
        parser.add_argument("--chunk-texts", type=int, default=256, help="texts per chunk (default 256)")
        parser.add_argument(
            "--queue", action="store_true", help="send the chunks to the model workers and wait"
        )
        parser.add_argument("--user", default="", help="the curator it is recorded for (default: none)")
        parser.add_argument("--json", action="store_true", help="print the results as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["show"]:
            audit = Audit.objects.filter(pk=options["show"]).first()
            if audit is None:
                raise CommandError(f"no audit #{options['show']}")
            return self._print(audit, options, seconds=None)
        if not (options["release"] or options["collection"]):
            raise CommandError("name a source: --release NAME@VERSION or --collection DATASET/NAME")
        if not options["model"]:
            raise CommandError("--model: name a model of the registry (`manage.py models`)")
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"--user: no user {options['user']!r}")
        aflite: dict[str, Any] = {}
        for pair in options["aflite"]:
            name, _, value = pair.partition("=")
            if not value:
                raise CommandError(f"--aflite {pair!r}: write NAME=VALUE")
            aflite[name.strip()] = json.loads(value)
        source = (
            f"release:{options['release']}" if options["release"] else f"collection:{options['collection']}"
        )
        started = time.monotonic()
        try:
            audit = audit_create(
                source=source_parse(source),
                model=options["model"],
                folds=options["folds"],
                seed=options["seed"],
                epochs=options["epochs"],
                repeats=options["repeats"],
                aflite=aflite,
                chunk_texts=options["chunk_texts"],
                created_by=user,
            )
        except AuditError as exc:
            raise CommandError(exc.message) from None
        self.stderr.write(
            f"audit #{audit.pk}: {len(audit.item_keys)} items, {audit.texts_total} texts in {audit.chunks_total} chunks"
        )
        if options["queue"]:
            if not audit_enqueue(audit_id=audit.pk):
                audit.refresh_from_db()
                raise CommandError(audit.error)
            audit = self._wait(audit)
        else:
            audit = audit_run_here(audit=audit)
            if audit.active:  # a model worker took a chunk (the last one): it ends the audit
                self.stderr.write(
                    f"audit #{audit.pk} is {audit.status}: another process is finishing it; waiting"
                )
                audit = self._wait(audit)
        self._print(audit, options, seconds=time.monotonic() - started)

    def _wait(self, audit: Audit) -> Audit:
        last = -1
        while True:
            audit.refresh_from_db()
            if audit.texts_done != last:
                self.stderr.write(f"  {audit.texts_done} / {audit.texts_total} texts ({audit.status})")
                last = audit.texts_done
            if not audit.active:
                return audit
            time.sleep(1.0)

    def _print(self, audit: Audit, options: dict[str, Any], *, seconds: float | None) -> None:
        if audit.status != AuditStatus.DONE:
            raise CommandError(f"audit #{audit.pk} is {audit.status}: {audit.error}")
        chunks = list(audit.chunks.values("computed", "cached", "seconds", "worker"))
        computed = sum(c["computed"] for c in chunks)
        busy = sum(c["seconds"] or 0 for c in chunks)
        timing = {
            "texts": audit.texts_total,
            "computed": computed,
            "cached": audit.texts_cached,
            "workers": len({c["worker"] for c in chunks if c["computed"]}),
            "feature_seconds": None
            if audit.features_done_at is None
            else (audit.features_done_at - audit.created_at).total_seconds(),
            "chunk_seconds": busy,
            "command_seconds": seconds,
        }
        if options["json"]:
            body = {
                "audit": audit.pk,
                "source": audit.source_label,
                "model": audit.model_name,
                "model_sha256": audit.model_sha256,
                "timing": timing,
                "results": audit.results,
            }
            self.stdout.write(json.dumps(body, indent=2, default=str))
            return
        self.stdout.write(
            f"audit #{audit.pk}: {audit.source_label} with {audit.model_name} (SHA-256 {audit.model_sha256})"
        )
        self.stdout.write(
            f"features: {timing['texts']} texts, {computed} computed, {audit.texts_cached} from the cache, "
            f"{busy:.1f} s in chunks"
        )
        for line in report_lines(audit.results):
            self.stdout.write(line)
