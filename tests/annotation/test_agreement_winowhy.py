"""The real WinoWhy plausibility votes (4,095 reasons x 5 votes) against both references."""

import json

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from annotation.agreement import stats as ag

pytestmark = pytest.mark.realdata


@pytest.fixture
def winowhy_votes(data_dir):
    """Plausible-vote counts per reason: the released score is the share of 5 votes."""
    questions = json.loads((data_dir / "winowhy" / "winowhy.json").read_text(encoding="utf-8"))
    scores = np.array([reason[2] for q in questions for reason in q["reasons"]], dtype=np.float64)
    plausible = np.rint(scores * 5).astype(np.int64)
    assert np.allclose(plausible / 5, scores)  # every score is a share of exactly 5 votes
    return plausible


def test_winowhy_has_4095_reasons_with_five_votes(winowhy_votes):
    assert winowhy_votes.shape == (4095,)
    assert (winowhy_votes >= 4).sum() == 1270 and (winowhy_votes <= 1).sum() == 1595


def test_winowhy_fleiss_kappa_equals_statsmodels(winowhy_votes):
    table = np.stack([winowhy_votes, 5 - winowhy_votes], axis=1)
    reference = sm_fleiss_kappa(table, method="fleiss")
    assert ag.fleiss_kappa(table) == pytest.approx(reference, abs=1e-12, rel=0)
    assert round(ag.fleiss_kappa(table), 3) == 0.334  # the figure quoted in docs/agreement.md


def test_winowhy_alpha_equals_krippendorff_from_judgment_codes(winowhy_votes):
    # 5 anonymous raters per reason: rater r votes "plausible" when r < plausible votes.
    raters = np.arange(5)
    reliability = (raters[:, None] < winowhy_votes[None, :]).astype(np.float64)  # 5 x 4095
    r, i = np.nonzero(np.ones_like(reliability, dtype=bool))
    codes = ag.encode(i, r, np.where(reliability[r, i] == 1.0, "plausible", "not_plausible"))
    table = codes.table()
    reference = krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
    assert ag.krippendorff_alpha_nominal(table) == pytest.approx(reference, abs=1e-9, rel=0)


def test_winowhy_pairwise_agreement_by_brute_force(winowhy_votes):
    table = np.stack([winowhy_votes, 5 - winowhy_votes], axis=1)
    k = winowhy_votes
    by_hand = ((k * (k - 1) / 2 + (5 - k) * (4 - k) / 2) / 10).mean()
    assert ag.pairwise_agreement(table) == pytest.approx(by_hand, abs=1e-12)
    assert round(ag.pairwise_agreement(table) * 100, 2) == 66.88  # quoted in docs/agreement.md
