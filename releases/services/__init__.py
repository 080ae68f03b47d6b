"""Release writes: create (freeze items), build files, approve, publish, export.

Split by sub-domain: the build of the files in ``releases.services.build``, what every write
shares (curator check, folder, frozen facts) in ``releases.services.common``; this module
holds creation, the lifecycle steps and the export, and re-exports the others' names.

Every function owns its transaction and raises a domain error from errors.py. ``user``
None means the system (a management command run without ``--user``): whoever runs
commands on the server already holds the database.
"""

import json
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify

from annotation.agreement import services as agreement_services
from annotation.models import Campaign
from core.roles import Actor, account_of, user_is_curator
from datasets.models import ComVESplit
from datasets.services import COLLECTION_CARD_FIELDS, collection_describe
from releases import snapshot
from releases.bundle import bundle_name, write_bundle
from releases.diff import first_version_diff, items_text_diff, release_items_diff, shown_keys
from releases.errors import (
    ReleaseError,
    ReleaseImmutableError,
    ReleaseIntegrityError,
    ReleasePermissionError,
    ReleaseStateError,
    ReleaseValidationError,
)
from releases.exports import BuiltFile, build_release_folder, file_sha256, payload_digest, verify_folder
from releases.models import BuildStatus, Release, ReleaseDataset, ReleaseFile, ReleaseItem, ReleaseStatus
from releases.selectors import (
    DIFF_SHOWN,
    release_entries,
    release_file_verified_path,
    release_item_payloads,
    release_previous,
)
from releases.semver import parse_version
from releases.services.build import (
    RELEASE_BUILD_JOB,
    _freeze_on_disk,
    _queue_build_on_commit,
    release_build,
    release_build_enqueue,
    release_build_temp_clean,
    release_diff_compute,
    release_payloads,
)
from releases.services.common import BATCH, release_folder, release_meta, require_curator
from releases.shapes import adversarial as adversarial_shape
from releases.shapes import shape_for

logger = logging.getLogger(__name__)


def _previous_release(release: Release) -> Release | None:
    key = (release.version_major, release.version_minor, release.version_patch)
    return release_previous(name=release.name, key=key, exclude_pk=release.pk)


#: The same lookups through a written item (issue 27): a validation campaign's items are the
#: adversarial items, whose rows are the schemas (both twins) or the ComVE item released.
ADVERSARIAL_AGREEMENT_FIELDS = {
    "items__schema_id__in": ("items__adversarial__schema_id__in", "items__adversarial__twin_id__in"),
    "items__comve_item_id__in": ("items__adversarial__comve_item_id__in",),
}


def _agreement_summary(dataset: str, selection: dict[str, Any]) -> dict[str, Any]:
    """Agreement figures of the campaigns that judged these items (directly, or as the
    written items a validation campaign judged)."""
    items = snapshot.item_queryset(dataset, selection).values("id")
    field = shape_for(dataset).agreement_field
    judged = Q(**{field: items})
    for through in ADVERSARIAL_AGREEMENT_FIELDS.get(field, ()):
        judged |= Q(**{through: items})
    campaigns: dict[str, Any] = {}
    for campaign in Campaign.objects.filter(judged).distinct().order_by("name"):
        summary = agreement_services.campaign_agreement_summary(campaign=campaign)
        campaigns[campaign.name] = condense_agreement(_json_safe(summary))
    note = "" if campaigns else "no campaign has judged these items"
    return {"campaigns": campaigns, "note": note}


FIGURE_KEYS = ("value", "ci_low", "ci_high", "undefined")
SUMMARY_KEYS = (
    "task",
    "task_label",
    "imported",
    "items",
    "items_judged",
    "judgments",
    "annotators",
    "applicable",
)


def condense_agreement(summary: Any) -> Any:
    """The headline figures of a campaign summary (no per-annotator rows: no identities)."""
    if not isinstance(summary, dict):
        return summary
    out: dict[str, Any] = {k: summary[k] for k in SUMMARY_KEYS if k in summary}
    if summary.get("not_applicable"):
        out["not_applicable"] = summary["not_applicable"]
    figures = {}
    for name, figure in (summary.get("figures") or {}).items():
        if isinstance(figure, dict):
            figures[name] = {k: figure.get(k) for k in FIGURE_KEYS if k in figure}
        else:
            figures[name] = figure
    out["figures"] = figures
    if summary.get("notes"):
        out["notes"] = list(summary["notes"])
    return out


