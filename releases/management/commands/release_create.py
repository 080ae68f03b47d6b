from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from releases import services
from releases.errors import ReleaseError
from releases.management.commands._release_common import add_user_argument, resolve_user
from releases.models import ReleaseDataset


class Command(BaseCommand):
    help = "Create a draft release freezing the current items of a data set; its files are built by a worker."

    def add_arguments(self, parser: CommandParser) -> None:
        # `--version X.Y.Z` is the release's version here, not Django's version flag.
        for action in list(parser._actions):
            if "--version" in action.option_strings:
                parser._handle_conflict_resolve(action, [("--version", action)])
        parser.add_argument("name", help="Release name (a slug), e.g. wsc273")
        parser.add_argument("--dataset", required=True, choices=ReleaseDataset.values)
        parser.add_argument(
            "--split", default="", help="ComVE / Sen-Making split (train, dev, test, trial, pilot)"
        )
        parser.add_argument("--version", dest="release_version", required=True, help="Semantic version X.Y.Z")
        parser.add_argument("--changelog", default="")
        parser.add_argument(
            "--collection", default="", help="Only schemas (and their reasons) of this collection"
        )
        parser.add_argument(
            "--label-source",
            action="append",
            default=[],
            metavar="LABEL=SOURCE",
            help="Where a label comes from where an import and a campaign both gave it: SOURCE is "
            "import (the default) or campaign:NAME, e.g. --label-source plausibility=campaign:pilot "
            "(repeat for several labels; see the docs page /docs/releases/#label-sources)",
        )
        parser.add_argument(
            "--adversarial",
            action="store_true",
            help="An adversarial collection: only its validated items, in ANLI's splits (dev and test only "
            "from validated fooling items, train from every other; see the docs page /docs/adversarial/#releases)",
        )
        parser.add_argument("--seed", type=int, default=0, help="With --adversarial: the splits' seed")
        parser.add_argument(
            "--dev", type=int, default=0, help="With --adversarial: validated fooling items in dev"
        )
        parser.add_argument(
            "--test", type=int, default=0, help="With --adversarial: validated fooling items in test"
        )
        parser.add_argument(
            "--build-now", action="store_true", help="Build the files in this process, not a worker"
        )
        add_user_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        user = resolve_user(options["user"])
        label_sources: dict[str, str] = {}
        for entry in options["label_source"]:
            label, sep, source = entry.partition("=")
            if not sep or not label or not source:
                raise CommandError(f"--label-source {entry!r}: write LABEL=SOURCE, e.g. plausibility=import")
            label_sources[label.strip()] = source.strip()
        try:
            release = services.release_create(
                name=options["name"],
                dataset=options["dataset"],
                split=options["split"],
                version=options["release_version"],
                changelog=options["changelog"],
                collection=options["collection"],
                label_sources=label_sources,
                adversarial={"seed": options["seed"], "dev": options["dev"], "test": options["test"]}
                if options["adversarial"]
                else None,
                user=user,
            )
            if options["build_now"]:
                release = services.release_build(release_id=release.pk)
        except ReleaseError as error:
            raise CommandError(str(error)) from error
        counts = release.diff.get("counts", {})
        self.stdout.write(
            f"created {release.ref} ({release.dataset}, {release.item_count} items, draft); "
            f"vs {release.previous_version or 'nothing'}: {counts}; files: {release.build_status}"
        )
        sizes = (release.selection.get("adversarial") or {}).get("sizes")
        if sizes:
            self.stdout.write("ANLI splits (rows): " + ", ".join(f"{k} {v}" for k, v in sizes.items()))
