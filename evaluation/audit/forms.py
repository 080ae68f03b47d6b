"""The form that starts an audit: the source, a model of the registry, the folds, seed and
epochs, and AfLite's parameters (one field per field of ``AfliteParams``, its defaults
WinoGrande's settings)."""

from __future__ import annotations

import dataclasses
from typing import Any

from django import forms

from evaluation.audit.aflite import AfliteParams
from evaluation.audit.services import DEFAULT_CHUNK_TEXTS, AuditError
from evaluation.lm.registry import RegistryModel

AFLITE_PREFIX = "aflite_"


#: AfLite's parameters the form offers (its seed is the audit's)
AFLITE_FORM_FIELDS = ("m", "t", "k", "tau", "target_n")
AFLITE_HELP = {
    "m": "partitions (classifiers) per iteration; WinoGrande 64",
    "t": "training items per partition; empty: min(10,000, target size - 1)",
    "k": "items removed per iteration at most; WinoGrande 500",
    "tau": "predictability threshold; WinoGrande 0.75",
    "target_n": "stop at this many items; empty: a quarter of the set",
}


def aflite_fields() -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(AfliteParams) if f.name in AFLITE_FORM_FIELDS]


class AuditStartForm(forms.Form):
    source = forms.ChoiceField(
        help_text="A release's frozen items, or a collection's current ones",
        error_messages={"invalid_choice": "Choose a release or a collection from the list."},
    )
    model = forms.ChoiceField(
        help_text="A model of the server's registry (manage.py models): its frozen features",
        error_messages={"invalid_choice": "Choose a model from the list."},
    )
    folds = forms.IntegerField(
        initial=5, min_value=2, max_value=20, help_text="k of the k-fold cross-validation"
    )
    seed = forms.IntegerField(initial=0, min_value=0, max_value=2**32 - 1)
    epochs = forms.IntegerField(
        initial=6, min_value=2, max_value=100, help_text="Cartography's training epochs"
    )
    repeats = forms.IntegerField(
        initial=5,
        min_value=1,
        max_value=50,
        help_text="Fold draws per baseline (each item: how often it was right)",
    )
    chunk_texts = forms.IntegerField(
        label="Texts per chunk",
        initial=DEFAULT_CHUNK_TEXTS,
        min_value=1,
        max_value=100_000,
        help_text="What one model worker takes at a time",
    )

    def __init__(
        self, *args: Any, sources: list[tuple[str, str]], models: list[RegistryModel], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        source, model = self.fields["source"], self.fields["model"]
        assert isinstance(source, forms.ChoiceField) and isinstance(model, forms.ChoiceField)
        source.choices = [("", "choose a release or a collection"), *sources]
        model.choices = [("", "choose a model"), *((m.name, m.label) for m in models)]
        for f in aflite_fields():
            kind = forms.FloatField if "float" in str(f.type) else forms.IntegerField
            self.fields[AFLITE_PREFIX + f.name] = kind(
                label=f"AfLite {f.name}", initial=f.default, required=False, help_text=AFLITE_HELP[f.name]
            )

    def service_arguments(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        aflite = {
            key[len(AFLITE_PREFIX) :]: data.pop(key)
            for key in list(data)
            if key.startswith(AFLITE_PREFIX) and data[key] is not None
        }
        for key in [k for k in data if k.startswith(AFLITE_PREFIX)]:
            data.pop(key)
        return {**data, "aflite": aflite}

    def add_refusal(self, exc: AuditError) -> None:
        message = str(exc)
        field = exc.field if exc.field in self.fields else None
        if exc.field and exc.field.startswith("aflite.") and AFLITE_PREFIX + exc.field[7:] in self.fields:
            field = AFLITE_PREFIX + exc.field[7:]
        self.add_error(field, message)


class FilteredReleaseForm(forms.Form):
    name = forms.SlugField(help_text="The filtered release's name, e.g. comve-train-aflite")
    version = forms.CharField(initial="1.0.0", max_length=50)