def _json_safe(value: Any) -> Any:

    return json.loads(json.dumps(value, default=str, sort_keys=True))


@dataclass(frozen=True)
class ReleaseRequest:
    """What a curator asked to release, checked: the items it will freeze come from
    ``dataset`` narrowed by ``selection``."""

    name: str
    dataset: str
    version: str
    key: tuple[int, int, int]
    split: str
    selection: dict[str, Any]


@dataclass(frozen=True)
class ReleasePreview:
    """What release_create would write, computed without writing anything."""

    request: ReleaseRequest
    item_count: int
    previous_version: str
    diff: dict[str, Any]
    items: dict[str, Any] | None  # releases.diff.items_text_diff: the shown items' text

    @property
    def dataset_label(self) -> str:
        return str(ReleaseDataset(self.request.dataset).label)


def _release_request(
    *,
    name: str,
    dataset: str,
    version: str,
    split: str,
    collection: str,
    label_sources: dict[str, str] | None = None,
    adversarial: dict[str, Any] | None = None,
) -> ReleaseRequest:
    """The checked request, or ReleaseValidationError naming the input at fault."""
    if not name or slugify(name) != name:
        raise ReleaseValidationError(
            f"name {name!r} must be a slug: lowercase letters, digits and hyphens", field="name"
        )
    if dataset not in ReleaseDataset.values:
        raise ReleaseValidationError(
            f"unknown data set {dataset!r}; choose one of {', '.join(ReleaseDataset.values)}", field="dataset"
        )
    key = parse_version(version)
    selection: dict[str, Any] = {}
    if dataset in (ReleaseDataset.COMVE, ReleaseDataset.SENMAKING):
        split = split or ("pilot" if dataset == ReleaseDataset.SENMAKING else "")
        if split not in ComVESplit.values:
            raise ReleaseValidationError(
                f"data set {dataset} needs a split, one of {', '.join(ComVESplit.values)} (got {split!r})",
                field="split",
            )
        selection["split"] = split
    elif split:
        raise ReleaseValidationError(
            f"a split applies to comve and senmaking, not to {dataset}: leave it empty", field="split"
        )
    if collection:
        selection["collection"] = collection
    if adversarial is not None:  # ANLI's splits from the validated items only
        if dataset not in (ReleaseDataset.WSC, ReleaseDataset.COMVE):
            raise ReleaseValidationError(
                f"the adversarial option applies to wsc and comve releases, not to {dataset}",
                field="adversarial",
            )
        selection["adversarial"] = adversarial_shape.option_check(
            collection=collection, comve=dataset == ReleaseDataset.COMVE, option=adversarial
        )
    choice = {k: v for k, v in (label_sources or {}).items() if v}
    if choice:
        selection["label_sources"] = dict(sorted(choice.items()))
    _check_label_sources(dataset, selection)
    return ReleaseRequest(
        name=name, dataset=dataset, version=version, key=key, split=split, selection=selection
    )


def _check_label_sources(dataset: str, selection: dict[str, Any]) -> None:
    """Each chosen source labels items of the selection; where an import and a campaign
    give items different labels, the curator has chosen which one the release takes."""
    labels = snapshot.LabelChoice(dataset, selection)
    options = labels.options()
    for name, source in (selection.get("label_sources") or {}).items():
        if name not in labels.names:
            raise ReleaseValidationError(
                f"label {name!r} is not a label of {dataset} items ({', '.join(labels.names) or 'none'})",
                field="label_sources",
            )
        offered = [o.value for o in options.get(name, [])]
        if source not in offered:
            raise ReleaseValidationError(
                f"label {name}: {source!r} labels none of these items; choose one of "
                + (", ".join(offered) or "no source (none labels them)"),
                field=f"label_{name}",
            )
    for name, items in labels.conflicts().items():
        campaigns = [o.value for o in options[name] if o.value != snapshot.IMPORT_CHOICE]
        raise ReleaseValidationError(
            f"label {name}: {items} items have an imported label and a different one from "
            f"{', '.join(campaigns)}; choose which source the release takes "
            f"(import, or {' or '.join(campaigns)})",
            field=f"label_{name}",
        )


