"""Earlier rounds' kept items are re-scored by a later round's models, without being
rewritten (manage.py adversarial_rescore)."""

import io

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from annotation.models import AdversarialItem, AdversarialScore, AdversarialTry
from evaluation.adversarial import services, verdict
from tests.adversarial.factories import TWINS, adversarial_round, slot_for

pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_a_later_rounds_models_rescore_earlier_kept_items_once_without_rewriting_them(
    models_dir, annotator, annotator2, django_capture_on_commit_callbacks
):
    first = adversarial_round(models=("tiny-llama",), method="partial", number=1)
    assignment = slot_for(first, annotator)
    with django_capture_on_commit_callbacks(execute=True):
        services.adversarial_try_create(writer=annotator, assignment=assignment, raw=TWINS)
    services.adversarial_keep(writer=annotator, assignment=assignment)
    retracted = slot_for(first, annotator2)
    services.adversarial_retract(writer=annotator2, assignment=retracted)  # not re-scored
    kept = AdversarialItem.objects.get(status="kept")
    before = (kept.content, kept.verdict, kept.fooled, kept.tries)
    second = adversarial_round(models=("tiny-bert",), method="pll", number=2)

    out = io.StringIO()
    call_command("adversarial_rescore", "--round", "2", "--collection", "adv", stdout=out)
    assert "1 earlier kept items: 1 new re-scores, 0 there already" in out.getvalue()
    (score,) = AdversarialScore.objects.all()
    assert (score.item, score.round, score.model, score.method) == (kept, second, "tiny-bert", "pll")
    assert len(score.sha256) == 64 and score.verdict == score.result["verdict"]
    # the same scores a try of round 2 gets: the verdict of the scorer evaluate uses
    from evaluation.lm import model_cache
    from evaluation.selectors import model_get

    entry = model_get(name="tiny-bert")
    assert entry is not None
    # with the verdicts' threads: MKL's float32 products may round differently at another
    # thread count (on an AMD EPYC, by 1.4e-6 for 7 rows of 32 by 64)
    loaded = model_cache.load(entry.path, threads=settings.WINNOW_VERDICT_THREADS)
    direct = verdict.winograd_verdict(loaded, kept.content, method="pll")
    assert score.result["twins"] == direct["twins"]
    kept.refresh_from_db()
    assert (kept.content, kept.verdict, kept.fooled, kept.tries) == before
    assert AdversarialTry.objects.count() == 1  # no try added

    again = io.StringIO()
    call_command("adversarial_rescore", "--round", "2", "--collection", "adv", stdout=again)
    assert "0 new re-scores, 1 there already" in again.getvalue() and AdversarialScore.objects.count() == 1


def test_rescoring_an_unknown_round_names_it():
    with pytest.raises(CommandError, match="no round 4 in the collection 'adv'"):
        call_command("adversarial_rescore", "--round", "4", "--collection", "adv")
