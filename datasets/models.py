"""Canonical items (DESIGN section 4) with their provenance, and import batches."""

from django.conf import settings
from django.db import models


class ImportFormat(models.TextChoices):
    WINOWHY = "winowhy", "WinoWhy (winowhy.json)"
    TRICHELAIR = "trichelair", "Trichelair switched/associative labels"
    COMVE = "comve", "ComVE (SemEval-2020 Task 4) split folder"
    SENMAKING = "senmaking", "Sen-Making pilot (dataset.jsonl)"
    SCHEMAS = "schemas", "Your own Winograd schemas (JSON Lines or CSV)"
    REASONS = "reasons", "Your own reasons for schemas (JSON Lines or CSV)"
    COMVE_ITEMS = "comve-items", "Your own ComVE items (JSON Lines or CSV)"


#: The formats of a curator's own items: one file each, and always in a named collection.
OWN_FORMATS = (ImportFormat.SCHEMAS, ImportFormat.REASONS, ImportFormat.COMVE_ITEMS)
#: Collections that hold the public sets; a curator's own items go elsewhere.
PUBLIC_COLLECTIONS = ("wsc273",)


class ImportBatch(models.Model):
    """One run of an importer: which files (with SHA-256), who, and what it did."""

    format = models.CharField(max_length=20, choices=ImportFormat.choices)
    files = models.JSONField(default=list, help_text="[{path, name, sha256, size}]")
    options = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "import batches"

    def __str__(self) -> str:
        return f"{self.format} import #{self.pk}"


class Provenance(models.Model):
    """Where an item came from: file, row (1-based, header excluded), batch, file checksum."""

    source_file = models.CharField(max_length=255)
    source_row = models.PositiveIntegerField()
    file_checksum = models.CharField(max_length=64, help_text="SHA-256 of the source file")
    import_batch = models.ForeignKey(
        ImportBatch, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        abstract = True


class Answer(models.TextChoices):
    A = "A", "A"
    B = "B", "B"


class KnowledgeType(models.TextChoices):
    """WinoWhy section 2.2 (cat_ref.json calls Eventuality 'Temporal')."""

    PROPERTY = "Property", "Property"
    OBJECT = "Object", "Object"
    EVENTUALITY = "Eventuality", "Eventuality"
    SPATIAL = "Spatial", "Spatial"
    QUANTITY = "Quantity", "Quantity"
    OTHERS = "Others", "Others"


class Schema(Provenance):
    """A Winograd schema question: text before the pronoun, the pronoun, text after."""

    collection = models.CharField(max_length=50, default="wsc273", db_index=True)
    external_id = models.CharField(max_length=64, help_text="Id in the source (WSC273: 0..272)")
    text_before = models.TextField()
    pronoun = models.CharField(max_length=50)
    text_after = models.TextField()
    candidate_a = models.CharField(max_length=255)
    candidate_b = models.CharField(max_length=255)
    answer = models.CharField(max_length=1, choices=Answer.choices)
    source = models.CharField(max_length=255, blank=True)
    twin = models.OneToOneField("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    switched_text = models.TextField(
        blank=True,
        help_text="Sentence with the candidates exchanged, the pronoun in [brackets] as in the source",
    )
    switchable = models.BooleanField(null=True, blank=True)
    associative = models.BooleanField(null=True, blank=True)
    knowledge_types = models.JSONField(
        default=list, blank=True, help_text="Major knowledge types of the question (sorted list)"
    )

    class Meta:
        ordering = ["collection", "id"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "external_id"], name="schema_unique_external_id"),
        ]
        indexes = [models.Index(fields=["switchable"]), models.Index(fields=["associative"])]

    def __str__(self) -> str:
        return f"{self.collection}:{self.external_id} {self.sentence[:60]}"

    @property
    def sentence(self) -> str:
        return " ".join(p for p in (self.text_before, self.pronoun, self.text_after) if p)

    @property
    def correct_candidate(self) -> str:
        return self.candidate_a if self.answer == Answer.A else self.candidate_b


class ReasonOrigin(models.TextChoices):
    HUMAN = "human", "human"
    REVERSE = "reverse", "reverse (written for the twin)"
    GENERATED = "generated", "generated"


