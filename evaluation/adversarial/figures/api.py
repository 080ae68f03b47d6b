"""The adversarial figures as an API (DRF, in the OpenAPI schema): the collections with
rounds, and one collection's figures per level as the page's frames, as records."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.tables import frame_records
from evaluation.adversarial.figures import frames, selectors
from evaluation.adversarial.figures.permissions import SeesAdversarialFigures


class CollectionOutput(serializers.Serializer):
    collection = serializers.CharField()
    rounds = serializers.IntegerField()
    items = serializers.IntegerField(help_text="Adversarial items of every round (also those being written)")
    latest = serializers.IntegerField(help_text="The latest round's number")


class RoundOutput(serializers.Serializer):
    number = serializers.IntegerField()
    pipeline = serializers.CharField()
    models_in_loop = serializers.ListField(child=serializers.DictField(), help_text="[{name, sha256}]")
    method = serializers.CharField()
    rule = serializers.CharField()


class FiguresOutput(serializers.Serializer):
    collection = serializers.CharField()
    definitions = serializers.CharField(help_text="Where each figure is defined")
    rounds = RoundOutput(many=True)
    figures = serializers.DictField(
        child=serializers.ListField(child=serializers.DictField()),
        help_text="Per level (collection, round, model, writer): one record per row, the counts "
        "and the figures (null where a denominator is 0); rescore: earlier rounds' items "
        "re-scored by later rounds' models, per model and pair of rounds",
    )


class AdversarialCollectionListApi(APIView):
    """The collections with adversarial rounds."""

    permission_classes = [SeesAdversarialFigures]

    @extend_schema(responses=CollectionOutput(many=True))
    def get(self, request: Request) -> Response:
        return Response(CollectionOutput(selectors.adversarial_collections(), many=True).data)


class AdversarialFiguresApi(APIView):
    """One collection's figures: model error rate, validated model error rate, tries per
    fooling item, retraction and rejection rates, median seconds and cost per validated
    fooling item, per collection, round, model and writer."""

    permission_classes = [SeesAdversarialFigures]

    @extend_schema(responses=FiguresOutput)
    def get(self, request: Request, collection: str) -> Response:
        rounds = selectors.collection_rounds(collection=collection)
        tables = selectors.collection_figures(collection=collection)
        body = {
            "collection": collection,
            "definitions": "/docs/adversarial/#figures-the-crowd-bonus-releases-and-evaluation",
            "rounds": [
                {
                    "number": r.number,
                    "pipeline": r.pipeline.name,
                    "models_in_loop": r.models_in_loop,
                    "method": r.method,
                    "rule": r.rule,
                }
                for r in rounds
            ],
            "figures": {table: frame_records(tables[table]) for table in frames.TABLES},
        }
        return Response(FiguresOutput(body).data)
