"""Versioned, curator-approved releases (DESIGN section 7).

A published release never changes by any path: save()/delete() refuse, the querysets'
update()/delete()/bulk_*() refuse, and database triggers refuse UPDATE/DELETE underneath
Django. The tables kept the names they had when these models lived in ``datasets``
(``datasets_release``, ``datasets_releaseitem``, ``datasets_releasefile``), so the triggers
of migration ``datasets.0004`` guard them unchanged.
"""

from django.conf import settings
from django.db import models

from core.models import JobLease
from releases.dataset import Dataset
from releases.errors import ReleaseImmutableError


def _release_error(message: str) -> Exception:
    return ReleaseImmutableError(message)


IMMUTABLE_MESSAGE = "release {ref} is published and can never change; a fix is a new version"


class ReleaseDataset(models.TextChoices):
    """The release's data set field's choices: the values of releases.dataset.Dataset."""

    WSC = Dataset.WSC.value, "WSC (Winograd schemas with Trichelair labels)"
    WINOWHY = Dataset.WINOWHY.value, "WinoWhy (reasons)"
    COMVE = Dataset.COMVE.value, "ComVE (SemEval-2020 Task 4)"
    SENMAKING = Dataset.SENMAKING.value, "Sen-Making pilot"


class ReleaseStatus(models.TextChoices):
    DRAFT = "draft", "draft"
    APPROVED = "approved", "approved"
    PUBLISHED = "published", "published"


class BuildStatus(models.TextChoices):
    NONE = "none", "not built"
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class ReleaseQuerySet(models.QuerySet):
    """Bulk writes refuse as soon as one targeted row is a published release."""

    def _refuse_published(self, action: str) -> None:
        published = self.filter(status=ReleaseStatus.PUBLISHED).values_list("name", "version")[:1]
        for name, version in published:
            raise _release_error(IMMUTABLE_MESSAGE.format(ref=f"{name}@{version}") + f" ({action} refused)")

    def update(self, **kwargs):
        self._refuse_published("update")
        return super().update(**kwargs)

    def delete(self):
        self._refuse_published("delete")
        return super().delete()

    def bulk_update(self, objs, fields, batch_size=None):
        self.filter(pk__in=[o.pk for o in objs])._refuse_published("bulk_update")
        return super().bulk_update(objs, fields, batch_size=batch_size)

    def bulk_create(self, objs, *args, **kwargs):
        objs = list(objs)
        if any(o.status == ReleaseStatus.PUBLISHED for o in objs):
            raise _release_error("a release is published only through release_publish")
        return super().bulk_create(objs, *args, **kwargs)

    def published(self) -> "ReleaseQuerySet":
        return self.filter(status=ReleaseStatus.PUBLISHED)


class ReleasePartQuerySet(models.QuerySet):
    """Items and files of a published release: no update, delete or new rows."""

    def _refuse_published(self, action: str) -> None:
        published = self.filter(release__status=ReleaseStatus.PUBLISHED).values_list(
            "release__name", "release__version"
        )[:1]
        for name, version in published:
            raise _release_error(IMMUTABLE_MESSAGE.format(ref=f"{name}@{version}") + f" ({action} refused)")

    def update(self, **kwargs):
        self._refuse_published("update")
        if "release" in kwargs or "release_id" in kwargs:
            target = kwargs.get("release_id", getattr(kwargs.get("release"), "pk", kwargs.get("release")))
            if (
                target is not None
                and Release.objects.filter(pk=target, status=ReleaseStatus.PUBLISHED).exists()
            ):
                raise _release_error("rows cannot be moved into a published release")
        return super().update(**kwargs)

    def delete(self):
        self._refuse_published("delete")
        return super().delete()

    def bulk_update(self, objs, fields, batch_size=None):
        objs = list(objs)
        self.filter(pk__in=[o.pk for o in objs])._refuse_published("bulk_update")
        return super().bulk_update(objs, fields, batch_size=batch_size)

    def bulk_create(self, objs, *args, **kwargs):
        objs = list(objs)
        release_ids = {o.release_id for o in objs}
        if Release.objects.filter(pk__in=release_ids, status=ReleaseStatus.PUBLISHED).exists():
            raise _release_error("a published release gets no new rows (bulk_create refused)")
        return super().bulk_create(objs, *args, **kwargs)


def _refuse_if_published(release_id: int | None, action: str) -> None:
    if release_id is None:
        return
    row = (
        Release.objects.filter(pk=release_id, status=ReleaseStatus.PUBLISHED)
        .values_list("name", "version")
        .first()
    )
    if row is not None:
        raise _release_error(IMMUTABLE_MESSAGE.format(ref=f"{row[0]}@{row[1]}") + f" ({action} refused)")


