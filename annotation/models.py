"""Campaigns, leases, judgments and adjudications (DESIGN section 5)."""

from django.conf import settings
from django.db import models

from datasets.models import ComVEItem, Explanation, Reason, Schema


class Task(models.TextChoices):
    SWITCHABILITY = "switchability", "Switchability (Trichelair et al.)"
    ASSOCIATIVITY = "associativity", "Associativity (Trichelair et al.)"
    REASON_WRITING = "reason_writing", "Reason writing (WinoWhy 2.1)"
    REASON_PLAUSIBILITY = "reason_plausibility", "Reason plausibility (WinoWhy 2.1, 3.3)"
    KNOWLEDGE_TYPE = "knowledge_type", "Knowledge type (WinoWhy 2.2)"
    COMVE_WRITING = "comve_writing", "ComVE writing (ComVE 3.1)"
    COMVE_CHECK = "comve_check", "ComVE check (ComVE 3.1)"
    COMVE_REWRITE = "comve_rewrite", "ComVE rewrite (ComVE 3.1)"
    EXPLANATION_PLAUSIBILITY = "explanation_plausibility", "Explanation plausibility (ComVE subtask C)"
    ADVERSARIAL_WINOGRAD = (
        "adversarial_winograd",
        "Adversarial twin writing (WinoGrande form, models in the loop)",
    )
    ADVERSARIAL_COMVE = "adversarial_comve", "Adversarial ComVE pair writing (models in the loop)"
    ADVERSARIAL_VALIDATION = "adversarial_validation", "Validation of written adversarial items (ANLI)"


class CampaignStatus(models.TextChoices):
    DRAFT = "draft", "draft"
    ACTIVE = "active", "active"
    PAUSED = "paused", "paused"
    CLOSED = "closed", "closed"


