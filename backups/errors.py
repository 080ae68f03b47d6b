"""Domain errors of backups (no Django imports)."""

from core.errors import WinnowError


class BackupError(WinnowError):
    """A backup that cannot be written, or an archive that cannot (or may not) be restored."""

    status = 409
