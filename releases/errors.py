"""Domain errors of releases (no Django imports: models, services and views share them)."""


class ReleaseError(Exception):
    """Base class: a release operation that cannot be done, with a message for the user."""


class ReleaseImmutableError(ReleaseError):
    """Something tried to change a published release, its items or its files."""


class ReleasePermissionError(ReleaseError):
    """The user may not do this to a release (e.g. approve or publish without being a curator)."""


class ReleaseStateError(ReleaseError):
    """The release is not in the state this step needs (e.g. publishing a draft)."""


class ReleaseValidationError(ReleaseError):
    """Bad input: a malformed version, an unknown data set, a version that exists already."""


class ReleaseIntegrityError(ReleaseError):
    """A release file's bytes no longer match the manifest."""
