"""Each annotation task's behaviour lives on its definition: every task has one, every
definition implements every hook, and each kind of hook does what its task's paper says."""

from pathlib import Path
from typing import Any, ClassVar

import pytest
from django.conf import settings
from django.template.loader import get_template
from django.urls import reverse

from annotation.answers import AnswerError
from annotation.models import CampaignItem, Judgment, Task
from annotation.task_types import TASK_TYPES, TASKS, AggregatedItem, TaskType, task_type
from datasets.models import ComVEItem, Explanation, KnowledgeType, Reason
from tests.annotation.factories import CampaignFactory, adversarial_item, campaign_for, form_fields
from tests.datasets.factories import ComVEItemFactory, ReasonFactory, SchemaFactory

#: The adversarial writing tasks (issue 27): their slots read the writer's tries.
ADVERSARIAL_WRITING = (Task.ADVERSARIAL_WINOGRAD, Task.ADVERSARIAL_COMVE)
HOOKS = sorted(set(TaskType.__abstractmethods__) | set(vars(TaskType)["__annotations__"]))


def _missing_hooks(cls: type) -> set[str]:
    """The hooks ``cls`` leaves to the base class (abstract there) or does not set at all."""
    missing = set()
    for hook in HOOKS:
        owner = next((c for c in cls.__mro__ if hook in vars(c)), None)
        if owner is None or owner is TaskType or getattr(getattr(cls, hook), "__isabstractmethod__", False):
            missing.add(hook)
    return missing


def _votes(*answers: str, payloads: tuple[dict[str, Any], ...] = ()) -> list[Judgment]:
    return [Judgment(pk=n, answer=a, payload=payloads[n] if payloads else {}) for n, a in enumerate(answers)]


def test_every_task_has_one_definition_and_one_spec():
    assert set(TASK_TYPES) == set(Task.values) == set(TASKS)
    for name, definition in TASK_TYPES.items():
        assert definition.name == name
        assert task_type(name) is definition
        assert definition.spec is TASKS[name]
    with pytest.raises(AnswerError, match="unknown task 'tagging'"):
        task_type("tagging")


def test_every_definition_implements_every_hook():
    assert {"present", "aggregate_item", "aggregate_finish", "plausible_answer"} <= set(HOOKS)
    for definition in TASK_TYPES.values():
        assert _missing_hooks(type(definition)) == set(), definition.name


@pytest.mark.parametrize("name", sorted(Task.values))
def test_every_task_has_its_class_its_spec_and_its_own_template(name):
    assert name in TASK_TYPES, f"no class for the task {name!r} in annotation.task_types.TASK_TYPES"
    definition = TASK_TYPES[name]
    assert {"spec", "template"} <= set(HOOKS)
    assert definition.spec.name == name
    assert definition.template == f"annotation/tasks/{name}.html"
    get_template(definition.template)  # TemplateDoesNotExist when the file is missing


def test_every_task_template_belongs_to_a_task():
    folder = Path(settings.BASE_DIR) / "templates" / "annotation" / "tasks"
    templates = {p.stem for p in folder.glob("*.html") if not p.name.startswith("_")}
    assert templates == set(Task.values)


def test_a_definition_that_leaves_a_hook_to_the_base_class_is_caught():
    class Incomplete(type(TASK_TYPES["switchability"])):  # type: ignore[misc]  # a base computed at run time
        pass

    assert _missing_hooks(Incomplete) == set()  # everything inherited from a real task

    class HalfDone(TaskType):
        name: ClassVar[str] = "half_done"
        item_relations = ()

        def present(self, item: CampaignItem) -> dict[str, Any]:
            return {}

    assert "present" not in _missing_hooks(HalfDone)
    assert {"aggregate_item", "gold_answer", "plausible_answer"} <= _missing_hooks(HalfDone)
    with pytest.raises(TypeError):
        HalfDone()  # type: ignore[abstract]  # the point: an abstract hook refuses to instantiate


# --------------------------------------------------------------------------- what annotators see


def test_present_shows_the_switched_sentence_or_only_the_clause_and_never_the_key():
    schema = SchemaFactory.build()
    switched = task_type("switchability").present(CampaignItem(schema=schema))
    assert switched == {
        "sentence": "The trophy doesn't fit into the suitcase because [it] is too large.",
        "switched": "The suitcase doesn't fit into the trophy because [it] is too large.",
    }
    assert task_type("associativity").present(CampaignItem(schema=schema)) == {
        "clause": "it is too large",
        "candidates": ["the trophy", "the suitcase"],
    }
    check = task_type("comve_check").present(CampaignItem(comve_item=ComVEItemFactory.build()))
    assert check["statements"] == ["He put a turkey into the fridge.", "He put an elephant into the fridge."]
    assert [letter for letter, _ in check["options"]] == ["A", "B", "C"]
    assert "correct_option" not in str(check) and "false_index" not in str(check)
    assert task_type("comve_writing").present(CampaignItem()) == {}  # an empty writing slot


