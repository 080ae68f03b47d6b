"""What every release write shares: the curator check, the release's folder, its frozen facts."""

from pathlib import Path
from typing import Any

from django.conf import settings

from core.roles import Actor, user_is_curator
from releases.errors import ReleasePermissionError
from releases.models import Release

BATCH = 2000


def require_curator(user: Actor | None, action: str) -> None:
    if user is not None and not user_is_curator(user):
        raise ReleasePermissionError(f"only curators may {action} a release")


def release_folder(release: Release) -> Path:
    return Path(settings.MEDIA_ROOT) / "releases" / release.name / release.version


def release_meta(release: Release) -> dict[str, Any]:
    """The frozen facts that go into the card and the manifest (no timestamps)."""
    return {
        "name": release.name,
        "version": release.version,
        "dataset": release.dataset,
        "split": release.split,
        "item_count": release.item_count,
        "changelog": release.changelog,
        "previous_version": release.previous_version or None,
        "diff": release.diff,
        "sources": release.sources,
        "agreement_summary": release.agreement_summary,
        "label_sources": release.label_sources or {},
        "collection_card": release.collection_card or {},
        # a filtered release (an audit's AfLite) states its filter; other releases' meta is unchanged
        **({"filter": release.selection["filter"]} if (release.selection or {}).get("filter") else {}),
        # an adversarial collection's release states its protocol (and its ANLI splits)
        **{
            key: release.selection[key]
            for key in ("adversarial_protocol", "adversarial")
            if (release.selection or {}).get(key)
        },
    }
