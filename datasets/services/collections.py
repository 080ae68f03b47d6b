"""What a curator says of their own collection (title, description, licence, citation),
asked for when the collection is imported and again on the release form; a release card of
the collection prints it instead of any public data set's."""

from __future__ import annotations

from django.db import transaction

from datasets.models import Collection

CARD_FIELDS = ("title", "description", "licence", "citation")


def collection_describe(*, name: str, **facts: str | None) -> Collection:
    """The collection ``name`` with each of ``facts`` (title, description, licence,
    citation) that is given and not blank set; the others keep what they held."""
    unknown = set(facts) - set(CARD_FIELDS)
    if unknown:
        raise TypeError(f"unknown collection fields: {', '.join(sorted(unknown))}")
    with transaction.atomic():
        collection, _ = Collection.objects.select_for_update().get_or_create(name=name)
        changed = [key for key, value in facts.items() if value and value.strip() != getattr(collection, key)]
        for key in changed:
            setattr(collection, key, str(facts[key]).strip())
        if changed:
            collection.save(update_fields=changed)
    return collection
