"""Existing labels into layers (issue 13), losing nothing.

Each campaign's layer comes from its items' aggregate records (what its aggregation wrote);
a question's major types from its knowledge-type votes, by the same rule. A label on an item
that no campaign's layer holds came from an import: it becomes the layer of the item's import
batch (the Trichelair batch for switchable/associative), or of one source named "labels
present before layers" where no batch is recorded.
"""

from collections import defaultdict

from django.db import migrations

from annotation import aggregation_rules as rules

# task -> (item field, label name, the label's value from an item's aggregate record)
TASK_LABELS = {
    "switchability": ("schema", "switchable", lambda a: {"switchable": a.get("label")}),
    "associativity": ("schema", "associative", lambda a: {"associative": a.get("label")}),
    "reason_plausibility": (
        "reason",
        "plausibility",
        lambda a: {"plausibility": a.get("score"), "label": a.get("label")},
    ),
    "knowledge_type": ("reason", "knowledge_type", lambda a: {"knowledge_type": a.get("label")}),
    "comve_check": ("comve_item", "needs_rewrite", lambda a: {"needs_rewrite": a.get("needs_rewrite")}),
}
# item field -> model name and its labels' fields
LABELS = {
    "schema": (
        "Schema",
        {
            "switchable": ("switchable",),
            "associative": ("associative",),
            "knowledge_types": ("knowledge_types",),
        },
    ),
    "reason": ("Reason", {"plausibility": ("plausibility", "label"), "knowledge_type": ("knowledge_type",)}),
    "comve_item": ("ComVEItem", {"needs_rewrite": ("needs_rewrite",)}),
}


def _empty(name, value):
    # needs_rewrite False is every item's default, not a label anyone gave
    return all(v is None or v == "" or v == [] or (name == "needs_rewrite" and v is False) for v in value.values())


def forwards(apps, schema_editor):
    Campaign = apps.get_model("annotation", "Campaign")
    CampaignItem = apps.get_model("annotation", "CampaignItem")
    Judgment = apps.get_model("annotation", "Judgment")
    LabelSource = apps.get_model("datasets", "LabelSource")
    Label = apps.get_model("datasets", "Label")
    ImportBatch = apps.get_model("datasets", "ImportBatch")

    held = defaultdict(list)  # (target, item id, label) -> values the campaigns' layers hold
    for campaign in Campaign.objects.order_by("created_at", "pk"):
        if campaign.task not in TASK_LABELS:
            continue
        target, name, value_of = TASK_LABELS[campaign.task]
        rows = list(
            CampaignItem.objects.filter(campaign=campaign, is_gold=False)
            .exclude(aggregate={})
            .values_list("pk", f"{target}_id", "aggregate")
        )
        if not rows:
            continue
        source = LabelSource.objects.create(
            kind="campaign",
            name=f"campaign:{campaign.name}",
            campaign_id=campaign.pk,
            title=f"campaign {campaign.name}",
        )
        layers = []
        for _pk, item_id, aggregate in rows:
            if item_id is None or "n" not in aggregate:
                continue
            value = value_of(aggregate)
            layers.append(Label(source=source, name=name, value=value, **{f"{target}_id": item_id}))
            held[(target, item_id, name)].append(value)
        if campaign.task == "knowledge_type":
            # the questions' major types, from the votes of the campaign's aggregated reasons
            per_schema = defaultdict(list)
            aggregated = {pk for pk, _i, a in rows if "n" in a}
            votes = defaultdict(list)
            for item_id, answer in Judgment.objects.filter(campaign_item_id__in=aggregated).values_list(
                "campaign_item_id", "answer"
            ):
                votes[item_id].append(answer)
            for item_id, schema_id in CampaignItem.objects.filter(pk__in=aggregated).values_list(
                "pk", "reason__schema_id"
            ):
                per_schema[schema_id].append(votes[item_id])
            for schema_id, per_reason in per_schema.items():
                value = {"knowledge_types": rules.major_types(per_reason)}
                layers.append(Label(source=source, name="knowledge_types", value=value, schema_id=schema_id))
                held[("schema", schema_id, "knowledge_types")].append(value)
        Label.objects.bulk_create(layers, batch_size=1000)

    trichelair = ImportBatch.objects.filter(format="trichelair").order_by("-created_at", "-pk").first()
    sources = {}

    def import_source(batch_id):
        key = batch_id or "before"
        if key not in sources:
            if batch_id is None:
                sources[key], _ = LabelSource.objects.get_or_create(
                    name="import:before-layers",
                    defaults={
                        "kind": "import",
                        "title": "labels present before layers (source not recorded)",
                    },
                )
            else:
                batch = ImportBatch.objects.get(pk=batch_id)
                sources[key], _ = LabelSource.objects.get_or_create(
                    import_batch=batch,
                    defaults={
                        "kind": "import",
                        "name": f"import:{batch.pk}",
                        "title": f"{batch.format}, import #{batch.pk}",
                    },
                )
        return sources[key]

    for target, (model_name, labels) in LABELS.items():
        model = apps.get_model("datasets", model_name)
        fields = sorted({f for fs in labels.values() for f in fs})
        layers = []
        for row in model.objects.values("pk", "import_batch_id", *fields).iterator(chunk_size=2000):
            for name, label_fields in labels.items():
                value = {f: row[f] for f in label_fields}
                if _empty(name, value) or value in held.get((target, row["pk"], name), []):
                    continue
                batch_id = row["import_batch_id"]
                if name in ("switchable", "associative") and trichelair is not None:
                    batch_id = trichelair.pk
                layers.append(
                    Label(
                        source=import_source(batch_id), name=name, value=value, **{f"{target}_id": row["pk"]}
                    )
                )
        Label.objects.bulk_create(layers, batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0003_agreement_headline"),
        ("datasets", "0008_label_layers"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
