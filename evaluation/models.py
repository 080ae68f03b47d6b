"""Evaluation runs (DESIGN section 8).

A run scores one model (or baseline) with one method on one release. Its per-item
predictions live in ``predictions.jsonl`` in the run folder (one line per item and
variant), not in database rows, so that two runs can be compared item by item from
their files; the database keeps the settings, status, progress, metrics and timing.
"""

from pathlib import Path

from django.conf import settings as django_settings
from django.db import models

from core.models import JobLease
from evaluation.lm.methods import Method as ScoringMethod
from releases.dataset import Dataset


class RunStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class DatasetKind(models.TextChoices):
    """A run's data set: the kinds of release files (Sen-Making reads as ComVE)."""

    WSC = Dataset.WSC.value, "WSC (wsc.jsonl)"
    WINOWHY = Dataset.WINOWHY.value, "WinoWhy (winowhy.jsonl)"
    COMVE = Dataset.COMVE.value, "ComVE (comve_a/b/c.jsonl)"


class Method(models.TextChoices):
    """The run's method field's choices: the values and labels of evaluation.lm.methods.Method."""

    FULL = ScoringMethod.FULL.value, ScoringMethod.FULL.label
    PARTIAL = ScoringMethod.PARTIAL.value, ScoringMethod.PARTIAL.label
    PLL = ScoringMethod.PLL.value, ScoringMethod.PLL.label
    RANDOM = ScoringMethod.RANDOM.value, ScoringMethod.RANDOM.label
    MAJORITY = ScoringMethod.MAJORITY.value, ScoringMethod.MAJORITY.label
    FIRST = ScoringMethod.FIRST.value, ScoringMethod.FIRST.label
    PREDICTIONS = ScoringMethod.PREDICTIONS.value, ScoringMethod.PREDICTIONS.label


class RunPhase(models.TextChoices):
    """What a running run is doing, for its page: a model load takes up to half a minute
    before the first item is scored."""

    WAITING = "", "waiting for a worker"
    LOADING = "loading", "loading the model"
    SCORING = "scoring", "scoring"
    WRITING = "writing", "computing the metrics"


#: What a run's progress counts, per data set (one WSC schema counts once, whatever its variants).
PROGRESS_UNITS: dict[str, str] = {Dataset.WSC: "schemas", Dataset.WINOWHY: "reasons", Dataset.COMVE: "items"}


class EvaluationRun(JobLease):
    name = models.CharField(
        max_length=100, blank=True, help_text="A name its researcher gave the run (shown beside its number)"
    )
    # The release: its name and version as strings (always), plus the exported folder the
    # files were read from. The lead adds a nullable FK to datasets.Release at merge time.
    release_name = models.CharField(max_length=100, db_index=True)
    release_version = models.CharField(max_length=50)
    release_path = models.CharField(max_length=500, help_text="Folder of the exported release files")
    release_identity = models.JSONField(default=dict, blank=True, help_text="Manifest / file checksums")
    dataset = models.CharField(max_length=10, choices=DatasetKind.choices)

    method = models.CharField(max_length=12, choices=Method.choices)
    model_name = models.CharField(
        max_length=200, blank=True, help_text="The model's name in the server's registry (web runs)"
    )
    model_path = models.CharField(max_length=500, blank=True, help_text="Local HF folder or GGUF file")
    model_identity = models.JSONField(
        default=dict, blank=True, help_text="sha256 / folder hash, tokenizer, start token used"
    )
    predictions_path = models.CharField(max_length=500, blank=True)
    settings = models.JSONField(default=dict, blank=True, help_text="seed, limit, batch size, ...")

    status = models.CharField(
        max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True
    )
    phase = models.CharField(max_length=10, choices=RunPhase.choices, default=RunPhase.WAITING, blank=True)
    progress_done = models.PositiveIntegerField(default=0, help_text="Items scored (WSC: schemas)")
    progress_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    timing = models.JSONField(default=dict, blank=True)
    results_dir = models.CharField(max_length=500, blank=True)

    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["release_name", "release_version", "dataset"])]

    def __str__(self) -> str:
        return f"run #{self.pk} {self.method} on {self.release_label} ({self.dataset})"

    @property
    def release_label(self) -> str:
        return f"{self.release_name}@{self.release_version}"

    @property
    def model_label(self) -> str:
        """The model's registry name or file name; an upload's file name; a baseline's method."""
        from evaluation.analysis.frames import run_model

        return run_model(
            {
                "model_name": self.model_name,
                "model_path": self.model_path,
                "method": self.method,
                "settings": self.settings,
            }
        )

    @property
    def title(self) -> str:
        """How pages name the run: its number, and its name if it has one."""
        return f"#{self.pk} {self.name}" if self.name else f"#{self.pk}"

    @property
    def progress_unit(self) -> str:
        return PROGRESS_UNITS.get(self.dataset, "items")

    @property
    def progress_percent(self) -> int:
        if not self.progress_total:
            return 100 if self.status == RunStatus.DONE else 0
        return min(100, round(100 * self.progress_done / self.progress_total))

    @property
    def predictions_file(self) -> Path | None:
        return Path(self.results_dir) / "predictions.jsonl" if self.results_dir else None


