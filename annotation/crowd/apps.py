from django.apps import AppConfig


class CrowdConfig(AppConfig):
    """Crowd workers through study links (docs/crowd.md). Its models live in ``annotation``
    (their tables and migrations are annotation's); the feature plugs into the annotate
    flow through ``annotation.participation`` (docs/architecture.md)."""

    name = "annotation.crowd"
    label = "crowd"
    verbose_name = "Crowd workers"

    def ready(self) -> None:
        from annotation.crowd.participation import StudyParticipation
        from annotation.participation import participation_register

        participation_register(StudyParticipation())