def label_source_options(
    *, dataset: str, split: str = "", collection: str = ""
) -> tuple[dict[str, list[snapshot.LabelSourceOption]], dict[str, int]]:
    """For the release form: per label, the sources that label the selection's items, and
    per label the items on which an import and a campaign disagree (a choice is needed)."""
    selection: dict[str, Any] = {"collection": collection} if collection else {}
    if split:
        selection["split"] = split
    labels = snapshot.LabelChoice(dataset, selection)
    return labels.options(), labels.conflicts()


def _refuse_taken(request: ReleaseRequest) -> None:
    name, version = request.name, request.version
    if Release.objects.filter(name=name, version=version).exists():
        raise ReleaseValidationError(
            f"release {name} {version} exists already; pick a new version", field="version"
        )
    other = Release.objects.filter(name=name).exclude(dataset=request.dataset)
    for existing in other.values_list("dataset", flat=True)[:1]:
        raise ReleaseValidationError(
            f"release {name} is a {existing} release, not {request.dataset}: pick another name", field="name"
        )


def _nothing_to_release(request: ReleaseRequest) -> ReleaseValidationError:
    where = ", ".join(f"{k} {v!r}" for k, v in request.selection.items()) or "the data set"
    return ReleaseValidationError(
        f"no {request.dataset} items in {where}: nothing to release",
        field="collection" if "collection" in request.selection else "dataset",
    )


def release_create_preview(
    *,
    name: str,
    dataset: str,
    version: str,
    split: str = "",
    collection: str = "",
    label_sources: dict[str, str] | None = None,
    adversarial: dict[str, Any] | None = None,
    user: Actor | None = None,
) -> ReleasePreview:
    """The counts and the diff against the previous version that ``release_create`` with
    the same arguments would freeze now; writes nothing. Refuses what release_create refuses."""
    require_curator(user, "create")
    request = _release_request(
        name=name,
        dataset=dataset,
        version=version,
        split=split,
        collection=collection,
        label_sources=label_sources,
        adversarial=adversarial,
    )
    _refuse_taken(request)
    previous = release_previous(name=name, key=request.key)
    new = (
        (key, payload_digest(payload), payload, sources)
        for key, payload, sources in snapshot.item_records(request.dataset, request.selection)
    )
    if previous is None:
        diff = first_version_diff(sum(1 for _ in new))
    else:
        diff = release_items_diff(
            dataset=dataset, previous_version=previous.version, old=release_entries(previous), new=new
        )
    counts = diff["counts"]
    count = counts["added"] + counts["changed"] + counts["unchanged"]
    if count == 0:
        raise _nothing_to_release(request)
    items = None
    if previous is not None:  # the shown items' text: their payloads read again, a page's worth
        added, removed, changed = shown_keys(diff, DIFF_SHOWN)
        wanted = set(added + changed)
        after = {k: p for k, p in snapshot.item_payloads(request.dataset, request.selection) if k in wanted}
        before = release_item_payloads(previous, removed + changed)
        items = items_text_diff(dataset=dataset, diff=diff, before=before, after=after, shown=DIFF_SHOWN)
    return ReleasePreview(
        request=request,
        item_count=count,
        previous_version=previous.version if previous else "",
        diff=diff,
        items=items,
    )


