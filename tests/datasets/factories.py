"""Factories for the datasets items (original test sentences)."""

from __future__ import annotations

import factory

from datasets.models import ComVEItem, Reason, Schema


class SchemaFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Schema

    collection = "tests"
    external_id = factory.Sequence(str)
    text_before = factory.Sequence(lambda n: f"The lamp {n} did not fit in the box because")
    pronoun = "it"
    text_after = "was too big."
    candidate_a = "The lamp"
    candidate_b = "The box"
    answer = "A"
    source_file = "tests.json"
    source_row = factory.Sequence(lambda n: n + 1)
    file_checksum = "0" * 64


class ReasonFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Reason

    schema = factory.SubFactory(SchemaFactory)
    position = factory.Sequence(int)
    text = factory.Sequence(lambda n: f"Lamps are bulky, reason {n}.")
    origin = "human"
    plausibility = 1.0
    label = "positive"
    source_label = "Valid"
    source_file = "tests.json"
    source_row = 1
    file_checksum = "0" * 64


class ComVEItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ComVEItem

    dataset = "comve"
    split = "dev"
    external_id = factory.Sequence(str)
    statement_0 = "She poured tea into the cup."
    statement_1 = "She poured tea into the fork."
    false_index = 1
    false_statement = "She poured tea into the fork."
    option_a = "A fork cannot hold liquid."
    option_b = "Tea is hot."
    option_c = "Cups are round."
    correct_option = "A"
    references = ["A fork has gaps, so tea runs through it."]
    has_a = True
    has_b = True
    has_c = True
    source_file = "tests.csv"
    source_row = factory.Sequence(lambda n: n + 1)
    file_checksum = "0" * 64