#: Template syntax that would reach the page when a tag or a comment is not closed where
#: Django reads it (``{# ... #}`` spans one line only).
TEMPLATE_SYNTAX = ("{#", "#}", "{%", "{{")


def _leaked_syntax(html: str) -> list[str]:
    return [token for token in TEMPLATE_SYNTAX if token in html]


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(Task.values))
def test_the_annotate_page_and_its_htmx_fragments_show_no_template_syntax(name, client, annotator):
    campaign = campaign_for(name, k=1)
    client.force_login(annotator)
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    assert _leaked_syntax(client.get(url).content.decode()) == []  # the Start page
    started = client.post(url, {"start": "1"}, HTTP_HX_REQUEST="true")  # Start with htmx: the item
    assignment = started.context["assignment"]
    assert assignment is not None and "<html" not in started.content.decode()
    assert TASK_TYPES[name].template in {t.name for t in started.templates}
    assert _leaked_syntax(started.content.decode()) == []
    page = client.get(url)  # the whole page with the item in hand
    assert _leaked_syntax(page.content.decode()) == []
    answered = client.post(  # the fragment after an answer: nothing left, recent answers on demand
        url, {"assignment": assignment.pk, **form_fields(name)}, HTTP_HX_REQUEST="true"
    )
    html = answered.content.decode()
    if name in ADVERSARIAL_WRITING:  # kept or retracted through the models' check only (tests/adversarial)
        assert "kept or retracted from its page" in html and not Judgment.objects.exists()
    else:
        assert 'id="done"' in html and 'id="recent"' in html
    assert _leaked_syntax(html) == []


def _item_with_its_relations(name: str) -> tuple[TaskType, CampaignItem, Reason]:
    """A campaign item of task ``name`` on a reason, its schema and a ComVE item, fetched
    with the task's ``item_relations`` joined."""
    reason = ReasonFactory.create()
    comve = ComVEItemFactory.create()
    explanation = Explanation.objects.create(
        comve_item=comve, text="an elephant is bigger than a fridge.", run_id=7, model_name="tiny"
    )
    campaign = CampaignFactory.create(name=f"c-{name}", task=name, judgments_per_item=1)
    item = CampaignItem.objects.create(
        campaign=campaign,
        schema=reason.schema,
        reason=reason,
        comve_item=comve,
        explanation=explanation,
        adversarial=adversarial_item(),
    )
    definition = task_type(name)
    return definition, CampaignItem.objects.select_related(*definition.item_relations).get(pk=item.pk), reason


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(Task.values))
def test_item_relations_join_everything_present_reads(name, django_assert_num_queries):
    definition, fetched, _ = _item_with_its_relations(name)
    # a rewrite also shows the testees' answers, another campaign's judgments: one query
    # for the item's last check (none here), one for its judgments; never one per answer
    # adversarial writing reads the slot's latest lease and the round (for the inspiration
    # panel): rows a writing slot does not join
    with django_assert_num_queries(
        1 if name == Task.COMVE_REWRITE else 2 if name in ADVERSARIAL_WRITING else 0
    ):
        view = definition.present(fetched)
    assert view


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(Task.values))
def test_context_shows_the_curator_the_item_in_full_from_its_joined_rows(name, django_assert_num_queries):
    definition, fetched, reason = _item_with_its_relations(name)
    # the check it had (none here); adversarial writing: the slot's latest lease (none here)
    with django_assert_num_queries(1 if name in (Task.COMVE_REWRITE, *ADVERSARIAL_WRITING) else 0):
        lines = definition.context(fetched)
    shown = {line.label: line for line in lines}
    if name in ADVERSARIAL_WRITING:
        assert shown["Slot"].text == "nothing written yet"
    elif name == Task.COMVE_REWRITE:
        assert [line.label for line in lines if line.right] == ["Statement 2", "Reason A"]
        assert shown["Testees answered"].text == "no check found"
    elif name == Task.COMVE_WRITING:
        assert shown["Prompt (statement against sense)"].text == "He put an elephant into the fridge."
    elif name == Task.COMVE_CHECK:
        assert [line.label for line in lines if line.right] == ["Statement 2", "Reason A"]
        assert shown["Answer"].text == "statement 2 is against common sense"
    elif name == Task.ADVERSARIAL_VALIDATION:  # the written twins, the writer's answers, the models fooled
        sentence, twin = shown["Sentence"], shown["Twin"]
        assert (sentence.before, sentence.marked, sentence.text) == (
            "The trophy doesn't fit into the suitcase because",
            "it",
            "is too large.",
        )
        assert twin.text == "is too small."
        assert shown["Writer's answers"].text == "sentence: A (the trophy); twin: B (the suitcase)"
        assert shown["Fooled"].text == "SmolLM2-135M-Instruct.Q4_1"
    elif name == Task.EXPLANATION_PLAUSIBILITY:
        assert shown["Statement against common sense"].text == "He put an elephant into the fridge."
        assert shown["Explanation by tiny (run #7)"].text == "an elephant is bigger than a fridge."
        assert "Reference 1" in shown
    else:  # a Winograd question: sentence with the pronoun marked, candidates, the answer
        sentence = shown["Sentence"]
        assert (sentence.before, sentence.marked, sentence.text) == (
            "The trophy doesn't fit into the suitcase because",
            "it",
            "is too large.",
        )
        assert [line.label for line in lines if line.right] == ["Candidate A"]
        assert shown["Answer"].text == "“it” refers to the trophy"
        if name in (Task.REASON_PLAUSIBILITY, Task.KNOWLEDGE_TYPE):
            assert shown["Reason (human)"].text == reason.text


