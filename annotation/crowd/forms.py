"""The curator's forms of study links and payment decisions, shared by the pages
(annotation.crowd.views) and the API (annotation.crowd.api): one validation, one wording."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django import forms
from django.utils import timezone

from annotation.crowd.services import participant_decide
from annotation.errors import AnnotationError
from annotation.models import Participant, PaymentDecision, Platform
from core.roles import Actor

DEFAULT_CONSENT = (
    "This study is part of building a research data set of commonsense reasoning questions. "
    "Your answers are stored with your platform id (not your name) and published as part of "
    "the data set. You may stop at any time."
)


#: The study link's optional numbers: screening, batch and quality control.
QUALITY_FIELDS = (
    "screening_items",
    "pass_mark",
    "batch_size",
    "min_seconds",
    "gold_pause_below",
    "gold_pause_after",
)

#: The study link's pay as the payment records know it (adversarial writing's bonus).
PAY_FIELDS = ("reward", "fooling_bonus")


def _refusal_on_field(form: forms.Form, error: AnnotationError, field: str) -> None:
    """A service's refusal ("screening items: ...") under the form's field ``field``, as
    the page and the API show it (the words after the colon); above the fields when the
    form has no such field."""
    message = error.message.partition(": ")[2]
    form.add_error(field if field in form.fields else None, message or error.message)


class StudyLinkForm(forms.Form):
    platform = forms.ChoiceField(choices=Platform.choices, label="Platform")
    consent = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        initial=DEFAULT_CONSENT,
        label="Consent",
        help_text="What participants agree to before the instructions: the study, how answers are used, pay, contact.",
    )
    expires_at = forms.DateTimeField(
        required=False,
        label="Expires (UTC)",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="Empty: open until you close it.",
    )
    completion_code = forms.CharField(
        required=False,
        max_length=40,
        label="Completion code",
        help_text="The code the platform expects at the end (Prolific's study settings); empty: one is made.",
    )
    return_code = forms.CharField(
        required=False,
        max_length=40,
        label="Return code",
        help_text="Given to who does not pass the screening (Prolific: a 'screened out' completion code).",
    )
    partial_code = forms.CharField(
        required=False,
        max_length=40,
        label="Partial code",
        help_text="Given to who ends before their batch is complete (Prolific: a partial-completion "
        "code, paid or reviewed as you decide); empty: the return code.",
    )
    screening_items = forms.IntegerField(
        required=False,
        min_value=0,
        initial=0,
        label="Screening items",
        help_text="Gold items answered first (0: no screening).",
    )
    pass_mark = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        initial=0.8,
        label="Pass mark",
        help_text="Share of screening items right.",
    )
    batch_size = forms.IntegerField(
        required=False,
        min_value=0,
        initial=0,
        label="Batch size",
        help_text="Items before the completion code (0: all there are).",
    )
    min_seconds = forms.FloatField(
        required=False,
        min_value=0,
        initial=0,
        label="Flag answers faster than (seconds)",
        help_text="0: flag none.",
    )
    gold_pause_below = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        initial=0,
        label="Pause below gold accuracy",
        help_text="Gold items come at the campaign's gold rate; 0: never pause.",
    )
    gold_pause_after = forms.IntegerField(
        required=False,
        min_value=1,
        initial=3,
        label="after gold answers",
        help_text="Gold answers seen before pausing applies.",
    )
    reward = forms.DecimalField(
        required=False,
        min_value=0,
        max_value=1000,
        decimal_places=2,
        label="Reward per participant",
        help_text="What the platform pays each participant, in its currency (empty: not recorded; "
        "the adversarial figures count it in the cost per validated fooling item).",
    )
    fooling_bonus = forms.DecimalField(
        required=False,
        min_value=0,
        max_value=1000,
        decimal_places=2,
        label="Bonus per validated fooling item",
        help_text="Adversarial writing: paid per item the participant wrote that fooled a model and "
        "that validators confirmed; the payment report adds it to their bonus (empty: none).",
    )

    def service_kwargs(self) -> dict[str, Any]:
        """``study_link_create``'s arguments (but the campaign and the user): an expiry
        without a zone is UTC; a number left empty takes the service's default (defined
        there only)."""
        d = self.cleaned_data
        expires: datetime | None = d["expires_at"]
        if expires is not None and timezone.is_naive(expires):
            expires = timezone.make_aware(expires, UTC)
        return {
            "platform": d["platform"],
            "consent": d["consent"],
            "expires_at": expires,
            "completion_code": d["completion_code"],
            "return_code": d["return_code"],
            "partial_code": d["partial_code"],
            **{f: d[f] for f in QUALITY_FIELDS if d[f] is not None},
            **{f: d[f] for f in PAY_FIELDS if d[f] is not None},
        }

    def add_refusal(self, error: AnnotationError) -> None:
        """The service's refusal under the field it names ("screening items: ..."), as the
        page and the API show it; above the fields when it names none."""
        named = error.message.partition(": ")[0]
        _refusal_on_field(self, error, named.replace(" ", "_").replace("expires", "expires_at"))


class DecisionForm(forms.Form):
    participant = forms.IntegerField()
    decision = forms.ChoiceField(choices=PaymentDecision.choices)
    bonus = forms.DecimalField(required=False, min_value=0, max_value=1000, decimal_places=2)
    note = forms.CharField(required=False, max_length=500)

    def decide(self, *, participant: Participant, user: Actor) -> bool:
        """Record the valid form's decision on ``participant`` (``participant_decide``);
        False with the refusal on the field it names ("note: ...") when refused."""
        try:
            participant_decide(
                participant=participant,
                decision=self.cleaned_data["decision"],
                bonus=self.cleaned_data["bonus"] or 0,
                note=self.cleaned_data["note"],
                user=user,
            )
        except AnnotationError as error:
            _refusal_on_field(self, error, error.message.partition(": ")[0])
            return False
        return True
