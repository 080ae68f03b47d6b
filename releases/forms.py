"""The curator's release forms: what to release (previewed, then created) and which two
versions to compare. Domain checks stay in the services; these only shape the input."""

from typing import Any, cast

from django import forms

from datasets.models import ComVESplit
from releases.models import Release, ReleaseDataset


class ReleaseCreateForm(forms.Form):
    name = forms.SlugField(
        max_length=100,
        label="Release name",
        help_text="Lowercase letters, digits and hyphens, e.g. wsc273. A new version of an existing "
        "release uses its name.",
        error_messages={"invalid": "Release name: use only lowercase letters, digits and hyphens."},
    )
    dataset = forms.ChoiceField(label="Data set", choices=ReleaseDataset.choices)
    collection = forms.ChoiceField(
        label="Collection",
        required=False,
        help_text="WSC, WinoWhy: only the schemas (and their reasons) of this collection; empty for all "
        "the public ones. ComVE: your own items' collection; empty for the public files.",
    )
    split = forms.ChoiceField(
        label="Split (ComVE, Sen-Making)",
        required=False,
        choices=[("", "–"), *ComVESplit.choices],
        help_text="ComVE needs one; Sen-Making defaults to pilot; leave it empty for WSC and WinoWhy.",
    )
    version = forms.CharField(
        max_length=32,
        label="Version",
        help_text="X.Y.Z: the last number up for a fix, the middle one for new labels or items, "
        "the first for a changed format.",
    )
    collection_title = forms.CharField(
        max_length=200,
        required=False,
        label="Title of your collection",
        help_text="Your own collection only (the public sets come with theirs): the card's title.",
    )
    collection_description = forms.CharField(
        required=False,
        label="Description of your collection",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="What the items are and how they were made.",
    )
    collection_licence = forms.CharField(
        max_length=100,
        required=False,
        label="Licence of your collection",
        help_text="e.g. cc-by-4.0, mit, or the licence's name.",
    )
    collection_citation = forms.CharField(
        required=False,
        label="Citation of your collection",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="BibTeX, or how to cite it. Left empty, the card keeps what the collection was given.",
    )
    adversarial = forms.BooleanField(
        required=False,
        label="Adversarial splits (ANLI)",
        help_text="A collection written with models in the loop: only its validated items, dev and test "
        "only from those that fooled a model, train from every other (docs/adversarial.md).",
    )
    adversarial_seed = forms.IntegerField(
        required=False,
        min_value=0,
        initial=0,
        label="Seed of the splits",
        help_text="The same seed, the same splits.",
    )
    adversarial_dev = forms.IntegerField(
        required=False, min_value=0, initial=0, label="Dev items", help_text="Validated fooling items in dev."
    )
    adversarial_test = forms.IntegerField(
        required=False,
        min_value=0,
        initial=0,
        label="Test items",
        help_text="Validated fooling items in test.",
    )
    changelog = forms.CharField(
        label="Changelog",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What changed and why.",
    )

    def __init__(
        self,
        *args: Any,
        collections: list[str],
        label_options: dict[str, list[Any]] | None = None,
        label_conflicts: dict[str, int] | None = None,
        **kwargs: Any,
    ) -> None:
        """``label_options``: per label, the sources that label the chosen items
        (``releases.services.label_source_options``): one choice field each."""
        super().__init__(*args, **kwargs)
        field = cast(forms.ChoiceField, self.fields["collection"])
        field.choices = [("", "the public sets"), *((c, c) for c in collections)]
        conflicts = label_conflicts or {}
        for name, options in (label_options or {}).items():
            # Where an import and a campaign disagree the release needs a choice: no default
            # is offered then (the service would refuse it).
            choices = [] if name in conflicts else [("", "default")]
            choices += [(o.value, f"{o.title} ({o.items} items)") for o in options if o.items]
            help_text = (
                "Default: the imported label where there is one, else the latest campaign's. "
                "Where a campaign did not label an item, the item keeps its imported label."
            )
            if name in conflicts:
                help_text = (
                    f"{conflicts[name]} items have an imported label and a different one from a "
                    "campaign: choose which the release takes. Where a campaign did not label an "
                    "item, the item keeps its imported label."
                )
            self.fields[f"label_{name}"] = forms.ChoiceField(
                label=f"Source of “{name}”",
                choices=choices,
                required=name in conflicts,
                help_text=help_text,
                error_messages={"required": f"Source of “{name}”: choose which source the release takes."},
            )

    def label_sources(self) -> dict[str, str]:
        """{label: chosen source} from the label source fields."""
        data = self.cleaned_data
        return {
            name.removeprefix("label_"): data[name]
            for name in sorted(self.fields)
            if name.startswith("label_") and data.get(name)
        }

    def collection_card(self) -> dict[str, str]:
        """What the curator says of an own collection: {title, description, licence, citation}."""
        data = self.cleaned_data
        return {
            key: data.get(f"collection_{key}") or ""
            for key in ("title", "description", "licence", "citation")
        }

    def service_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        kwargs: dict[str, Any] = {
            k: data.get(k) or "" for k in ("name", "dataset", "version", "split", "collection")
        }
        kwargs["label_sources"] = self.label_sources()
        if data.get("adversarial"):
            kwargs["adversarial"] = {
                name: data.get(f"adversarial_{name}") or 0 for name in ("seed", "dev", "test")
            }
        return kwargs

    def fingerprint(self) -> str:
        """What a preview showed ("name|dataset|..."): creating needs the fields to match it."""
        kwargs = self.service_kwargs()
        sources = ",".join(f"{k}={v}" for k, v in kwargs.pop("label_sources").items())
        option = kwargs.pop("adversarial", None)
        splits = [",".join(f"{k}={v}" for k, v in option.items())] if option else []
        return "|".join([*kwargs.values(), *([sources] if sources else []), *splits])


class ReleaseCompareForm(forms.Form):
    old = forms.ChoiceField(label="From version")
    new = forms.ChoiceField(label="To version")

    def __init__(self, *args: Any, versions: list[Release], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [(r.version, f"{r.version} ({r.status})") for r in versions]
        for name in ("old", "new"):
            field = cast(forms.ChoiceField, self.fields[name])
            field.choices = choices
            field.error_messages["invalid_choice"] = (
                f"{field.label}: %(value)s is not a version you can see; choose one from the list."
            )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("old") and data.get("old") == data.get("new"):
            self.add_error("new", "To version: choose a version other than the one you compare it with.")
        return data