class ReasonLabel(models.TextChoices):
    POSITIVE = "positive", "positive"
    ACCEPTABLE = "acceptable", "acceptable"
    NEGATIVE = "negative", "negative"


class Reason(Provenance):
    """A WinoWhy reason for a schema's answer, with its plausibility votes' outcome."""

    schema = models.ForeignKey(Schema, on_delete=models.CASCADE, related_name="reasons")
    position = models.PositiveSmallIntegerField(help_text="Index among the schema's reasons in the source")
    text = models.TextField()
    origin = models.CharField(max_length=20, choices=ReasonOrigin.choices)
    plausibility = models.FloatField(null=True, blank=True, help_text="Share of plausible votes (0..1)")
    label = models.CharField(max_length=20, choices=ReasonLabel.choices, blank=True)
    source_label = models.CharField(max_length=20, blank=True, help_text="Label as written in the source")
    knowledge_type = models.CharField(max_length=20, choices=KnowledgeType.choices, blank=True)

    class Meta:
        ordering = ["schema_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["schema", "position"], name="reason_unique_position"),
        ]
        indexes = [models.Index(fields=["label"]), models.Index(fields=["origin"])]

    def __str__(self) -> str:
        return f"reason {self.schema.external_id}.{self.position}: {self.text[:60]}"


class ComVEDataset(models.TextChoices):
    COMVE = "comve", "ComVE (SemEval-2020 Task 4)"
    SENMAKING = "senmaking", "Sen-Making pilot"
    DEMO = "demo", "Demo items written for Winnow"


class ComVESplit(models.TextChoices):
    TRAIN = "train", "train"
    DEV = "dev", "dev"
    TEST = "test", "test"
    TRIAL = "trial", "trial"
    PILOT = "pilot", "pilot"


class Option(models.TextChoices):
    A = "A", "A"
    B = "B", "B"
    C = "C", "C"


class ComVEItem(Provenance):
    """Two statements, one against common sense; three explanations; references."""

    dataset = models.CharField(max_length=20, choices=ComVEDataset.choices, default=ComVEDataset.COMVE)
    collection = models.CharField(
        max_length=50,
        blank=True,
        default="",
        db_index=True,
        help_text="Empty for the public files; the name a curator gave their own items",
    )
    split = models.CharField(max_length=10, choices=ComVESplit.choices)
    external_id = models.CharField(max_length=64)
    statement_0 = models.TextField(blank=True)
    statement_1 = models.TextField(blank=True)
    false_index = models.PositiveSmallIntegerField(null=True, blank=True, help_text="0 or 1")
    false_statement = models.TextField(blank=True, help_text="Subtask B/C's FalseSent")
    false_statement_c = models.TextField(
        blank=True,
        help_text="Subtask C's FalseSent where its file differs from subtask B's (else empty)",
    )
    option_a = models.TextField(blank=True)
    option_b = models.TextField(blank=True)
    option_c = models.TextField(blank=True)
    correct_option = models.CharField(max_length=1, choices=Option.choices, blank=True)
    references = models.JSONField(default=list, blank=True, help_text="Up to three reference explanations")
    has_a = models.BooleanField(default=False, help_text="Has subtask A data")
    has_b = models.BooleanField(default=False, help_text="Has subtask B data")
    has_c = models.BooleanField(default=False, help_text="Has subtask C data")
    needs_rewrite = models.BooleanField(default=False)

    class Meta:
        ordering = ["dataset", "split", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "collection", "split", "external_id"], name="comve_unique_external_id"
            ),
        ]
        verbose_name = "ComVE item"

    def __str__(self) -> str:
        where = f"{self.dataset}/{self.collection}" if self.collection else self.dataset
        return f"{where}/{self.split}:{self.external_id}"


# A ComVE item's content as imported (not its key, curation flag or provenance): what the
# importer writes, the API shows and a release snapshot reads, in this order.
COMVE_CONTENT_FIELDS: tuple[str, ...] = (
    "statement_0",
    "statement_1",
    "false_index",
    "false_statement",
    "false_statement_c",
    "option_a",
    "option_b",
    "option_c",
    "correct_option",
    "references",
    "has_a",
    "has_b",
    "has_c",
)
