"""Crowd participants hold the participant role instead of the annotator role (the
annotator role also opens the published releases, which hold the answers of the items a
participant is checked on). Moves the users of existing participants from the annotator
group to the participant group; backwards, the other way."""

from django.db import migrations


def _move(apps, schema_editor, source: str, target: str) -> None:
    Group = apps.get_model("auth", "Group")
    Participant = apps.get_model("annotation", "Participant")
    alias = schema_editor.connection.alias
    users = list(Participant.objects.using(alias).values_list("user_id", flat=True))
    if not users:
        return
    old, _ = Group.objects.using(alias).get_or_create(name=source)
    new, _ = Group.objects.using(alias).get_or_create(name=target)
    members = Group.user_set.through
    members.objects.using(alias).filter(group=old, user_id__in=users).delete()
    already = set(
        members.objects.using(alias).filter(group=new, user_id__in=users).values_list("user_id", flat=True)
    )
    members.objects.using(alias).bulk_create(
        members(group=new, user_id=user) for user in users if user not in already
    )


def forwards(apps, schema_editor) -> None:
    _move(apps, schema_editor, "annotator", "participant")


def backwards(apps, schema_editor) -> None:
    _move(apps, schema_editor, "participant", "annotator")


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0009_crowd_quality"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
