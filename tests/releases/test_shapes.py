"""Every data set has a release shape (releases.shapes) and a section of the dataset card;
a data set added to the enum without them fails here."""

import pytest

from releases.card import CARD_SECTIONS
from releases.dataset import Dataset
from releases.shapes import SHAPES, shape_for


@pytest.mark.parametrize("dataset", list(Dataset))
def test_every_data_set_has_a_release_shape(dataset: Dataset) -> None:
    shape = SHAPES.get(dataset)
    assert shape is not None, f"no release shape for the data set {dataset.value!r} in releases.shapes"
    assert shape.dataset is dataset
    assert shape.labels and shape.source_fields
    assert shape.agreement_field.startswith("items__") and shape.agreement_field.endswith("_id__in")
    assert shape.card is CARD_SECTIONS[dataset]
    assert shape.card.title and shape.card.what and shape.card.fields and shape.card.citation


def test_sen_making_has_the_shape_of_comve_under_its_own_name() -> None:
    comve, senmaking = shape_for("comve"), shape_for("senmaking")
    assert (senmaking.rows, senmaking.labels) == (comve.rows, comve.labels)
    assert senmaking.card.title != comve.card.title