def release_create(
    *,
    name: str,
    dataset: str,
    version: str,
    split: str = "",
    collection: str = "",
    changelog: str = "",
    label_sources: dict[str, str] | None = None,
    collection_card: dict[str, str] | None = None,
    user: Actor | None = None,
    filtered: "FilteredFrom | None" = None,
    adversarial: dict[str, Any] | None = None,
) -> Release:
    """A draft release freezing the current items of ``dataset``; its files are built after
    commit. ``label_sources``: per label, the source its items take it from ("import", the
    default, or "campaign:<name>"; ``releases.snapshot.LabelChoice``). ``collection_card``:
    what the curator says of an own collection (title, description, licence, citation; blank
    values keep the collection's), saved on the collection and frozen into the card.
    ``filtered``: a filtered release beside a full one (an audit's AfLite): its removed items
    are left out, its card states the filter and its diff is against the full release,
    naming every removed item. ``adversarial``: {seed, dev, test}: the splits as ANLI built
    them, from the collection's validated adversarial items only (releases.shapes.adversarial);
    a release of an adversarial collection states its protocol in the card either way."""
    require_curator(user, "create")
    request = _release_request(
        name=name,
        dataset=dataset,
        version=version,
        split=split,
        collection=collection,
        label_sources=label_sources,
        adversarial=adversarial,
    )
    major, minor, patch = request.key
    split, selection = request.split, request.selection
    removed: set[str] = set()
    if filtered is not None:
        removed = set(filtered.removed)
        selection = {**selection, "filter": filtered.description}
    with transaction.atomic():
        _refuse_taken(request)
        try:
            with transaction.atomic():
                release = Release.objects.create(
                    name=name,
                    dataset=dataset,
                    split=split,
                    selection=selection,
                    version=version,
                    version_major=major,
                    version_minor=minor,
                    version_patch=patch,
                    changelog=changelog,
                    created_by=account_of(user),
                )
        except IntegrityError as error:  # created at the same moment by someone else
            raise ReleaseValidationError(
                f"release {name} {version} exists already; pick a new version", field="version"
            ) from error
        count = 0
        batch: list[ReleaseItem] = []
        labels = snapshot.LabelChoice(dataset, selection)
        per_label: list[dict[str, str]] = []
        sizes: dict[str, int] = {}
        for key, payload, sources in snapshot.item_records(dataset, selection, labels=labels):
            if key in removed:
                continue
            if "adversarial_split" in payload:
                sizes[payload["adversarial_split"]] = sizes.get(payload["adversarial_split"], 0) + 1
            batch.append(
                ReleaseItem(
                    release=release,
                    position=count,
                    key=key,
                    payload=payload,
                    digest=payload_digest(payload),
                    label_sources=sources,
                )
            )
            per_label.append(sources)
            count += 1
            if len(batch) >= BATCH:
                ReleaseItem.objects.bulk_create(batch)
                batch = []
        if batch:
            ReleaseItem.objects.bulk_create(batch)
        if count == 0:
            raise _nothing_to_release(request)
        previous = _previous_release(release)
        release.item_count = count
        release.previous_version = previous.version if previous else ""
        release.diff = release_diff_compute(release=release, previous=previous)
        if filtered is not None:
            release.diff = _filtered_diff(release, filtered)
        release.sources = snapshot.source_files(dataset, selection)
        release.agreement_summary = _agreement_summary(dataset, selection)
        release.label_sources = labels.summary(per_label)
        release.selection = adversarial_shape.frozen_facts(
            release.selection, comve=dataset == ReleaseDataset.COMVE, sizes=sizes
        )
        own = snapshot.own_collection(dataset, selection)
        if own:
            card = collection_card or {}
            release.collection_card = collection_describe(
                name=own, **{key: card.get(key) for key in COLLECTION_CARD_FIELDS}
            ).card()
        release.build_status = BuildStatus.QUEUED
        release.save()
        _queue_build_on_commit(release.pk)
    return release


@dataclass(frozen=True)
class FilteredFrom:
    """What a filtered release leaves out of the full one, and the filter as its card states it."""

    full: Release
    removed: tuple[str, ...]
    description: dict[str, Any]


def _filtered_diff(release: Release, filtered: FilteredFrom) -> dict[str, Any]:
    full = filtered.full
    diff = release_items_diff(
        dataset=release.dataset,
        previous_version=f"{full.name}@{full.version}",
        old=release_entries(full),
        new=release_entries(release),
    )
    kept = {key for key, *_ in release_entries(release)}
    # every removed item by name (a plain diff lists the first MAX_LISTED)
    diff["removed"] = sorted(k for k, *_ in release_entries(full) if k not in kept)
    diff["against"] = "the full release"
    return diff


def release_changelog_update(*, release: Release, changelog: str, user: Actor | None) -> Release:
    """Only a draft's changelog changes (the card is rebuilt)."""
    require_curator(user, "edit")
    with transaction.atomic():
        locked = Release.objects.select_for_update().get(pk=release.pk)
        if locked.status != ReleaseStatus.DRAFT:
            raise ReleaseImmutableError(
                f"release {locked.ref} is {locked.status}; only a draft's changelog can change"
            )
        locked.changelog = changelog
        locked.build_status = BuildStatus.QUEUED
        locked.save(update_fields=["changelog", "build_status"])
        _queue_build_on_commit(locked.pk, force=True)
    return locked


