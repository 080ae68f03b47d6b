"""The "new pipeline" form (input parsing only; the rules live in the services)."""

from typing import Any

from django import forms

from annotation.models import PipelineKind
from annotation.pipelines.registry import PIPELINES


def k_field_name(kind: str, key: str) -> str:
    return f"k_{kind}_{key}"


#: The kinds this form starts (a round of adversarial writing is started on the rounds page).
FORM_KINDS = [(value, label) for value, label in PipelineKind.choices if not PIPELINES[value].is_round]


class PipelineCreateForm(forms.Form):
    kind = forms.ChoiceField(choices=FORM_KINDS, initial=PipelineKind.WINOWHY)
    collection = forms.CharField(
        max_length=50,
        help_text="WinoWhy: the collection your schemas were imported into; ComVE: where the written items go",
    )
    name = forms.SlugField(max_length=60, required=False, help_text="blank: collection-kind")
    slots = forms.IntegerField(required=False, min_value=1, max_value=1000, help_text="ComVE: items to write")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for defn in PIPELINES.values():
            if defn.is_round:
                continue
            for stage in defn.stages:
                if stage.task is None:
                    continue
                self.fields[k_field_name(defn.kind, stage.key)] = forms.IntegerField(
                    label=f"K of {stage.title.lower()}",
                    required=False,
                    min_value=1,
                    max_value=100,
                    initial=stage.default_k,
                    help_text=f"the paper's: {stage.default_k}"
                    + (f", at least {stage.min_k}" if (stage.min_k or 1) > 1 else ""),
                )

    def k_fields(self, kind: str) -> list[forms.BoundField]:
        return [self[k_field_name(kind, s.key)] for s in PIPELINES[kind].stages if s.task is not None]

    def service_kwargs(self) -> dict[str, Any]:
        d = self.cleaned_data
        kind = d["kind"]
        k = {
            s.key: d.get(k_field_name(kind, s.key))
            for s in PIPELINES[kind].stages
            if s.task is not None and d.get(k_field_name(kind, s.key)) is not None
        }
        return {
            "kind": kind,
            "collection": d["collection"],
            "name": d["name"] or "",
            "k": k,
            "slots": d["slots"] or 0,
        }
