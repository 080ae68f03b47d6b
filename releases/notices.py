"""What a curator reads once a release step is done (pages and the admin alike)."""

from releases.models import Release


def created_notice(release: Release) -> str:
    return (
        f"Created the draft {release.name} {release.version}: {release.item_count} items frozen; "
        "its files are being built. Approve it once they are."
    )


def approved_notice(release: Release) -> str:
    return f"Approved {release.name} {release.version}: {release.item_count} items; it can now be published."


def published_notice(release: Release) -> str:
    return f"Published {release.name} {release.version}: {release.item_count} items, files checked."
