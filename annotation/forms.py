"""Forms of the annotation pages (input parsing only; rules live in services)."""

from typing import Any, cast

from django import forms

from annotation.answers import ITEM_KINDS
from annotation.models import Task
from datasets.models import ReasonLabel, ReasonOrigin

#: the kinds of items in words
ITEM_KIND_WORDS = {
    "schemas": "Winograd schemas",
    "reasons": "WinoWhy reasons",
    "comve": "ComVE items",
    "slots": "empty writing slots (ComVE writing)",
    "explanations": "a model's explanations",
    "adversarial": "items written in an adversarial round (validation)",
}


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


#: a yes / no / not labelled picker of a label filter
_YES_NO = [("", "any"), ("true", "yes"), ("false", "no"), ("none", "not labelled")]


class CampaignCreateForm(forms.Form):
    """The items are chosen with pickers (collection, origin, label, data set and split,
    and how many gold items); the raw ``field=value`` filters and item ids stay under
    "More", for what the pickers do not offer."""

    name = forms.SlugField(max_length=100, help_text="Letters, digits, - and _, e.g. my-switchability.")
    task = forms.ChoiceField(choices=Task.choices)
    items = forms.ChoiceField(
        label="Items",
        choices=[(k, ITEM_KIND_WORDS.get(k, k)) for k in ITEM_KINDS],
        initial="schemas",
    )
    collection = forms.ChoiceField(
        label="Collection", required=False, help_text="Schemas, reasons and ComVE items: which collection."
    )
    origin = forms.ChoiceField(
        label="Reason origin", required=False, choices=[("", "any"), *ReasonOrigin.choices]
    )
    label = forms.ChoiceField(
        label="Reason label", required=False, choices=[("", "any"), *ReasonLabel.choices]
    )
    switchable = forms.ChoiceField(label="Switchable (schemas)", required=False, choices=_YES_NO)
    associative = forms.ChoiceField(label="Associative (schemas)", required=False, choices=_YES_NO)
    comve_set = forms.ChoiceField(label="ComVE data set and split", required=False)
    k = forms.IntegerField(
        label="Judgments per item (K)",
        required=False,
        min_value=1,
        max_value=100,
        help_text="Blank: the paper's default.",
    )
    gold_count = forms.IntegerField(
        label="Gold items",
        required=False,
        min_value=0,
        max_value=1000,
        help_text="How many of the chosen items with a known answer measure the annotators' accuracy "
        "(and can screen crowd workers).",
    )
    gold_rate = forms.FloatField(
        label="Share of gold", initial=0.1, min_value=0, max_value=1, help_text="How often a gold item comes."
    )
    lease_seconds = forms.IntegerField(
        label="Lease (seconds)",
        initial=600,
        min_value=30,
        max_value=7 * 86400,
        help_text="An item handed out returns to the pool after this.",
    )
    slots = forms.IntegerField(
        label="Writing slots", required=False, min_value=1, max_value=10000, help_text="ComVE writing only."
    )
    instructions = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 6}), help_text="Blank: the default instructions."
    )
    filters = forms.CharField(
        label="More filters",
        required=False,
        help_text="Optional, as field=value, e.g. source=WSC, knowledge_type=Spatial.",
    )
    ids = forms.CharField(
        label="Only these item ids",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Optional (the ids the admin shows).",
    )
    gold_ids = forms.CharField(
        label="Gold item ids", required=False, help_text="Optional, instead of the number of gold items."
    )

    #: fields shown under "More" on the page
    ADVANCED = ("filters", "ids", "gold_ids")

    def __init__(
        self,
        *args: Any,
        collections: list[str] | None = None,
        comve_sets: list[tuple[str, str, str]] | None = None,
        **kwargs: Any,
    ) -> None:
        """``collections``: the collections to pick from; ``comve_sets``: (dataset, split,
        collection) of the ComVE items there are."""
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["collection"]).choices = [
            ("", "any"),
            *((c, c) for c in collections or []),
        ]
        cast(forms.ChoiceField, self.fields["comve_set"]).choices = [
            ("", "any"),
            *(("|".join(t), f"{t[0]} {t[1]}" + (f" ({t[2]})" if t[2] else "")) for t in comve_sets or []),
        ]

    def clean_filters(self) -> dict[str, str]:
        return parse_filters(self.cleaned_data.get("filters") or "")

    def clean_ids(self) -> list[int] | None:
        return parse_ids(self.cleaned_data.get("ids") or "", "ids")

    def clean_gold_ids(self) -> list[int] | None:
        return parse_ids(self.cleaned_data.get("gold_ids") or "", "gold ids")

    def picked_filters(self) -> dict[str, str]:
        """The pickers as the service's filters, for the chosen kind of items; a raw filter
        of the same field wins."""
        d = self.cleaned_data
        kind = d.get("items")
        picked: dict[str, str] = {}
        if kind == "schemas":
            picked |= {k: d[k] for k in ("collection", "switchable", "associative") if d.get(k)}
        elif kind == "reasons":
            if d.get("collection"):
                picked["schema__collection"] = d["collection"]
            picked |= {k: d[k] for k in ("origin", "label") if d.get(k)}
        elif kind == "comve" and d.get("comve_set"):
            dataset, split, collection = (d["comve_set"].split("|") + ["", "", ""])[:3]
            picked |= {"dataset": dataset, "split": split, "collection": collection}
        return picked | (d.get("filters") or {})

    def service_kwargs(self) -> dict[str, Any]:
        d = self.cleaned_data
        return {
            "name": d["name"],
            "task": d["task"],
            "items": d["items"],
            "filters": self.picked_filters(),
            "ids": d["ids"],
            "k": d["k"],
            "gold_ids": d["gold_ids"],
            "gold_rate": d["gold_rate"],
            "gold_count": d["gold_count"] or 0,
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


#: A validator's corrected answer (adversarial validation): the right candidate in the
#: sentence and in its twin, or the statement against common sense.
CORRECTION_FIELDS = ("corrected_answer", "corrected_twin_answer", "corrected_false_index")


def answer_from_post(data: Any) -> dict[str, Any]:
    """The answer fields of an annotation POST (HTML form or API) as service kwargs."""
    payload: dict[str, Any] = {}
    if data.get("option"):
        payload["option"] = data.get("option")
    for name in (*COMVE_FIELDS, *CORRECTION_FIELDS):
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