class Release(JobLease):
    """A named, semantically versioned selection of items: draft -> approved -> published."""

    name = models.SlugField(max_length=100)
    dataset = models.CharField(max_length=20, choices=ReleaseDataset.choices)
    split = models.CharField(max_length=10, blank=True, help_text="ComVE / Sen-Making split")
    selection = models.JSONField(default=dict, blank=True, help_text="How the items were chosen")
    version = models.CharField(max_length=32, help_text="Semantic version X.Y.Z")
    version_major = models.PositiveIntegerField(default=0, editable=False)
    version_minor = models.PositiveIntegerField(default=0, editable=False)
    version_patch = models.PositiveIntegerField(default=0, editable=False)
    status = models.CharField(max_length=10, choices=ReleaseStatus.choices, default=ReleaseStatus.DRAFT)
    changelog = models.TextField(blank=True)
    # Who did each step: PROTECT, so that deleting an account cannot rewrite a release row.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    approved_at = models.DateTimeField(null=True, blank=True)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    published_at = models.DateTimeField(null=True, blank=True)
    previous_version = models.CharField(max_length=32, blank=True, help_text="Version the diff is against")
    diff = models.JSONField(default=dict, blank=True)
    manifest = models.JSONField(default=dict, blank=True)
    sources = models.JSONField(default=list, blank=True, help_text="[{file, sha256}] of the imported files")
    agreement_summary = models.JSONField(default=dict, blank=True)
    label_sources = models.JSONField(
        null=True,
        blank=True,
        help_text="{chosen: {label: source}, counts: {label: {source: items}}, titles: {source: title}}",
    )
    # null (not default=dict): SQLite adds a nullable column in place, while a default
    # would rebuild the table, which its release triggers refuse.
    collection_card = models.JSONField(
        null=True,
        blank=True,
        help_text="An own collection's {name, title, description, licence, citation}, frozen for the card",
    )
    item_count = models.PositiveIntegerField(default=0)
    build_status = models.CharField(max_length=10, choices=BuildStatus.choices, default=BuildStatus.NONE)
    build_progress = models.PositiveSmallIntegerField(default=0, help_text="Percent")
    build_error = models.TextField(blank=True)
    built_at = models.DateTimeField(null=True, blank=True)

    objects = ReleaseQuerySet.as_manager()

    class Meta:
        db_table = "datasets_release"
        ordering = ["name", "-version_major", "-version_minor", "-version_patch"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="release_unique_version"),
        ]
        indexes = [models.Index(fields=["status"])]

    def __str__(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def own_collection(self) -> str:
        """The own collection the release holds (its name), or "" for a public set's."""
        return (self.collection_card or {}).get("name") or ""

    @property
    def data_title(self) -> str:
        """What the pages call the release's data: an own collection's title (else its name),
        a public set's label (an own Winograd collection is not WSC273)."""
        if self.own_collection:
            return (self.collection_card or {}).get("title") or self.own_collection
        return self.get_dataset_display()

    @property
    def data_note(self) -> str:
        """Beside :attr:`data_title`: "own collection <name>" ("own collection" when the
        title is the name), or "" for a public set's release."""
        if not self.own_collection:
            return ""
        title = (self.collection_card or {}).get("title")
        return f"own collection {self.own_collection}" if title else "own collection"

    def save(self, *args, **kwargs):
        if self.status == ReleaseStatus.PUBLISHED and self._state.adding:
            raise _release_error("a release is published only through release_publish")
        if not self._state.adding:
            _refuse_if_published(self.pk, "save")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        _refuse_if_published(self.pk, "delete")
        return super().delete(*args, **kwargs)

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def is_published(self) -> bool:
        return self.status == ReleaseStatus.PUBLISHED


class ReleasePart(models.Model):
    """What ReleaseItem and ReleaseFile share: once their release is published, neither
    save()/delete() nor the queryset's update()/delete()/bulk_*() may change them."""

    release_id: int

    objects = ReleasePartQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        _refuse_if_published(self.release_id, "save")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        _refuse_if_published(self.release_id, "delete")
        return super().delete(*args, **kwargs)


class ReleaseItem(ReleasePart):
    """A frozen copy of one item as released: later edits of the item change nothing here."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    key = models.CharField(max_length=100, help_text="Stable item key, e.g. wsc273:12 or wsc273:12.3")
    payload = models.JSONField(help_text="Canonical item record (what the files are built from)")
    digest = models.CharField(max_length=64, help_text="SHA-256 of the canonical payload JSON")
    # Nullable, so that adding it kept SQLite's guard triggers (no table rebuild); null on
    # items frozen before labels kept their sources.
    label_sources = models.JSONField(
        null=True, blank=True, help_text="{label: source name} the item's labels were taken from"
    )

    class Meta:
        db_table = "datasets_releaseitem"
        ordering = ["release_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["release", "position"], name="releaseitem_unique_position"),
            models.UniqueConstraint(fields=["release", "key"], name="releaseitem_unique_key"),
        ]

    def __str__(self) -> str:
        return f"{self.release_id}:{self.key}"


class ReleaseFile(ReleasePart):
    """One built file of a release, under MEDIA_ROOT/releases/NAME/VERSION/."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="files")
    name = models.CharField(max_length=100)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    items = models.PositiveIntegerField(default=0, help_text="Records (lines or CSV rows) in the file")
    path = models.CharField(max_length=500, help_text="Relative to MEDIA_ROOT")

    class Meta:
        db_table = "datasets_releasefile"
        ordering = ["release_id", "name"]
        constraints = [
            models.UniqueConstraint(fields=["release", "name"], name="releasefile_unique_name"),
        ]

    def __str__(self) -> str:
        return f"{self.release_id}:{self.name}"
