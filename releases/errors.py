"""Domain errors of releases (no Django imports: models, services and views share them).

Each carries the HTTP status a page or API answers with (``core.errors.WinnowError``).
"""

from core.errors import WinnowError


class ReleaseError(WinnowError):
    """Base class: a release operation that cannot be done, with a message for the user."""


class ReleaseImmutableError(ReleaseError):
    """Something tried to change a published release, its items or its files."""

    status = 409


class ReleasePermissionError(ReleaseError):
    """The user may not do this to a release (e.g. approve or publish without being a curator)."""

    status = 403


class ReleaseStateError(ReleaseError):
    """The release is not in the state this step needs (e.g. publishing a draft)."""

    status = 409


class ReleaseValidationError(ReleaseError):
    """Bad input: a malformed version, an unknown data set, a version that exists already.

    ``field`` names the input at fault ("version", "split", ...) so that a form can show
    the message beside it; "" when no single input is."""

    status = 400

    def __init__(self, message: str = "", *, field: str = "", status: int | None = None) -> None:
        super().__init__(message, status=status)
        self.field = field


class ReleaseIntegrityError(ReleaseError):
    """A release file's bytes no longer match the manifest."""

    status = 409
