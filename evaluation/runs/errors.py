"""The errors of a run's creation and execution, and the one place that names an upload
or a registry model as the user knows it, never by its path on the server."""

from pathlib import Path

from core.errors import WinnowError


class EvaluationError(WinnowError):
    """A run that cannot be created or executed; the message says why, and ``field`` names
    the form field it is about (release, model, predictions, ...) where there is one."""

    status = 400

    def __init__(self, message: str = "", *, field: str | None = None, status: int | None = None) -> None:
        super().__init__(message, status=status)
        self.field = field


class PredictionsRefused(EvaluationError):
    """An uploaded predictions file the run could not use; the message names it by its own name."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message, field="predictions")


def public_message(message: str, names: dict[Path, str]) -> str:
    """The message with each server path put as the name the user knows it by."""
    for path, name in names.items():
        if name:
            message = message.replace(str(path), name).replace(str(path.resolve()), name)
    return message