def _step_refusal(
    *, release: Release, user: Actor | None, action: str, needs: str, wrong_state: str
) -> ReleaseError | None:
    """What any step refuses: a user who is not a curator, a published release, a release
    not in the state ``needs`` (``wrong_state`` says why, after the release's name)."""
    if user is not None and not user_is_curator(user):
        return ReleasePermissionError(f"only curators may {action} a release")
    label = f"{release.name} {release.version}"
    if release.status == ReleaseStatus.PUBLISHED:
        return ReleaseImmutableError(f"{label} is published and can never change")
    if release.status != needs:
        return ReleaseStateError(f"{label} {wrong_state.format(status=release.status)}")
    return None


def release_approve_refusal(*, release: Release, user: Actor | None) -> ReleaseError | None:
    """Why ``user`` may not approve ``release`` now (the error release_approve raises), or
    None when they may. Pages ask it to offer only the actions the state allows."""
    refusal = _step_refusal(
        release=release,
        user=user,
        action="approve",
        needs=ReleaseStatus.DRAFT,
        wrong_state="is {status} already; only a draft can be approved",
    )
    if refusal is not None:
        return refusal
    label = f"{release.name} {release.version}"
    if release.build_status != BuildStatus.DONE:
        return ReleaseStateError(
            f"{label}: its files are {release.get_build_status_display()}; approve once they are built"
        )
    account = account_of(user)
    if (
        settings.WINNOW_RELEASE_SECOND_APPROVER
        and account is not None
        and release.created_by_id is not None
        and release.created_by_id == account.pk
    ):
        return ReleasePermissionError(
            f"{label}: you created this release, and on this server another curator must approve it"
        )
    return None


def release_publish_refusal(*, release: Release, user: Actor | None) -> ReleaseError | None:
    """Why ``user`` may not publish ``release`` now (the error release_publish raises before
    checking the files), or None when they may."""
    refusal = _step_refusal(
        release=release,
        user=user,
        action="publish",
        needs=ReleaseStatus.APPROVED,
        wrong_state="is a {status}; approve it before publishing",
    )
    if refusal is None and (release.build_status != BuildStatus.DONE or not release.manifest):
        return ReleaseStateError(f"{release.name} {release.version}: its files are not built")
    return refusal


def release_approve(*, release: Release, user: Actor | None) -> Release:
    """draft -> approved, by a curator, once the files are built (by another curator than
    its creator when WINNOW_RELEASE_SECOND_APPROVER is on)."""
    with transaction.atomic():
        locked = Release.objects.select_for_update().get(pk=release.pk)
        refusal = release_approve_refusal(release=locked, user=user)
        if refusal is not None:
            raise refusal
        Release.objects.filter(pk=locked.pk, status=ReleaseStatus.DRAFT).update(
            status=ReleaseStatus.APPROVED, approved_by=account_of(user), approved_at=timezone.now()
        )
    locked.refresh_from_db()
    return locked


def release_publish(*, release: Release, user: Actor | None) -> Release:
    """approved -> published, by a curator; the files must match the manifest. Final."""
    with transaction.atomic():
        locked = Release.objects.select_for_update().get(pk=release.pk)
        refusal = release_publish_refusal(release=locked, user=user)
        if refusal is not None:
            raise refusal
        folder = release_folder(locked)
        problems = verify_folder(manifest=locked.manifest, folder=folder)
        if problems:
            raise ReleaseIntegrityError(f"{locked.name} {locked.version}: " + "; ".join(problems))
        _freeze_on_disk(folder)
        folder.chmod(0o555)  # no file can be added, removed or renamed either
        Release.objects.filter(pk=locked.pk, status=ReleaseStatus.APPROVED).update(
            status=ReleaseStatus.PUBLISHED, published_by=account_of(user), published_at=timezone.now()
        )
    locked.refresh_from_db()
    return locked


