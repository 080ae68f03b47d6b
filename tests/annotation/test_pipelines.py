"""Pipelines (issue 13): the stage definitions, each stage's rule, the reverse candidates,
the preview, an advance that is safe to click twice, and the refusals."""

import pytest

from annotation.errors import PipelineError
from annotation.models import Campaign, CampaignStatus, Pipeline, PipelineStage, StageStatus, Task
from annotation.pipelines import registry
from annotation.pipelines.services import pipeline_advance, pipeline_advance_preview, pipeline_create
from datasets.models import ComVEItem, Reason, ReasonOrigin
from tests.annotation.answering import answer_all
from tests.datasets.factories import ReasonFactory, SchemaFactory

pytestmark = pytest.mark.django_db

HOOKS = sorted(set(registry.StageKind.__abstractmethods__) | set(vars(registry.StageKind)["__annotations__"]))


def test_every_stage_kind_defines_every_hook():
    for defn in registry.PIPELINES.values():
        keys = [s.key for s in defn.stages]
        assert len(keys) == len(set(keys)), defn.kind
        for stage in defn.stages:
            for hook in HOOKS:
                owner = next((c for c in type(stage).__mro__ if hook in vars(c)), None)
                assert owner is not None and owner is not registry.StageKind, (type(stage).__name__, hook)
                assert not getattr(getattr(stage, hook), "__isabstractmethod__", False), hook
            # a stage with a campaign has a K, one without has none
            assert (stage.task is None) == (stage.default_k is None) == (stage.min_k is None)


def _schemas(collection="mine"):
    """kettle-1 / kettle-2 twins and lamp-1, as the template file has them."""
    k1 = SchemaFactory.create(collection=collection, external_id="kettle-1")
    k2 = SchemaFactory.create(collection=collection, external_id="kettle-2", answer="B")
    k1.twin = k2
    k1.save()
    k2.twin = k1
    k2.save()
    lamp = SchemaFactory.create(collection=collection, external_id="lamp-1")
    return k1, k2, lamp


def _stage(pipeline, key):
    return PipelineStage.objects.select_related("campaign").get(pipeline=pipeline, key=key)


def _advance(pipeline, curator, **kw):
    stage = PipelineStage.objects.get(pipeline=pipeline, status=StageStatus.ACTIVE)
    return pipeline_advance(pipeline=pipeline, position=stage.position, curator=curator, **kw)


def test_winowhy_pipeline_stage_by_stage(curator, make_annotators):
    k1, k2, lamp = _schemas()
    ReasonFactory(schema=lamp, origin=ReasonOrigin.GENERATED, text="lamps are bright")
    people = make_annotators(5)
    pipeline = pipeline_create(curator=curator, kind="winowhy", collection="mine", name="p1")
    writing = _stage(pipeline, "writing")
    assert writing.status == StageStatus.ACTIVE
    assert writing.campaign.task == Task.REASON_WRITING and writing.campaign.judgments_per_item == 5
    assert writing.campaign.items.count() == 3
    assert _stage(pipeline, "validation").status == StageStatus.WAITING

    # refused while the writers have not finished, saying how many items wait
    with pytest.raises(PipelineError, match="3 of 3 items still need judgments"):
        _advance(pipeline, curator)
    answer_all(
        writing.campaign, people, lambda item, i: {"text": f"reason {i} for {item.schema.external_id}"}
    )

    preview = pipeline_advance_preview(pipeline=pipeline)
    assert dict(preview.outcome["counts"])["reasons written"] == 15
    assert [p.key for p in preview.next] == ["validation"]
    assert preview.next[0].k == 5 and dict(preview.next[0].counts) == {"human": 15}
    # the preview wrote nothing
    assert Reason.objects.filter(origin=ReasonOrigin.HUMAN).count() == 0
    assert not Campaign.objects.filter(name="p1-validation").exists()

    result = _advance(pipeline, curator)
    assert result.advanced and result.started == ["validation"]
    assert Campaign.objects.get(name="p1-writing").status == CampaignStatus.CLOSED
    # a second click on the same stage does nothing
    again = pipeline_advance(pipeline=pipeline, position=0, curator=curator)
    assert not again.advanced
    assert Campaign.objects.filter(name__startswith="p1-").count() == 2

    validation = _stage(pipeline, "validation")
    assert validation.campaign.items.count() == 15

    # valid at >= 4 of 5: writer 0's and writer 1's reasons get 4 and 5 yes, the others 3
    def validate(item, i):
        writer = int(item.reason.text.split()[1])
        yes = 5 if writer == 0 else 4 if writer == 1 else 3
        return {"answer": "plausible" if i < yes else "implausible"}

    answer_all(validation.campaign, people, validate)
    preview = pipeline_advance_preview(pipeline=pipeline)
    assert dict(preview.outcome["counts"]) == {"valid": 6, "not valid": 9}
    assert preview.next[0].key == "pool"
    # 6 valid human; the kettles' 4 valid reasons are copied onto their twins; 1 generated
    assert dict(preview.next[0].counts) == {"human": 6, "reverse": 4, "generated": 1}
    _advance(pipeline, curator)
    pool = _stage(pipeline, "pool")
    assert pool.status == StageStatus.ACTIVE and pool.campaign is None  # waits for the curator

    preview = pipeline_advance_preview(pipeline=pipeline)
    assert preview.next[0].key == "plausibility"
    assert dict(preview.next[0].counts) == {"human": 6, "reverse": 4, "generated": 1}
    assert not Reason.objects.filter(origin=ReasonOrigin.REVERSE).exists()
    _advance(pipeline, curator)
    reverse = list(Reason.objects.filter(origin=ReasonOrigin.REVERSE).select_related("schema"))
    assert len(reverse) == 4
    for copy in reverse:
        original = Reason.objects.get(pk=copy.source_row)
        assert copy.text == original.text and copy.schema_id == original.schema.twin_id
    plausibility = _stage(pipeline, "plausibility")
    assert plausibility.campaign.items.count() == 11

    # generated and reverse: 1 of 5 plausible (negative); human: all plausible (positive)
    def vote(item, i):
        yes = 5 if item.reason.origin == "human" else 1
        return {"answer": "plausible" if i < yes else "implausible"}

    answer_all(plausibility.campaign, people, vote)
    _advance(pipeline, curator)
    assert dict(_stage(pipeline, "plausibility").outcome["counts"]) == {
        "human positive": 6,
        "reverse negative": 4,
        "generated negative": 1,
    }
    knowledge = _stage(pipeline, "knowledge")
    # the paper's knowledge types are chosen for the valid reasons (2.2)
    assert knowledge.campaign.items.count() == 6

    def label(item, i):
        return {"answer": "Property" if item.reason.schema.external_id != "lamp-1" or i < 2 else "Object"}

    answer_all(knowledge.campaign, people, label)
    _advance(pipeline, curator)
    major = _stage(pipeline, "major")
    assert major.status == StageStatus.DONE
    assert major.outcome["major_types"] == {
        "kettle-1": ["Property"],
        "kettle-2": ["Property"],
        "lamp-1": ["Object"],
    }
    pipeline.refresh_from_db()
    assert pipeline.status == "done"
    with pytest.raises(PipelineError, match="done"):
        pipeline_advance_preview(pipeline=pipeline)


