"""Rows of the data sets for tests: one WSC schema, reason and ComVE pair, each with the
canonical example text (the importers are tested on real files elsewhere)."""

import factory

from datasets.models import ComVEItem, Reason, ReasonOrigin, Schema


class SchemaFactory(factory.django.DjangoModelFactory[Schema]):
    class Meta:
        model = Schema

    collection = "wsc273"
    external_id = factory.Sequence(lambda n: str(n))
    text_before = "The trophy doesn't fit into the suitcase because"
    pronoun = "it"
    text_after = "is too large."
    candidate_a = "the trophy"
    candidate_b = "the suitcase"
    answer = "A"
    source = "test"
    source_file = "test.json"
    source_row = factory.Sequence(lambda n: n + 1)
    file_checksum = "0" * 64


class ReasonFactory(factory.django.DjangoModelFactory[Reason]):
    class Meta:
        model = Reason

    schema = factory.SubFactory(SchemaFactory)
    position = factory.Sequence(lambda n: n)
    text = factory.Sequence(lambda n: f"big things do not fit into smaller things ({n})")
    origin = ReasonOrigin.HUMAN
    source_file = "test.json"
    source_row = factory.Sequence(lambda n: n + 1)
    file_checksum = "0" * 64


class ComVEItemFactory(factory.django.DjangoModelFactory[ComVEItem]):
    class Meta:
        model = ComVEItem

    dataset = "comve"
    split = "test"
    external_id = factory.Sequence(lambda n: str(n))
    statement_0 = "He put a turkey into the fridge."
    statement_1 = "He put an elephant into the fridge."
    false_index = 1
    false_statement = "He put an elephant into the fridge."
    option_a = "An elephant is much bigger than a fridge."
    option_b = "Elephants are usually gray."
    option_c = "An elephant cannot eat a turkey."
    correct_option = "A"
    references = factory.LazyFunction(lambda: ["An elephant is too big for a fridge."])
    has_a = True
    has_b = True
    has_c = True
    source_file = "test.csv"
    source_row = factory.Sequence(lambda n: n + 1)
    file_checksum = "0" * 64
