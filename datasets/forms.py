from __future__ import annotations

from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile

from core.uploads import LimitedUploadForm, upload_name
from datasets.models import ImportFormat

MAX_FILES = {
    "winowhy": 2,
    "trichelair": 2,
    "comve": 6,
    "senmaking": 1,
    "schemas": 1,
    "reasons": 1,
    "comve-items": 1,
}


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    widget = MultipleFileInput

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(d, initial) for d in data]
        return [single(data, initial)]


class ImportUploadForm(LimitedUploadForm):
    # a campaign's batch records rows made from judgments: no file to upload
    format = forms.ChoiceField(choices=[c for c in ImportFormat.choices if c[0] != ImportFormat.CAMPAIGN])
    uploads = MultipleFileField(
        allow_empty_file=True,  # the importer names the empty file in its error
        help_text="winowhy: winowhy.json and, optionally, cat_ref.json; trichelair: WSC_switched_label.json "
        "and WSC_associative_label.json; comve: the data and answer CSVs of one split; senmaking: dataset.jsonl; "
        "your own schemas, reasons or ComVE items: one JSON Lines or CSV file (see the templates).",
    )
    collection = forms.SlugField(
        max_length=50,
        required=False,
        help_text="Your own items: a name of your choice that keeps them apart from the public sets (required). "
        "WinoWhy and Trichelair: the schema collection (empty means wsc273, the real data).",
    )
    collection_title = forms.CharField(
        max_length=200,
        required=False,
        label="Title of your collection",
        help_text="Your own items: the collection's title on the card of its releases.",
    )
    collection_description = forms.CharField(
        required=False,
        label="Description",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="What the items are and how they were made (the card's first section).",
    )
    collection_licence = forms.CharField(
        max_length=100,
        required=False,
        label="Licence",
        help_text="e.g. cc-by-4.0, mit, or the licence's name.",
    )
    collection_citation = forms.CharField(
        required=False,
        label="Citation",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="BibTeX, or how to cite the collection. All four can be changed on the release form.",
    )
    split = forms.ChoiceField(
        choices=[
            ("", "from the file names"),
            ("train", "train"),
            ("dev", "dev"),
            ("test", "test"),
            ("trial", "trial"),
        ],
        required=False,
        help_text="ComVE: when the file names do not tell the split. Your own ComVE items: their split (default test).",
    )

    def collection_card(self) -> dict[str, str]:
        """What the curator said of the collection: {title, description, licence, citation}."""
        data = self.cleaned_data
        return {
            key: data.get(f"collection_{key}") or ""
            for key in ("title", "description", "licence", "citation")
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        files = data.get("uploads") or []
        fmt = data.get("format")
        if fmt and len(files) > MAX_FILES[fmt]:
            self.add_error(
                "uploads", f"{fmt} takes at most {MAX_FILES[fmt]} file(s); {len(files)} were given."
            )
        names = [upload_name(f.name or "") for f in files]
        if any(not n or n in (".", "..") or n.startswith(".") for n in names):
            self.add_error("uploads", "Every file needs a plain name.")
        elif len(set(names)) != len(names):
            self.add_error("uploads", "Two files have the same name.")
        return data
