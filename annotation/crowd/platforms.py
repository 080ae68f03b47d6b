"""What each crowd platform sends with a participant and expects back (pure: no Django).

One :class:`PlatformSpec` per platform (CONVENTIONS "Variants"): the query parameters its
link carries, which of them is the participant's id, the link a curator pastes there, and
how a finished participant is sent back.

- Prolific appends ``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID`` to the study URL when
  the URL holds the placeholders ``{{%PROLIFIC_PID%}}`` etc. (Prolific's "URL parameters"
  option); a finished participant goes to ``https://app.prolific.com/submissions/complete?cc=CODE``.
- Mechanical Turk loads an ExternalQuestion's URL with ``assignmentId``, ``hitId``,
  ``turkSubmitTo`` and ``workerId`` added; while a worker only previews the HIT,
  ``assignmentId`` is ``ASSIGNMENT_ID_NOT_AVAILABLE`` and there is no ``workerId``. A
  finished assignment is submitted by a form POST to ``<turkSubmitTo>/mturk/externalSubmit``
  with the ``assignmentId``.
- An invitation link carries ``pid`` when the curator hands each person their own id; the
  completion code is shown on the page.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.errors import AnnotationError

MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
MAX_ID = 100


class StudyEntryError(AnnotationError):
    """A study link followed without what its platform must send (a clear page, 400)."""


@dataclass(frozen=True)
class PlatformSpec:
    name: str
    title: str
    #: The query parameter that is the participant's id.
    id_param: str
    #: Other parameters kept with the participant (study, session, assignment, HIT).
    kept_params: tuple[str, ...]
    #: The query string a curator appends to the link ("" for none).
    link_query: str
    #: What the curator reads beside the link: where it goes on the platform.
    where: str

    def external_id(self, params: dict[str, str]) -> str:
        """The participant's id from the link's parameters; StudyEntryError naming the
        parameter when it is missing or not an id."""
        value = (params.get(self.id_param) or "").strip()
        if not value:
            raise StudyEntryError(
                f"this {self.title} link arrived without the participant's id ({self.id_param}): "
                f"open the study from {self.title} again"
            )
        # ASCII only: a look-alike letter (Cyrillic "а" for "a") would make a second participant
        if len(value) > MAX_ID or not all(c.isascii() and (c.isalnum() or c in "-_.") for c in value):
            raise StudyEntryError(f"{self.id_param}: {value[:40]!r} is not a participant id")
        return value

    def kept(self, params: dict[str, str]) -> dict[str, str]:
        return {p: str(params[p])[:200] for p in self.kept_params if params.get(p)}

    def previewing(self, params: dict[str, str]) -> bool:
        """The platform shows the task before anyone accepts it (MTurk's HIT preview)."""
        return False


@dataclass(frozen=True)
class _MTurk(PlatformSpec):
    def previewing(self, params: dict[str, str]) -> bool:
        return params.get("assignmentId") == MTURK_PREVIEW or not params.get("assignmentId")


PLATFORMS: dict[str, PlatformSpec] = {
    spec.name: spec
    for spec in (
        PlatformSpec(
            name="prolific",
            title="Prolific",
            id_param="PROLIFIC_PID",
            kept_params=("STUDY_ID", "SESSION_ID"),
            link_query="PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
            where="Prolific: the study's URL, with 'URL parameters' on",
        ),
        _MTurk(
            name="mturk",
            title="Mechanical Turk",
            id_param="workerId",
            kept_params=("assignmentId", "hitId", "turkSubmitTo"),
            link_query="",
            where="Mechanical Turk: the ExternalURL of an ExternalQuestion HIT (MTurk adds the worker's ids)",
        ),
        PlatformSpec(
            name="link",
            title="invitation link",
            id_param="pid",
            kept_params=(),
            link_query="pid=PARTICIPANT",
            where="Send each person the link with PARTICIPANT replaced by their own id",
        ),
    )
}


def platform_spec(name: str) -> PlatformSpec:
    try:
        return PLATFORMS[name]
    except KeyError:
        raise StudyEntryError(f"platform: {name!r} is not one of {', '.join(PLATFORMS)}") from None


def mturk_submit_url(turk_submit_to: str) -> str:
    """Where a finished MTurk assignment is posted (only MTurk's own hosts)."""
    base = turk_submit_to.rstrip("/")
    if base not in ("https://www.mturk.com", "https://workersandbox.mturk.com"):
        base = "https://www.mturk.com"
    return base + "/mturk/externalSubmit"


def prolific_completion_url(code: str) -> str:
    return f"https://app.prolific.com/submissions/complete?cc={code}"