def test_votes_and_decisions_read_in_words():
    assert task_type("comve_check").vote_label("1:C") == "Statement 2, reason C"
    assert task_type("comve_check").vote_label("0") == "Statement 1"
    assert task_type("reason_plausibility").vote_label("implausible") == "Not plausible"
    assert task_type("switchability").vote_label("not_switchable") == "Not switchable"
    assert task_type("knowledge_type").vote_label("Spatial") == "Spatial"
    assert task_type("explanation_plausibility").vote_label("implausible") == "Not plausible"
    assert task_type("reason_writing").vote_label("written") == "Written reason"
    assert task_type("switchability").decision_label("not switchable") == "Not switchable"
    assert task_type("reason_plausibility").decision_label("acceptable") == "Acceptable"


# --------------------------------------------------------------------------- campaigns


def test_gold_answer_is_the_known_label_in_the_tasks_answers_or_nothing():
    assert task_type("switchability").gold_answer(SchemaFactory.build(switchable=False)) == "not_switchable"
    assert task_type("associativity").gold_answer(SchemaFactory.build()) == ""  # not labelled yet
    plausibility = task_type("reason_plausibility")
    assert plausibility.gold_answer(ReasonFactory.build(label="positive")) == "plausible"
    assert plausibility.gold_answer(ReasonFactory.build(label="acceptable")) == ""
    assert task_type("knowledge_type").gold_answer(ReasonFactory.build(knowledge_type="Spatial")) == "Spatial"
    check = task_type("comve_check")
    assert check.gold_answer(ComVEItemFactory.build(false_index=0, correct_option="B")) == "0:B"
    assert check.gold_answer(ComVEItemFactory.build(option_c="")) == "1"  # no reasons: the statement only
    assert task_type("reason_writing").gold_answer(SchemaFactory.build()) == ""


@pytest.mark.django_db
def test_selectable_leaves_a_comve_check_only_items_with_a_key_and_both_statements():
    keyed = ComVEItemFactory.create()
    ComVEItemFactory.create(false_index=None)
    ComVEItemFactory.create(statement_0="")
    everything = ComVEItem.objects.order_by("pk")
    assert list(task_type("comve_check").selectable(everything)) == [keyed]
    assert task_type("comve_writing").selectable(everything).count() == 3


def test_payload_text_spells_out_a_written_comve_item_for_the_curator():
    payload = {
        "statement_0": "He drank milk.",
        "statement_1": "He drank a chair.",
        "false_index": 1,
        "option_a": "A chair is not a drink.",
        "option_b": "Milk is white.",
        "option_c": "Chairs are wooden.",
        "correct_option": "A",
        "references": ["Nobody drinks chairs.", "A chair is furniture.", "Chairs are solid."],
    }
    text = task_type("comve_writing").payload_text(payload)
    assert text.startswith("He drank milk. / He drank a chair. (against sense: 2;")
    assert "right A; references Nobody drinks chairs. | A chair is furniture. | Chairs are solid." in text
    assert task_type("comve_writing").payload_text({}) == ""
    assert task_type("comve_check").payload_text({"option": "B"}) == ""


def test_adjudication_decisions_follow_the_task():
    assert task_type("reason_plausibility").adjudication_decisions() == ("positive", "acceptable", "negative")
    assert task_type("comve_check").adjudication_decisions() == ("rewrite", "keep")
    assert task_type("reason_writing").adjudication_decisions() == ("accept", "reject")
    assert task_type("switchability").adjudication_decisions() == ("switchable", "not_switchable")


# --------------------------------------------------------------------------- aggregation


