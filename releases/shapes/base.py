"""What a release of one data set is made of (one ReleaseShape per data set, registered in
releases.shapes): the items a selection names, their payloads in release order, the
labels they carry, the field that finds the campaigns that judged them, the imported files
they came from, and the section of the dataset card that describes them."""

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from annotation.models import AdversarialRound
from datasets.models import OWN_FORMATS, Schema
from releases.card import CardSection
from releases.dataset import Dataset

CHUNK = 2000
BRACKETED = re.compile(r"^(?P<before>.*?)\[(?P<pronoun>[^\[\]]+)\](?P<after>.*)$", re.S)

#: (key, payload, the database ids of the rows its labels are on: {"schema": 1, ...})
Row = tuple[str, dict[str, Any], dict[str, int]]
Selection = dict[str, Any]


@dataclass(frozen=True)
class ReleaseShape:
    """One data set's release.

    ``queryset(dataset, selection)``: the items; ``rows(dataset, selection)``: (key, payload,
    label row ids) in release order; ``labels``: label name -> the row it is on ("schema",
    "reason", "comve_item"); ``label_rows(dataset, selection, target)``: the ids of the
    selection's rows of a label's target; ``source_fields``: the (file, checksum) fields of
    the imported files the items came from; ``agreement_field``: the campaign lookup that
    finds the campaigns that judged these items; ``card``: its section of the dataset card.
    """

    dataset: Dataset
    queryset: Callable[[str, Selection], QuerySet[Any]]
    rows: Callable[[str, Selection], Iterator[Row]]
    labels: dict[str, str]
    label_rows: Callable[[str, Selection, str], Any]
    source_fields: tuple[tuple[str, str], ...]
    agreement_field: str
    card: CardSection


def switched_parts(text: str) -> tuple[str, str, str, str]:
    """(sentence, text before, pronoun, text after) of a switched sentence.

    The importer keeps the pronoun in [brackets] as the Trichelair file has it; the
    release gives the plain sentence and its three parts. Without brackets the parts are "".
    """
    match = BRACKETED.match(text or "")
    if match is None:
        return (text or "").strip(), "", "", ""
    before, pronoun, after = match["before"], match["pronoun"], match["after"]
    return (before + pronoun + after).strip(), before.strip(), pronoun.strip(), after.strip()


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def bool_or_none(value: Any) -> bool | None:
    return None if value is None else bool(value)


def own_collections() -> Any:
    """The collections a curator's own schemas were imported into, or written into in
    adversarial rounds (values of ``collection``)."""
    written = AdversarialRound.objects.values("pipeline__collection")
    return Schema.objects.filter(Q(import_batch__format__in=OWN_FORMATS) | Q(collection__in=written)).values(
        "collection"
    )
