"""Evaluation runs (DESIGN section 8). Filled in by the evaluation issue."""


# --- Cloze ---
# The cloze-test analysis (Qasemi et al.; DESIGN section 8), kept apart from the
# evaluation runs above so that the two parts of this file merge cleanly.

from django.conf import settings as _settings  # noqa: E402
from django.db import models as _models  # noqa: E402


class ClozeRunStatus(_models.TextChoices):
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class ClozeRun(_models.Model):
    """One cloze analysis of a model on a release (or ComVE folder): settings, results, files."""

    release = _models.CharField(max_length=255, help_text="NAME@VERSION, or the folder/file that was read")
    model_path = _models.CharField(max_length=1000)
    model_kind = _models.CharField(max_length=20, blank=True, help_text="masked or causal")
    method = _models.CharField(max_length=255, blank=True, help_text="How replacements were proposed")
    embeddings = _models.CharField(max_length=1000, blank=True, help_text="Word vectors used")
    settings = _models.JSONField(default=dict, blank=True)
    status = _models.CharField(max_length=10, choices=ClozeRunStatus.choices, default=ClozeRunStatus.RUNNING)
    out_dir = _models.CharField(max_length=1000, help_text="Folder with results.json and the JSONL files")
    results = _models.JSONField(default=dict, blank=True, help_text="results.json as written")
    error = _models.TextField(blank=True)
    seconds = _models.FloatField(null=True, blank=True)
    created_by = _models.ForeignKey(
        _settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=_models.SET_NULL, related_name="+"
    )
    created_at = _models.DateTimeField(auto_now_add=True)
    finished_at = _models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"cloze #{self.pk} {self.model_path} on {self.release}"
