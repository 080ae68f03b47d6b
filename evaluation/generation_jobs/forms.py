"""The forms that start a generation job: candidate reasons, or a run's explanations judged."""

from typing import Any

from django import forms

from evaluation.generation_jobs.services import (
    DEFAULT_BEAMS,
    DEFAULT_JUDGMENTS,
    DEFAULT_K,
    DEFAULT_MAX_NEW_TOKENS,
    GenerationError,
)
from evaluation.lm.registry import RegistryModel


class _Refusals(forms.Form):
    def add_refusal(self, exc: GenerationError) -> None:
        """The service's refusal beside the field it names ("k: 7 is not ..." -> on k)."""
        message = str(exc)
        field = exc.field if exc.field in self.fields else None
        if field and message.startswith(f"{field}: "):
            message = message[len(field) + 2 :]
        self.add_error(field, f"{message[:1].upper()}{message[1:]}.")


class ReasonsStartForm(_Refusals):
    collection = forms.ChoiceField(
        help_text="The schemas whose questions the model answers with reasons",
        error_messages={"invalid_choice": "Choose a collection of schemas from the list."},
    )
    model = forms.ChoiceField(
        label="Causal model",
        help_text="A causal language model of the server's registry (manage.py models)",
        error_messages={"invalid_choice": "Choose a causal model from the list."},
    )
    k = forms.IntegerField(
        label="Reasons per question (k)", initial=DEFAULT_K, min_value=1, max_value=10, help_text="WinoWhy: 5"
    )
    beams = forms.IntegerField(
        initial=DEFAULT_BEAMS, min_value=1, max_value=20, help_text="Beams of the search; at least k"
    )
    max_new_tokens = forms.IntegerField(
        label="Max new tokens",
        initial=DEFAULT_MAX_NEW_TOKENS,
        min_value=1,
        max_value=100,
        help_text="The longest reason, in tokens",
    )
    seed = forms.IntegerField(
        initial=0,
        min_value=0,
        max_value=2**32 - 1,
        help_text="Recorded and applied (beam search itself draws no random numbers)",
    )
    limit = forms.IntegerField(
        required=False, min_value=1, label="Only the first N questions", help_text="Empty: every question"
    )

    def __init__(
        self, *args: Any, collections: list[str], models: list[RegistryModel], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        collection = self.fields["collection"]
        model = self.fields["model"]
        assert isinstance(collection, forms.ChoiceField) and isinstance(model, forms.ChoiceField)
        collection.choices = [("", "choose a collection"), *((c, c) for c in collections)]
        causal = [m for m in models if m.kind == "causal"]
        model.choices = [("", "choose a model"), *((m.name, m.name) for m in causal)]


class ExplanationsStartForm(_Refusals):
    run = forms.IntegerField(widget=forms.HiddenInput)
    k = forms.IntegerField(
        label="Judgments per explanation (K)",
        initial=DEFAULT_JUDGMENTS,
        min_value=1,
        max_value=25,
        help_text="Plausible when more than half of the K say so",
    )
