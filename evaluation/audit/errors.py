"""The refusal the audit's functions raise on bad input (no Django, no torch)."""

from core.errors import WinnowError


class AuditInputError(WinnowError, ValueError):
    """The features, labels, groups or a parameter cannot be audited; the message names
    the setting (``t``, ``target_n``, ``folds``...) and what it must be."""
