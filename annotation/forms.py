"""Forms of the annotation pages (input parsing only; rules live in services)."""

from typing import Any

from django import forms

from annotation.answers import ITEM_KINDS
from annotation.models import Task


def parse_filters(text: str) -> dict[str, str]:
    """ "origin=human, label=positive" -> {"origin": "human", "label": "positive"}."""
    out: dict[str, str] = {}
    for part in text.replace("\n", ",").split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise forms.ValidationError(f"filter {part!r}: write field=value")
        key, value = part.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def parse_ids(text: str, field: str) -> list[int] | None:
    text = text.strip()
    if not text:
        return None
    ids = []
    for part in text.replace("\n", ",").replace(" ", ",").split(","):
        if part.strip():
            try:
                ids.append(int(part))
            except ValueError:
                raise forms.ValidationError(f"{field}: {part!r} is not a number") from None
    return ids


class CampaignCreateForm(forms.Form):
    name = forms.SlugField(max_length=100)
    task = forms.ChoiceField(choices=Task.choices)
    items = forms.ChoiceField(choices=[(k, k) for k in ITEM_KINDS], initial="schemas")
    filters = forms.CharField(required=False, help_text="e.g. origin=human, label=positive")
    ids = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text="item ids, optional"
    )
    k = forms.IntegerField(required=False, min_value=1, max_value=100, help_text="blank: the paper's default")
    gold_ids = forms.CharField(required=False, help_text="ids of items with a known answer")
    gold_rate = forms.FloatField(initial=0.1, min_value=0, max_value=1)
    lease_seconds = forms.IntegerField(initial=600, min_value=30, max_value=7 * 86400)
    slots = forms.IntegerField(required=False, min_value=1, max_value=10000, help_text="ComVE writing slots")
    instructions = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 6}), help_text="blank: the default instructions"
    )

    def clean_filters(self) -> dict[str, str]:
        return parse_filters(self.cleaned_data.get("filters") or "")

    def clean_ids(self) -> list[int] | None:
        return parse_ids(self.cleaned_data.get("ids") or "", "ids")

    def clean_gold_ids(self) -> list[int] | None:
        return parse_ids(self.cleaned_data.get("gold_ids") or "", "gold ids")

    def service_kwargs(self) -> dict[str, Any]:
        d = self.cleaned_data
        return {
            "name": d["name"],
            "task": d["task"],
            "items": d["items"],
            "filters": d["filters"],
            "ids": d["ids"],
            "k": d["k"],
            "gold_ids": d["gold_ids"],
            "gold_rate": d["gold_rate"],
            "lease_seconds": d["lease_seconds"],
            "slots": d["slots"] or 0,
            "instructions": d["instructions"] or None,
        }


COMVE_FIELDS = (
    "statement_0",
    "statement_1",
    "false_index",
    "option_a",
    "option_b",
    "option_c",
    "correct_option",
    "reference_1",
    "reference_2",
    "reference_3",
)


def answer_from_post(data: Any) -> dict[str, Any]:
    """The answer fields of an annotation POST (HTML form or API) as service kwargs."""
    payload: dict[str, Any] = {}
    if data.get("option"):
        payload["option"] = data.get("option")
    for name in COMVE_FIELDS:
        if data.get(name) not in (None, ""):
            payload[name] = data.get(name)
    duration = None
    raw = data.get("client_elapsed_ms") or data.get("duration_ms")
    if raw not in (None, ""):
        try:
            duration = int(float(raw))
        except (TypeError, ValueError):
            duration = None
    return {
        "answer": data.get("answer") or "",
        "text": data.get("text") or "",
        "payload": payload,
        "duration_ms": duration,
    }
