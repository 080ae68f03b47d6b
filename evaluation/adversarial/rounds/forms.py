"""The "start a round" form (input parsing only; the rules live in the services)."""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.models import ValidationRule
from evaluation.adversarial.rounds.services import METHODS
from evaluation.lm.methods import Method
from evaluation.lm.registry import RegistryModel


class RoundStartForm(forms.Form):
    kind = forms.ChoiceField(choices=[(k.value, k.label) for k in METHODS])
    collection = forms.CharField(
        max_length=50, help_text="where the written items go; its next round is numbered after its last"
    )
    models = forms.MultipleChoiceField(
        choices=[],
        widget=forms.CheckboxSelectMultiple,
        help_text="the models in the loop (this server's registry)",
    )
    method = forms.ChoiceField(
        choices=[("", "the kind's default: partial for twins, full sentence for ComVE pairs")]
        + [(m.value, m.label) for m in Method if m.needs_model],
        required=False,
    )
    rule = forms.ChoiceField(choices=ValidationRule.choices, initial=ValidationRule.UNANIMOUS)
    k = forms.IntegerField(
        required=False, min_value=1, max_value=100, help_text="matching answers (default 3); ANLI's rule: 2"
    )
    share_unfooled = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        initial=0.1,
        help_text="share of kept items that fooled no model sent to validation too",
    )
    slots = forms.IntegerField(min_value=1, max_value=1000, initial=20, help_text="writing slots")

    def __init__(self, *args: Any, registry: list[RegistryModel], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["models"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = [(m.name, m.label) for m in registry]

    def service_kwargs(self) -> dict[str, Any]:
        d = self.cleaned_data
        return {
            "kind": d["kind"],
            "collection": d["collection"],
            "model_names": list(d["models"]),
            "method": d["method"] or "",
            "rule": d["rule"],
            "k": d["k"],
            "share_unfooled": d["share_unfooled"],
            "slots": d["slots"],
        }
