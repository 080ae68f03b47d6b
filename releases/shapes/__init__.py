"""One release shape per data set, in one registry keyed by the data-set enum.

A release shape (releases.shapes.base.ReleaseShape) holds what differs per data set on the
release side: the items a selection names, their payloads, their labels, the campaigns'
agreement field, the imported files and the dataset card's section. Its twin on the
evaluation side is the data set's evaluator (evaluation.evaluators).
tests/releases/test_shapes.py fails when a data set has no shape.
"""

from releases.dataset import Dataset
from releases.shapes import comve, winowhy, wsc
from releases.shapes.base import ReleaseShape, Row

#: The shape of every data set.
SHAPES: dict[Dataset, ReleaseShape] = {
    Dataset.WSC: wsc.SHAPE,
    Dataset.WINOWHY: winowhy.SHAPE,
    Dataset.COMVE: comve.COMVE,
    Dataset.SENMAKING: comve.SENMAKING,
}


def shape_for(dataset: str) -> ReleaseShape:
    """The release shape of a data set (a release's, by its enum value)."""
    return SHAPES[Dataset(dataset)]


__all__ = ["SHAPES", "ReleaseShape", "Row", "shape_for"]
