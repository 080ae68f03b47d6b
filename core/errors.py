"""The one root of Winnow's domain errors (CONVENTIONS.md, "Errors").

A domain error carries the message a user reads and the HTTP status it stands for. Each
app's errors derive from ``WinnowError``; ``core.web`` turns any of them into a page (or
an htmx fragment) and ``core.api`` into an API response, in one place each, so views do
not map errors one ``except`` at a time. No Django here: pure modules may raise these too.
"""

from __future__ import annotations


class WinnowError(Exception):
    """A refusal or failure the user can act on: ``message`` says what and why."""

    #: The HTTP status a view or API answers with when this error reaches it.
    status: int = 400

    def __init__(self, message: str = "", *, status: int | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status

    @property
    def message(self) -> str:
        return str(self)


class NotFound(WinnowError):
    """What was asked for does not exist (or is out of the user's reach)."""

    status = 404


class Forbidden(WinnowError):
    """The user may not do this."""

    status = 403


class Conflict(WinnowError):
    """The request clashes with the current state (a published release, a running job)."""

    status = 409