def test_aggregate_item_applies_the_papers_rule_and_a_decision_overrides_the_votes():
    schema = SchemaFactory.build(switched_text="already switched")
    item = CampaignItem(schema=schema)
    campaign = CampaignFactory.build(name="sw", task=Task.SWITCHABILITY, judgments_per_item=3)
    switchability = task_type("switchability")
    split = switchability.aggregate_item(
        campaign=campaign,
        item=item,
        votes=_votes("switchable", "switchable", "not_switchable"),
        decision=None,
    )
    assert split.record == {"label": False}
    assert split.updates == [(schema, {"switchable": False})]
    assert split.needs_review and split.label == "not switchable"
    decided = switchability.aggregate_item(
        campaign=campaign,
        item=item,
        votes=_votes("switchable", "switchable", "not_switchable"),
        decision="switchable",
    )
    assert decided.record == {"label": True} and decided.label == "switchable"

    reason = ReasonFactory.build()
    plausible = task_type("reason_plausibility").aggregate_item(
        campaign=campaign,
        item=CampaignItem(reason=reason),
        votes=_votes("plausible", "plausible", "implausible", "plausible", "implausible"),
        decision=None,
    )
    assert plausible.record == {"score": 0.6, "label": "acceptable"}
    assert plausible.updates == [(reason, {"plausibility": 0.6, "label": "acceptable"})]
    assert plausible.needs_review

    comve = ComVEItemFactory.build()
    check = task_type("comve_check").aggregate_item(
        campaign=campaign,
        item=CampaignItem(comve_item=comve),
        votes=_votes("1", "1", "0", payloads=({"option": "A"}, {"option": "B"}, {"option": "A"})),
        decision=None,
    )
    assert check.record == {"wrong": 2, "needs_rewrite": True, "accuracy": pytest.approx(1 / 3)}
    assert check.label == "rewrite" and check.updates == [(comve, {"needs_rewrite": True})]


@pytest.mark.django_db
def test_aggregate_finish_gives_a_question_its_major_knowledge_types_and_a_check_its_accuracy():
    first = ReasonFactory.create()
    second = ReasonFactory.create(schema=first.schema)
    knowledge = task_type("knowledge_type")
    campaign = CampaignFactory.build(name="kt", task=Task.KNOWLEDGE_TYPE, judgments_per_item=2)
    aggregated = []
    for reason, answers in ((first, ("Spatial", "Property")), (second, ("Spatial", "Object"))):
        item = CampaignItem(reason=reason)
        result = knowledge.aggregate_item(campaign=campaign, item=item, votes=_votes(*answers), decision=None)
        aggregated.append(AggregatedItem(item=item, votes=_votes(*answers), result=result))
    finish = knowledge.aggregate_finish(aggregated)
    assert finish.updates == [(first.schema, {"knowledge_types": ["Spatial"]})]
    assert finish.extra == {"questions": 1}

    check = task_type("comve_check")
    item = CampaignItem(comve_item=ComVEItemFactory.build(option_c=""))  # key: statement 2
    votes = _votes("1", "1", "0")
    result = check.aggregate_item(campaign=campaign, item=item, votes=votes, decision=None)
    done = [AggregatedItem(item=item, votes=votes, result=result)]
    assert check.aggregate_finish(done).extra == {"human_accuracy": pytest.approx(2 / 3)}
    assert check.aggregate_finish([]).extra == {"human_accuracy": None}
    assert task_type("switchability").aggregate_finish(aggregated).updates == []


# --------------------------------------------------------------------------- agreement


def test_only_plausibility_votes_make_a_plausibility_score_and_only_knowledge_types_are_types():
    with_score = {name for name, t in TASK_TYPES.items() if t.plausible_answer is not None}
    assert with_score == {"reason_plausibility"}
    definition = task_type("reason_plausibility")
    assert definition.plausible_answer in definition.spec.choice_values
    typed = {name for name, t in TASK_TYPES.items() if t.answers_are_knowledge_types}
    assert typed == {"knowledge_type"}
    assert task_type("knowledge_type").spec.choice_values == tuple(KnowledgeType.values)


def test_the_spec_says_the_answers_order_whether_they_are_free_text_and_the_gold_key():
    free = {name for name, spec in TASKS.items() if spec.free_text}
    assert free == {"reason_writing", "comve_writing", "comve_rewrite", *ADVERSARIAL_WRITING}
    assert TASKS["comve_check"].choice_values == ("0", "1")
    assert TASKS["comve_check"].answer_key("1", {"option": "B"}) == "1:B"
    assert TASKS["comve_check"].answer_key("1", {}) == "1"
    assert TASKS["switchability"].answer_key("switchable", {"option": "B"}) == "switchable"