def test_force_advances_an_incomplete_stage(curator, make_annotators):
    _schemas()
    people = make_annotators(6)
    pipeline = pipeline_create(
        curator=curator, kind="winowhy", collection="mine", name="p2", k={"writing": 5}
    )
    writing = _stage(pipeline, "writing").campaign
    # five reasons on the fullest item, then one on a second item (4 short of K)
    answer_all(writing, people[:5], lambda item, i: {"text": f"why {i}"}, limit=1)
    answer_all(writing, people[5:], lambda item, i: {"text": "a lone reason"}, limit=1)
    with pytest.raises(PipelineError, match="still need judgments"):
        _advance(pipeline, curator)
    # a forced preview of a ComVE pipeline with nothing written runs to its end, and rolls back
    comve = pipeline_create(curator=curator, kind="comve", collection="c", name="c0", slots=1)
    assert pipeline_advance_preview(pipeline=comve).finishes
    assert comve.status == "running" and Pipeline.objects.get(name="c0").status == "running"
    result = _advance(pipeline, curator, force=True)
    assert result.advanced
    # every reason written is kept: the 5 of the full item and the lone one (a writing
    # stage forced early loses nothing anyone wrote); the items nobody wrote for are left out
    assert Reason.objects.filter(origin=ReasonOrigin.HUMAN).count() == 6
    assert _stage(pipeline, "validation").campaign.items.count() == 6
    assert Reason.objects.filter(text="a lone reason").exists()


def test_create_refusals(curator, annotator):
    _schemas()
    with pytest.raises(PipelineError, match="kind"):
        pipeline_create(curator=curator, kind="nope", collection="mine")
    with pytest.raises(PipelineError, match="no questions in 'empty'"):
        pipeline_create(curator=curator, kind="winowhy", collection="empty")
    with pytest.raises(PipelineError, match="k of check \\(check by testees\\): 2 is not between 3"):
        pipeline_create(curator=curator, kind="comve", collection="c", slots=2, k={"check": 2})
    with pytest.raises(PipelineError, match="slots"):
        pipeline_create(curator=curator, kind="comve", collection="c", slots=0)
    with pytest.raises(PipelineError, match="k of writing \\(reason writing\\): 'x' is not a number"):
        pipeline_create(curator=curator, kind="winowhy", collection="mine", k={"writing": "x"})
    pipeline_create(curator=curator, kind="winowhy", collection="mine", name="same")
    with pytest.raises(PipelineError, match="exists already"):
        pipeline_create(curator=curator, kind="winowhy", collection="mine", name="same")
    assert Pipeline.objects.count() == 1


def _comve_answer(i):
    return {
        "payload": {
            "statement_0": f"He put a turkey into the fridge {i}.",
            "statement_1": f"He put an elephant into the fridge {i}.",
            "false_index": "1",
            "option_a": "An elephant is much bigger than a fridge.",
            "option_b": "Elephants are gray.",
            "option_c": "An elephant cannot eat a turkey.",
            "correct_option": "A",
            "reference_1": "too big",
            "reference_2": "far too big",
            "reference_3": "does not fit",
        }
    }


