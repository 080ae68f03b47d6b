"""What a curator reads once a release step is done (pages and the admin alike)."""

from releases.models import BuildStatus, Release


def created_notice(release: Release) -> str:
    built = release.build_status == BuildStatus.DONE
    files = (
        "its files are built: approve it" if built else "its files are being built: approve it once they are"
    )
    return f"Created the draft {release.name} {release.version}: {release.item_count} items frozen; {files}."


def approved_notice(release: Release) -> str:
    return f"Approved {release.name} {release.version}: {release.item_count} items; it can now be published."


def published_notice(release: Release) -> str:
    return f"Published {release.name} {release.version}: {release.item_count} items, files checked."
