"""python manage.py aflite --audit ID [--aflite NAME=VALUE ...] [--release NAME[@VERSION] --user CURATOR]"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from core.commands import LaidOutHelpCommand
from core.errors import WinnowError
from evaluation.audit.services import audit_aflite, audit_filtered_release_create, lm_accuracy_on
from evaluation.models import Audit

HELP = """AfLite (Le Bras et al. 2020, Algorithm 1; see the docs page /docs/filtering/) over a finished audit's
cached features, and the filtered release of the items it keeps.

Without --aflite it prints the audit's own AfLite result; with --aflite NAME=VALUE
(repeatable: m, t, k, tau, target_n, seed, c, max_iter, tol, standardize) it runs AfLite
again on the cached features (no model is loaded). It prints the counts per iteration and
the model's own accuracy (its per-option log-probabilities, where the data set has one) on
all items and on the kept ones, with 95% Wilson intervals.

With --release NAME[@VERSION] (default version 1.0.0) and --user CURATOR it makes a draft
release of the kept items beside the full one: its card states the filter (model and
SHA-256, features, parameters, seed, counts per iteration), its diff against the full
release names every removed item. Evaluate a model on both and compare the runs item by
item to see the drop.

Examples:
  python manage.py aflite --audit 3
  python manage.py aflite --audit 3 --aflite k=250 --aflite tau=0.8
  python manage.py aflite --audit 3 --release comve-train-aflite --user curator
"""


class Command(LaidOutHelpCommand):
    help = HELP

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--audit", type=int, required=True, help="a finished audit (`manage.py audit`)")
        parser.add_argument(
            "--aflite",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="an AfLite parameter (repeatable)",
        )
        parser.add_argument("--release", default="", help="NAME[@VERSION] of the filtered release to make")
        parser.add_argument("--user", default="", help="the curator who makes the release")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        audit = Audit.objects.select_related("release").filter(pk=options["audit"]).first()
        if audit is None:
            raise CommandError(f"--audit: no audit #{options['audit']}")
        params: dict[str, Any] = {}
        for pair in options["aflite"]:
            name, _, value = pair.partition("=")
            if not value:
                raise CommandError(f"--aflite {pair!r}: write NAME=VALUE")
            params[name.strip()] = json.loads(value)
        try:
            run = audit_aflite(audit=audit, aflite=params)
            release = None
            if options["release"]:
                user = get_user_model().objects.filter(username=options["user"]).first()
                if user is None:
                    raise CommandError("--user: name the curator who makes the release")
                name, _, version = options["release"].partition("@")
                release = audit_filtered_release_create(
                    audit=audit, name=name, version=version or "1.0.0", aflite=params, user=user
                )
        except WinnowError as exc:
            raise CommandError(exc.message) from None
        removed = set(run.removed)
        kept = [k for k in run.keys if k not in removed]
        all_items, kept_items = lm_accuracy_on(audit), lm_accuracy_on(audit, kept)
        body: dict[str, Any] = {
            "audit": audit.pk,
            "source": audit.source_label,
            "model": audit.model_name,
            "model_sha256": audit.model_sha256,
            "aflite": run.summary,
            "lm_accuracy_all": all_items,
            "lm_accuracy_kept": kept_items,
            "release": None if release is None else f"{release.name}@{release.version}",
        }
        if options["json"]:
            self.stdout.write(json.dumps(body, indent=2, default=str))
            return
        self.stdout.write(
            f"audit #{audit.pk}: {audit.source_label}, {audit.model_name} (SHA-256 {audit.model_sha256})"
        )
        self.stdout.write(f"AfLite parameters: {run.summary.get('params')}")
        self.stdout.write(f"kept {len(kept)} of {len(run.keys)} (stopped: {run.summary.get('stopped')})")
        for it in run.summary.get("iterations") or []:
            self.stdout.write("  " + ", ".join(f"{k} {v}" for k, v in it.items()))
        for label, acc in (("all items", all_items), ("kept items", kept_items)):
            if acc:
                self.stdout.write(
                    f"{audit.model_name} on {label}: {acc['accuracy']:.4f} "
                    f"[{acc['ci_low']:.4f}, {acc['ci_high']:.4f}] ({acc['correct']}/{acc['n']})"
                )
        if release is not None:
            self.stdout.write(f"release {release.name}@{release.version} (draft): {release.item_count} items")
