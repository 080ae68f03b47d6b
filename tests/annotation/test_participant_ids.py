"""A participant id from a study link is ASCII letters, digits and - _ . only (study
integrity, item 9): a look-alike Unicode letter would enter the same person a second time
under an id that reads the same."""

from __future__ import annotations

import pytest

from annotation.crowd.platforms import PLATFORMS, StudyEntryError


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
@pytest.mark.parametrize(
    "lookalike",
    [
        "5f\u0430bc",
        "A\u0399\u0392",
        "\uff21\uff22\uff23",
        "abc\u0661",
        "x\u00e9",
    ],  # Cyrillic a, Greek, full-width, Arabic-Indic 1, accent
)
def test_a_participant_id_with_a_look_alike_letter_is_refused(platform, lookalike):
    spec = PLATFORMS[platform]
    with pytest.raises(StudyEntryError, match="is not a participant id"):
        spec.external_id({spec.id_param: lookalike})
    assert spec.external_id({spec.id_param: "5fabc-12_x.Y"}) == "5fabc-12_x.Y"