def release_actions(*, release: Release, user: Actor | None) -> dict[str, ReleaseError | None]:
    """The next step of a release that is not published ("approve" for a draft, "publish"
    once approved) with why ``user`` may not take it (None: they may). Published: {}."""
    if release.status == ReleaseStatus.DRAFT:
        return {"approve": release_approve_refusal(release=release, user=user)}
    if release.status == ReleaseStatus.APPROVED:
        return {"publish": release_publish_refusal(release=release, user=user)}
    return {}


def release_delete(*, release: Release, user: Actor | None) -> None:
    """A draft or approved release can be thrown away by a curator; a published one never."""
    require_curator(user, "delete")
    with transaction.atomic():
        locked = Release.objects.select_for_update().get(pk=release.pk)
        if locked.status == ReleaseStatus.PUBLISHED:
            raise ReleaseImmutableError(f"release {locked.ref} is published and can never be deleted")
        folder = release_folder(locked)
        locked.delete()
    shutil.rmtree(folder, ignore_errors=True)


def release_export(*, release: Release, out_dir: Path, user: Actor | None = None) -> list[BuiltFile]:
    """Write the release's files into ``out_dir`` from its frozen items.

    When the release has been built, the written files must be byte-identical to its
    manifest (ReleaseIntegrityError otherwise): an export is a checked rebuild.
    """
    if not release.is_published:
        require_curator(user, "export an unpublished")
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise ReleaseValidationError(f"{out_dir} is not empty; export into a new or empty folder")
    files = build_release_folder(
        meta=release_meta(release), payloads=release_payloads(release), out_dir=out_dir
    )
    if release.manifest:
        # The manifest lists every file but itself; manifest.json's own hash is on its ReleaseFile row.
        expected = dict(ReleaseFile.objects.filter(release=release).values_list("name", "sha256"))
        expected.update({f["name"]: f["sha256"] for f in release.manifest.get("files", [])})
        differing = sorted(f.name for f in files if expected.get(f.name) != f.sha256)
        if differing:
            raise ReleaseIntegrityError(
                f"export of {release.ref} differs from its manifest in: {', '.join(differing)}"
            )
    return files


def release_bundle(release: Release) -> tuple[Path, str]:
    """The published release as one zip (``releases.bundle``) and its SHA-256, built once.

    Every member is checked against the manifest as it is read (a file that no longer
    matches refuses the whole download with ``ReleaseIntegrityError``); the zip is kept
    under ``MEDIA_ROOT/release-bundles/`` with its checksum beside it, and its bytes are
    checked against that checksum each time it is asked for (rebuilt if they differ)."""
    if release.status != ReleaseStatus.PUBLISHED:
        raise ReleaseStateError(
            f"{release.name} {release.version} is {release.status}: the one-file download is made "
            "once the release is published (until then its files may still be rebuilt)"
        )
    out = Path(settings.MEDIA_ROOT) / "release-bundles" / bundle_name(release.name, release.version)
    sidecar = out.with_name(out.name + ".sha256")
    if out.is_file() and sidecar.is_file():
        recorded = sidecar.read_text(encoding="ascii").strip()
        if file_sha256(out) == recorded:
            return out, recorded
    # The release's file rows are the manifest's files and manifest.json itself, each
    # checked against its recorded SHA-256 as it is read.
    members = [(f.name, release_file_verified_path(release_file=f)) for f in release.files.all()]
    listed = {f["name"] for f in (release.manifest or {}).get("files", [])}
    if not listed <= {name for name, _ in members}:
        raise ReleaseIntegrityError(f"{release.ref}: files of its manifest have no row")
    digest = write_bundle(out, prefix=f"{release.name}-{release.version}", files=members)
    sidecar.write_text(digest + "\n", encoding="ascii")
    return out, digest


__all__ = [
    "BATCH",
    "FIGURE_KEYS",
    "RELEASE_BUILD_JOB",
    "ReleasePreview",
    "ReleaseRequest",
    "SUMMARY_KEYS",
    "condense_agreement",
    "label_source_options",
    "release_actions",
    "release_approve",
    "release_approve_refusal",
    "release_build",
    "release_build_enqueue",
    "release_build_temp_clean",
    "release_bundle",
    "release_changelog_update",
    "release_create",
    "release_create_preview",
    "release_delete",
    "release_diff_compute",
    "release_export",
    "release_folder",
    "release_meta",
    "release_payloads",
    "release_publish",
    "release_publish_refusal",
    "require_curator",
]