def test_comve_pipeline_writes_checks_rewrites_and_reports_accuracy(curator, make_annotators):
    people = make_annotators(3)
    pipeline = pipeline_create(curator=curator, kind="comve", collection="my-comve", name="c1", slots=2)
    writing = _stage(pipeline, "writing")
    assert writing.campaign.task == Task.COMVE_WRITING and writing.campaign.items.count() == 2
    answer_all(writing.campaign, people[:2], lambda item, i: _comve_answer(i), limit=1)
    _advance(pipeline, curator)
    written = ComVEItem.objects.filter(collection="my-comve")
    assert written.count() == 2  # in the pipeline's collection, not the public sets
    check = _stage(pipeline, "check")
    assert check.campaign.judgments_per_item == 3
    first = written.order_by("pk")[0]

    # item 1: 2 of 3 wrong (more than half: rewrite); item 2: all right
    def answer(item, i):
        wrong = item.comve_item_id == first.pk and i < 2
        return {"answer": "0" if wrong else "1", "payload": {"option": "A"}}

    answer_all(check.campaign, people, answer)
    preview = pipeline_advance_preview(pipeline=pipeline)
    assert pipeline.status == "running"  # the preview's rolled-back advance left no trace
    assert dict(preview.outcome["counts"]) == {"kept": 1, "to rewrite": 1}
    assert preview.outcome["accuracy"] == pytest.approx(4 / 6)
    _advance(pipeline, curator)
    rewrite = _stage(pipeline, "rewrite")
    assert rewrite.campaign.task == Task.COMVE_REWRITE and [
        i.comve_item_id for i in rewrite.campaign.items.all()
    ] == [first.pk]
    from annotation.task_types import task_type

    shown = task_type("comve_rewrite").present(rewrite.campaign.items.get())
    assert shown["answers"] == ["Statement 1, reason A", "Statement 1, reason A", "Statement 2, reason A"]
    assert shown["values"]["statement_1"] == first.statement_1
    old = first.statement_0
    fixed = _comve_answer(9)
    fixed["payload"]["statement_0"] = "He put a fresh turkey into the fridge."
    answer_all(rewrite.campaign, people[2:], lambda item, i: fixed)
    _advance(pipeline, curator)
    first.refresh_from_db()
    assert first.statement_0 == "He put a fresh turkey into the fridge."
    assert first.source_file == "campaign:c1-rewrite"
    item = _stage(pipeline, "rewrite").campaign.items.get()
    assert item.aggregate["previous"]["statement_0"] == old
    recheck = _stage(pipeline, "recheck")
    assert recheck.campaign.items.count() == 1
    answer_all(recheck.campaign, people, lambda item, i: {"answer": "1", "payload": {"option": "A"}})
    _advance(pipeline, curator)
    accuracy = _stage(pipeline, "accuracy")
    assert accuracy.status == StageStatus.DONE
    assert accuracy.outcome["accuracy"] == {"check": pytest.approx(4 / 6), "recheck": 1.0}
    assert "recheck: 100.0% of 3 answers right" in " ".join(accuracy.outcome["lines"])


def test_comve_pipeline_skips_the_rewrite_when_nothing_needs_it(curator, make_annotators):
    people = make_annotators(3)
    pipeline = pipeline_create(curator=curator, kind="comve", collection="ok", name="c2", slots=1)
    answer_all(_stage(pipeline, "writing").campaign, people[:1], lambda item, i: _comve_answer(i))
    _advance(pipeline, curator)
    answer_all(
        _stage(pipeline, "check").campaign,
        people,
        lambda item, i: {"answer": "1", "payload": {"option": "A"}},
    )
    _advance(pipeline, curator)
    assert _stage(pipeline, "rewrite").outcome["skipped"]
    assert _stage(pipeline, "recheck").outcome["skipped"]
    pipeline.refresh_from_db()
    assert pipeline.status == "done"


def test_a_rewrite_submitted_unchanged_keeps_the_item_and_its_provenance(curator, make_annotators):
    people = make_annotators(3)
    pipeline = pipeline_create(curator=curator, kind="comve", collection="same", name="c3", slots=1)
    answer_all(_stage(pipeline, "writing").campaign, people[:1], lambda item, i: _comve_answer(i))
    _advance(pipeline, curator)
    answer_all(
        _stage(pipeline, "check").campaign,
        people,
        lambda item, i: {"answer": "0", "payload": {"option": "A"}},
    )
    _advance(pipeline, curator)
    item = ComVEItem.objects.get(collection="same")
    source = item.source_file
    answer_all(_stage(pipeline, "rewrite").campaign, people[:1], lambda ci, i: _comve_answer(0))
    _advance(pipeline, curator)
    item.refresh_from_db()
    assert item.source_file == source
    assert _stage(pipeline, "rewrite").outcome["counts"] == [["rewritten", 0]]
    assert _stage(pipeline, "recheck").outcome["skipped"]
