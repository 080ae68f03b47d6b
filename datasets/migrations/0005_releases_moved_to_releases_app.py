"""The release models now live in the ``releases`` app (its migration 0001): here they
leave this app's migration state only. Their tables, with the triggers of 0004, stay."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("datasets", "0004_release_published_guards"),
        ("releases", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name="ReleaseFile"),
                migrations.DeleteModel(name="ReleaseItem"),
                migrations.DeleteModel(name="Release"),
            ],
        ),
    ]