class Campaign(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    task = models.CharField(max_length=30, choices=Task.choices)
    status = models.CharField(max_length=10, choices=CampaignStatus.choices, default=CampaignStatus.ACTIVE)
    judgments_per_item = models.PositiveSmallIntegerField(help_text="K: judgments each item needs")
    lease_seconds = models.PositiveIntegerField(default=600)
    gold_rate = models.FloatField(default=0.0, help_text="Share of handed-out items that are gold (0..1)")
    instructions = models.TextField(blank=True)
    selection = models.JSONField(default=dict, blank=True, help_text="How the items were chosen")
    imported = models.BooleanField(default=False, help_text="Votes imported from a published data set")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name


class CampaignItem(models.Model):
    """One unit of work in a campaign: a schema, a reason, a ComVE item, a model's explanation
    of a ComVE item, or a writing slot."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    schema = models.ForeignKey(Schema, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    reason = models.ForeignKey(Reason, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    comve_item = models.ForeignKey(
        ComVEItem, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    explanation = models.ForeignKey(
        Explanation, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    is_gold = models.BooleanField(default=False)
    adversarial = models.ForeignKey(
        "AdversarialItem", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who wrote the item: it is never handed to them (a writer never validates their own item)",
    )
    judgments_needed = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="K for this item, over the campaign's (empty: the campaign's K)"
    )
    gold_answer = models.CharField(max_length=100, blank=True)
    judgment_count = models.PositiveSmallIntegerField(
        default=0, help_text="Submitted judgments (kept in step)"
    )
    needs_review = models.BooleanField(default=False)
    aggregate = models.JSONField(default=dict, blank=True, help_text="Outcome of the last aggregation")

    class Meta:
        ordering = ["campaign_id", "id"]
        indexes = [
            # assignment_next walks this index backwards (fullest items first, then newest):
            # the first row that passes the filters is the answer, no sort needed.
            models.Index(fields=["campaign", "is_gold", "judgment_count", "id"], name="campaignitem_next"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign.name} item #{self.pk}"


class AssignmentStatus(models.TextChoices):
    LEASED = "leased", "leased"
    SUBMITTED = "submitted", "submitted"
    EXPIRED = "expired", "expired"
    SKIPPED = "skipped", "skipped"


class Assignment(models.Model):
    """An item handed to an annotator. One per (item, annotator): never the same item twice,
    so an item the annotator skipped (status ``skipped``) is never handed to them again in
    this campaign, while its lease no longer holds it for others."""

    campaign_item = models.ForeignKey(CampaignItem, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=10, choices=AssignmentStatus.choices, default=AssignmentStatus.LEASED
    )
    leased_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    skipped_at = models.DateTimeField(null=True, blank=True, help_text="When the annotator skipped it")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["campaign_item", "annotator"], name="assignment_once_per_annotator"
            ),
        ]
        indexes = [
            models.Index(fields=["status", "expires_at"]),
            # live leases of one item (assignment_next counts them for every candidate)
            models.Index(fields=["campaign_item", "status", "expires_at"], name="assignment_item_live"),
        ]

    def __str__(self) -> str:
        return f"assignment of item {self.campaign_item_id} to user {self.annotator_id} ({self.status})"


class Judgment(models.Model):
    """One annotator's answer on one item. Never deleted by the app; its annotator may
    change the answer in place while the item is not aggregated, and every change keeps
    the answer it replaced in a :class:`JudgmentRevision`."""

    campaign_item = models.ForeignKey(CampaignItem, on_delete=models.PROTECT, related_name="judgments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    answer = models.CharField(max_length=100, blank=True, help_text="The category chosen")
    text = models.TextField(blank=True, help_text="Free text (reason writing)")
    payload = models.JSONField(default=dict, blank=True, help_text="Structured answer (ComVE writing)")
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    submitted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign_item_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign_item", "annotator"], name="judgment_once_per_annotator"
            ),
        ]

    def __str__(self) -> str:
        return f"judgment #{self.pk} on item {self.campaign_item_id}"


class JudgmentRevision(models.Model):
    """An answer a judgment had before its annotator changed it (who, when, what it was)."""

    judgment = models.ForeignKey(Judgment, on_delete=models.PROTECT, related_name="revisions")
    revised_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    revised_at = models.DateTimeField()
    answer = models.CharField(max_length=100, blank=True, help_text="The answer before the change")
    text = models.TextField(blank=True)
    payload = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["judgment_id", "revised_at", "id"]

    def __str__(self) -> str:
        return f"revision of judgment {self.judgment_id} at {self.revised_at:%Y-%m-%d %H:%M}"


class Adjudication(models.Model):
    """A curator's decision, recorded beside the votes, never over them."""

    campaign_item = models.ForeignKey(CampaignItem, on_delete=models.CASCADE, related_name="adjudications")
    curator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    decision = models.CharField(max_length=100)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"adjudication of item {self.campaign_item_id}: {self.decision}"


class CampaignAnnotator(models.Model):
    """An annotator's standing in a campaign: paused by a curator, gold answers seen."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="annotators")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    paused = models.BooleanField(default=False)
    gold_seen = models.PositiveIntegerField(default=0)
    gold_correct = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "annotator"], name="campaign_annotator_unique"),
        ]

    def __str__(self) -> str:
        return f"user {self.annotator_id} in campaign {self.campaign_id}"


class AgreementHeadline(models.Model):
    """The campaign's headline agreement figure (Fleiss' kappa with its 95% interval) as
    the agreement module last computed it, kept so that the curator dashboard and the
    campaign list can show it for every campaign without computing it again. ``judgments``
    says how many judgments it was computed on: fewer than now means it is out of date."""

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="agreement_headline")
    figure = models.CharField(max_length=40)
    value = models.FloatField(null=True, blank=True)
    ci_low = models.FloatField(null=True, blank=True)
    ci_high = models.FloatField(null=True, blank=True)
    undefined = models.TextField(blank=True, help_text="Why there is no value, if there is none")
    judgments = models.PositiveIntegerField()
    computed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.figure} of {self.campaign_id}: {self.value}"


class PipelineKind(models.TextChoices):
    WINOWHY = "winowhy", "WinoWhy (Zhang et al. 2020, section 2)"
    COMVE = "comve", "ComVE (SemEval-2020 Task 4 proposal, section 3)"
    ADVERSARIAL_WINOGRAD = (
        "adversarial_winograd",
        "Adversarial Winograd twins (models in the loop, ANLI/WinoGrande)",
    )
    ADVERSARIAL_COMVE = "adversarial_comve", "Adversarial ComVE pairs (models in the loop, ANLI)"


class PipelineStatus(models.TextChoices):
    RUNNING = "running", "running"
    DONE = "done", "done"


class StageStatus(models.TextChoices):
    WAITING = "waiting", "waiting"
    ACTIVE = "active", "active"
    DONE = "done", "done"


class Pipeline(models.Model):
    """Chained campaigns started once by a curator (issue 13): each stage's campaign is
    created when the previous stage is aggregated. The stages are defined in
    ``annotation.pipelines.registry``."""

    name = models.SlugField(max_length=60, unique=True)
    kind = models.CharField(max_length=20, choices=PipelineKind.choices)
    collection = models.CharField(max_length=50, help_text="The curator's collection the pipeline works on")
    k = models.JSONField(default=dict, blank=True, help_text="K per stage key")
    slots = models.PositiveIntegerField(default=0, help_text="Writing slots (ComVE)")
    status = models.CharField(max_length=10, choices=PipelineStatus.choices, default=PipelineStatus.RUNNING)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name


class PipelineStage(models.Model):
    """One stage of a pipeline: its campaign (none for the stages that only compute), its
    status and the summary of its outcome once done."""

    pipeline = models.ForeignKey(Pipeline, on_delete=models.CASCADE, related_name="stages")
    position = models.PositiveSmallIntegerField()
    key = models.CharField(max_length=30)
    campaign = models.ForeignKey(
        Campaign, null=True, blank=True, on_delete=models.PROTECT, related_name="pipeline_stages"
    )
    status = models.CharField(max_length=10, choices=StageStatus.choices, default=StageStatus.WAITING)
    outcome = models.JSONField(default=dict, blank=True, help_text="Summary of the stage's outcome")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pipeline_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["pipeline", "position"], name="pipelinestage_unique_position"),
        ]

    def __str__(self) -> str:
        return f"{self.pipeline.name} stage {self.position} ({self.key})"


# --- adversarial writing (issue 27; docs/adversarial.md) ----------------------------------


class ValidationRule(models.TextChoices):
    UNANIMOUS = "unanimous", "K matching answers (default K = 3)"
    ANLI = "anli", "ANLI: 2 answers, a third on disagreement"


class AdversarialRound(models.Model):
    """One round of an adversarial pipeline: the models in the loop while people write.
    Rounds are numbered per collection (1, 2, ...); each is one pipeline (write, validate)."""

    pipeline = models.OneToOneField(Pipeline, on_delete=models.CASCADE, related_name="adversarial_round")
    number = models.PositiveSmallIntegerField(help_text="The round's number in its collection (1, 2, ...)")
    models_in_loop = models.JSONField(
        default=list, help_text="The registry's models that score every try: [{name, sha256}]"
    )
    method = models.CharField(max_length=20, help_text="evaluation.lm.methods.Method value (Winograd)")
    rule = models.CharField(max_length=10, choices=ValidationRule.choices, default=ValidationRule.UNANIMOUS)
    share_unfooled = models.FloatField(
        default=0.0, help_text="Share of kept items that fooled no model sent to validation too (0..1)"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pipeline__collection", "number"]

    def __str__(self) -> str:
        return f"round {self.number} of {self.pipeline.collection}"


class AdversarialStatus(models.TextChoices):
    WRITING = "writing", "being written"
    KEPT = "kept", "kept"
    RETRACTED = "retracted", "retracted"


class Verdict(models.TextChoices):
    """What the models of the round made of an item: fooled on both twins, on one, or not
    at all (a ComVE pair has one question: both or none)."""

    BOTH = "both", "fooled on both twins"
    ONE = "one", "fooled on one twin"
    NONE = "none", "not fooled"


class ValidationStatus(models.TextChoices):
    NOT_SENT = "not_sent", "not sent to validation"
    PENDING = "pending", "waiting for validators"
    VALIDATED = "validated", "validated"
    REJECTED = "rejected", "rejected (validated incorrect)"
    FLAGGED = "flagged", "flagged"


class AdversarialItem(models.Model):
    """An item a writer writes in a round: its tries, what it became (kept or retracted),
    the rows it made (a twin pair of schemas or a ComVE item) and its validation."""

    round = models.ForeignKey(AdversarialRound, on_delete=models.PROTECT, related_name="items")
    writer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    assignment = models.OneToOneField(
        Assignment, null=True, blank=True, on_delete=models.PROTECT, related_name="adversarial_item"
    )
    status = models.CharField(
        max_length=10, choices=AdversarialStatus.choices, default=AdversarialStatus.WRITING
    )
    content = models.JSONField(default=dict, blank=True, help_text="The kept try's content")
    verdict = models.CharField(max_length=5, choices=Verdict.choices, blank=True)
    fooled = models.JSONField(default=list, blank=True, help_text="Names of the round's models it fooled")
    tries = models.PositiveSmallIntegerField(default=0)
    seconds = models.FloatField(null=True, blank=True, help_text="From the first try to keep or retract")
    schema = models.ForeignKey(Schema, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    twin = models.ForeignKey(Schema, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    comve_item = models.ForeignKey(
        ComVEItem, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    validation = models.CharField(
        max_length=10, choices=ValidationStatus.choices, default=ValidationStatus.NOT_SENT
    )
    votes = models.JSONField(
        default=dict, blank=True, help_text="Validation answers by key: {correct: n, ...}"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True, help_text="Kept or retracted at")
    validated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["round_id", "id"]

    def __str__(self) -> str:
        return f"adversarial item #{self.pk} ({self.status})"


class TryStatus(models.TextChoices):
    QUEUED = "queued", "waiting for the models"
    SCORED = "scored", "scored"
    FAILED = "failed", "failed"


class AdversarialTry(models.Model):
    """One submission of an item to the round's models; every try is kept, with its verdicts."""

    item = models.ForeignKey(AdversarialItem, on_delete=models.CASCADE, related_name="try_set")
    number = models.PositiveSmallIntegerField()
    content = models.JSONField(help_text="What the writer submitted")
    status = models.CharField(max_length=10, choices=TryStatus.choices, default=TryStatus.QUEUED)
    verdicts = models.JSONField(
        default=dict,
        blank=True,
        help_text="Per model: its choice, scores and margin on each twin, and its verdict",
    )
    verdict = models.CharField(max_length=5, choices=Verdict.choices, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    scored_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["item_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["item", "number"], name="adversarialtry_unique_number")
        ]

    def __str__(self) -> str:
        return f"try {self.number} of adversarial item {self.item_id} ({self.status})"


class AdversarialScore(models.Model):
    """What a model of a (later) round made of an item written in an earlier round: the
    item is re-scored, not rewritten."""

    item = models.ForeignKey(AdversarialItem, on_delete=models.CASCADE, related_name="scores")
    round = models.ForeignKey(AdversarialRound, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=100)
    sha256 = models.CharField(max_length=64, blank=True)
    method = models.CharField(max_length=20)
    result = models.JSONField(help_text="The model's choice, scores and margin on each twin, and its verdict")
    verdict = models.CharField(max_length=5, choices=Verdict.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id", "round_id", "model"]
        constraints = [
            models.UniqueConstraint(fields=["item", "round", "model"], name="adversarialscore_once"),
        ]

    def __str__(self) -> str:
        return f"{self.model} on adversarial item {self.item_id}: {self.verdict}"


# --- crowd workers (annotation/crowd/) ---------------------------------------------------


class Platform(models.TextChoices):
    PROLIFIC = "prolific", "Prolific"
    MTURK = "mturk", "Amazon Mechanical Turk"
    LINK = "link", "Invitation link"


class StudyLinkStatus(models.TextChoices):
    OPEN = "open", "open"
    CLOSED = "closed", "closed"


class StudyLink(models.Model):
    """A campaign opened to a crowd platform: the link a curator pastes there. Following it
    creates or resumes one participant per external id (annotation.crowd.services)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="study_links")
    platform = models.CharField(max_length=10, choices=Platform.choices)
    status = models.CharField(max_length=10, choices=StudyLinkStatus.choices, default=StudyLinkStatus.OPEN)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="No entry after this time")
    consent = models.TextField(help_text="What a participant agrees to before the instructions")
    completion_code = models.CharField(
        max_length=40, blank=True, help_text="Given at the end (Prolific, link)"
    )
    return_code = models.CharField(
        max_length=40, blank=True, help_text="Given to a participant who does not pass the screening"
    )
    partial_code = models.CharField(
        max_length=40,
        blank=True,
        help_text="Given to a participant who ends before their batch is complete (empty: the return code)",
    )
    screening_items = models.PositiveSmallIntegerField(
        default=0, help_text="Gold items answered before real work (0: no screening)"
    )
    pass_mark = models.FloatField(default=0.8, help_text="Share of screening items to get right (0..1)")
    batch_size = models.PositiveSmallIntegerField(
        default=0, help_text="Items a participant answers before the completion code (0: until none is left)"
    )
    min_seconds = models.FloatField(default=0.0, help_text="Answers faster than this are flagged (0: none)")
    gold_pause_below = models.FloatField(
        default=0.0, help_text="Pause a participant whose gold accuracy falls below this (0: never)"
    )
    gold_pause_after = models.PositiveSmallIntegerField(
        default=3, help_text="Gold answers seen before the pause rule applies"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_platform_display()} link #{self.pk} of {self.campaign_id}"


class ParticipantState(models.TextChoices):
    CONSENT = "consent", "reading the consent"
    SCREENING = "screening", "screening"
    WORKING = "working", "working"
    DONE = "done", "finished"
    ENDED_EARLY = "ended_early", "ended early"
    SCREENED_OUT = "screened_out", "did not pass the screening"


class PaymentDecision(models.TextChoices):
    PENDING = "pending", "pending"
    APPROVE = "approve", "approve"
    REJECT = "reject", "reject"


class Participant(models.Model):
    """One person who came through a study link, under the platform's id. Their account has
    no password: the link (and the session it opens) is the only way in."""

    link = models.ForeignKey(StudyLink, on_delete=models.PROTECT, related_name="participants")
    external_id = models.CharField(
        max_length=100, help_text="Prolific PID, MTurk worker id, or the invitation's id"
    )
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="participant"
    )
    platform_ids = models.JSONField(default=dict, blank=True, help_text="Study, session, assignment, HIT ids")
    secret_hash = models.CharField(
        max_length=64,
        blank=True,
        help_text="SHA-256 of the secret the first entry's browser holds (a signed cookie): "
        "only that browser enters as this participant",
    )
    state = models.CharField(
        max_length=20, choices=ParticipantState.choices, default=ParticipantState.CONSENT
    )
    entries = models.PositiveIntegerField(default=1, help_text="Times the link was followed under this id")
    created_at = models.DateTimeField(auto_now_add=True)
    last_entry_at = models.DateTimeField(auto_now=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    screening_seen = models.PositiveSmallIntegerField(default=0)
    screening_correct = models.PositiveSmallIntegerField(default=0)
    answered = models.PositiveIntegerField(default=0, help_text="Real (not gold) items answered")
    fast_answers = models.PositiveIntegerField(default=0, help_text="Answers faster than the link's minimum")
    decision = models.CharField(
        max_length=10, choices=PaymentDecision.choices, default=PaymentDecision.PENDING
    )
    bonus = models.DecimalField(max_digits=8, decimal_places=2, default=0)
    decision_note = models.CharField(
        max_length=500, blank=True, help_text="The reason a platform shows on rejection"
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["link_id", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["link", "external_id"], name="participant_once_per_link"),
        ]

    def __str__(self) -> str:
        return f"{self.external_id} ({self.link})"