# --- Cloze ---
# The cloze-test analysis (Qasemi et al.; DESIGN section 8), kept apart from the
# evaluation runs above so that the two parts of this file merge cleanly.

from django.conf import settings as _settings  # noqa: E402
from django.db import models as _models  # noqa: E402


class ClozeRunStatus(_models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class ClozeRun(JobLease):
    """One cloze analysis of a model on a release (or ComVE folder): settings, results, files."""

    release = _models.CharField(max_length=255, help_text="NAME@VERSION, or the folder/file that was read")
    model_name = _models.CharField(
        max_length=200, blank=True, help_text="The model's registry name (web runs)"
    )
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
        return f"cloze #{self.pk} {self.model_label} on {self.release}"

    @property
    def model_label(self) -> str:
        """The registry name of a web run; the file or folder name of a command-line run."""
        return self.model_name or Path(self.model_path).name


# --- Generation jobs ---
# A causal model's text as a job on the models queue (issue 13): candidate reasons for
# Winograd questions, or a finished run's ComVE explanations put before people.

from annotation.models import Campaign as _Campaign  # noqa: E402
from datasets.models import ImportBatch as _ImportBatch  # noqa: E402


class GenerationKind(_models.TextChoices):
    REASONS = "reasons", "candidate reasons (WinoWhy)"
    EXPLANATIONS = "explanations", "a run's explanations to judge (ComVE subtask C)"


class GenerationStatus(_models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class GenerationJob(JobLease):
    """One generation job: what was asked (settings, model), how far it got (progress, in
    questions or explanations), what came out (counts) and what it made (the import batch
    of the reasons, or the plausibility campaign of the explanations)."""

    kind = _models.CharField(max_length=20, choices=GenerationKind.choices)
    status = _models.CharField(
        max_length=10, choices=GenerationStatus.choices, default=GenerationStatus.QUEUED, db_index=True
    )
    collection = _models.CharField(max_length=50, blank=True, help_text="The schemas' collection (reasons)")
    run = _models.ForeignKey(
        EvaluationRun,
        null=True,
        blank=True,
        on_delete=_models.SET_NULL,
        related_name="generation_jobs",
        help_text="The run whose explanations are judged (explanations)",
    )
    model_name = _models.CharField(max_length=200, blank=True, help_text="The model's registry name")
    model_sha256 = _models.CharField(max_length=64, blank=True)
    settings = _models.JSONField(
        default=dict,
        blank=True,
        help_text="k, beams, max new tokens, seed, decoding, prompt; K of a campaign",
    )
    progress_done = _models.PositiveIntegerField(default=0)
    progress_total = _models.PositiveIntegerField(default=0)
    outputs = _models.PositiveIntegerField(default=0, help_text="Texts the model returned")
    empty = _models.PositiveIntegerField(default=0, help_text="Outputs with no word left after tidying")
    duplicates = _models.PositiveIntegerField(
        default=0, help_text="Outputs repeating another or a stored reason"
    )
    stored = _models.PositiveIntegerField(default=0, help_text="Reasons (or campaign items) stored")
    import_batch = _models.ForeignKey(
        _ImportBatch, null=True, blank=True, on_delete=_models.SET_NULL, related_name="+"
    )
    campaign = _models.ForeignKey(
        _Campaign, null=True, blank=True, on_delete=_models.SET_NULL, related_name="+"
    )
    error = _models.TextField(blank=True)
    created_by = _models.ForeignKey(
        _settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=_models.SET_NULL, related_name="+"
    )
    created_at = _models.DateTimeField(auto_now_add=True)
    started_at = _models.DateTimeField(null=True, blank=True)
    finished_at = _models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"generation #{self.pk} ({self.kind})"

    @property
    def progress_unit(self) -> str:
        return "questions" if self.kind == GenerationKind.REASONS else "explanations"

    @property
    def progress_percent(self) -> int:
        if not self.progress_total:
            return 100 if self.status == GenerationStatus.DONE else 0
        return min(100, round(100 * self.progress_done / self.progress_total))

    @property
    def active(self) -> bool:
        return self.status in (GenerationStatus.QUEUED, GenerationStatus.RUNNING)


# --- Artifact audits ---
# Frozen features of a collection's or a release's items from a registry model, computed
# in chunks that any number of model workers share, then partial-input baselines, dataset
# cartography and AfLite over them (evaluation/audit/, DESIGN section 11).

from releases.models import Release as _Release  # noqa: E402


class AuditStatus(_models.TextChoices):
    QUEUED = "queued", "queued"
    FEATURES = "features", "computing features"
    ANALYSING = "analysing", "baselines, cartography and AfLite"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class Audit(JobLease):
    """One audit of a release's (or a collection's) items with one registry model. The
    features are computed by its chunks (:class:`AuditChunk`); the lease on this row is the
    analysis's, taken once the last chunk is done."""

    release = _models.ForeignKey(
        _Release, null=True, blank=True, on_delete=_models.SET_NULL, related_name="audits"
    )
    source_label = _models.CharField(max_length=255, help_text="NAME@VERSION, or dataset/collection[/split]")
    dataset = _models.CharField(max_length=20, help_text="wsc, winowhy, comve or senmaking")
    collection = _models.CharField(max_length=50, blank=True, help_text="The collection audited (no release)")
    split = _models.CharField(max_length=20, blank=True)
    model_name = _models.CharField(max_length=200)
    model_kind = _models.CharField(max_length=10)
    model_sha256 = _models.CharField(max_length=64)
    params = _models.JSONField(default=dict, blank=True, help_text="folds, seed, epochs, AfLite's settings")
    item_keys = _models.JSONField(default=list, blank=True, help_text="The audited items' keys, in order")
    status = _models.CharField(
        max_length=10, choices=AuditStatus.choices, default=AuditStatus.QUEUED, db_index=True
    )
    chunks_total = _models.PositiveIntegerField(default=0)
    texts_total = _models.PositiveIntegerField(default=0)
    texts_done = _models.PositiveIntegerField(default=0)
    texts_cached = _models.PositiveIntegerField(default=0, help_text="Texts found in the feature cache")
    results = _models.JSONField(
        default=dict, blank=True, help_text="Baselines, AfLite and cartography summaries"
    )
    per_item = _models.JSONField(
        default=dict, blank=True, help_text="Per-item columns (key, baselines, map, AfLite)"
    )
    filtered_release = _models.ForeignKey(
        _Release, null=True, blank=True, on_delete=_models.SET_NULL, related_name="filtered_by"
    )
    error = _models.TextField(blank=True)
    created_by = _models.ForeignKey(
        _settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=_models.SET_NULL, related_name="+"
    )
    created_at = _models.DateTimeField(auto_now_add=True)
    features_done_at = _models.DateTimeField(null=True, blank=True)
    finished_at = _models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"audit #{self.pk} {self.model_name} on {self.source_label}"

    @property
    def progress_percent(self) -> int:
        if not self.texts_total:
            return 100 if self.status == AuditStatus.DONE else 0
        return min(100, round(100 * self.texts_done / self.texts_total))

    @property
    def active(self) -> bool:
        return self.status in (AuditStatus.QUEUED, AuditStatus.FEATURES, AuditStatus.ANALYSING)


class ChunkStatus(_models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class AuditChunk(JobLease):
    """A slice of an audit's texts that one model worker computes (under its own lease)."""

    audit = _models.ForeignKey(Audit, on_delete=_models.CASCADE, related_name="chunks")
    index = _models.PositiveIntegerField()
    texts = _models.JSONField(default=list, help_text="The texts whose features this chunk computes")
    status = _models.CharField(max_length=10, choices=ChunkStatus.choices, default=ChunkStatus.QUEUED)
    computed = _models.PositiveIntegerField(default=0, help_text="Texts run through the model")
    cached = _models.PositiveIntegerField(default=0, help_text="Texts found in the cache")
    worker = _models.CharField(max_length=120, blank=True, help_text="host:pid of the worker that did it")
    seconds = _models.FloatField(null=True, blank=True)
    error = _models.TextField(blank=True)

    class Meta:
        ordering = ["audit", "index"]
        constraints = [_models.UniqueConstraint(fields=["audit", "index"], name="auditchunk_unique_index")]

    def __str__(self) -> str:
        return f"chunk {self.index} of audit #{self.audit_id}"


class FeatureVector(_models.Model):
    """The cache of frozen features: one text's mean-pooled last hidden state and its
    log-probability (causal LM; pseudo-log-likelihood for a masked LM) under one model,
    keyed by the model's SHA-256 and the text's, so a second audit recomputes nothing."""

    model_sha256 = _models.CharField(max_length=64)
    text_sha256 = _models.CharField(max_length=64)
    dim = _models.PositiveIntegerField()
    hidden = _models.BinaryField(help_text="float32 little-endian, dim values")
    logprob = _models.FloatField()
    tokens = _models.PositiveIntegerField(help_text="Tokens the log-probability sums over")
    created_at = _models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            _models.UniqueConstraint(fields=["model_sha256", "text_sha256"], name="featurevector_unique_text")
        ]

    def __str__(self) -> str:
        return f"features {self.text_sha256[:12]} of {self.model_sha256[:12]}"
