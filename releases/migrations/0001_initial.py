"""The release models move here from ``datasets`` (issue 12) without touching a row.

``SeparateDatabaseAndState``: in the migration state the three models are created in this
app, while the database keeps the tables, indexes, constraints and the triggers of
``datasets.0004`` as they are (the models set ``db_table`` to the old names). Their content
types move with them, so admin log entries and permissions keep pointing at them; on a new
database there are none yet and nothing moves.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MODELS = ("release", "releaseitem", "releasefile")


def move_content_types(apps, schema_editor, source="datasets", target="releases"):  # type: ignore[no-untyped-def]
    ContentType = apps.get_model("contenttypes", "ContentType")  # noqa: N806
    # the database migrate runs on (the owner's alias, docs/operations.md), not the default
    types = ContentType.objects.using(schema_editor.connection.alias)
    for model in MODELS:
        old = types.filter(app_label=source, model=model).first()
        if old is None:
            continue
        # a stray row made for the target before this ran holds nothing: the old one wins
        types.filter(app_label=target, model=model).delete()
        old.app_label = target
        old.save(update_fields=["app_label"], using=schema_editor.connection.alias)


def content_types_back(apps, schema_editor):  # type: ignore[no-untyped-def]
    move_content_types(apps, schema_editor, source="releases", target="datasets")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("datasets", "0004_release_published_guards"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='Release',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.SlugField(max_length=100)),
                        ('dataset', models.CharField(choices=[('wsc', 'WSC (Winograd schemas with Trichelair labels)'), ('winowhy', 'WinoWhy (reasons)'), ('comve', 'ComVE (SemEval-2020 Task 4)'), ('senmaking', 'Sen-Making pilot')], max_length=20)),
                        ('split', models.CharField(blank=True, help_text='ComVE / Sen-Making split', max_length=10)),
                        ('selection', models.JSONField(blank=True, default=dict, help_text='How the items were chosen')),
                        ('version', models.CharField(help_text='Semantic version X.Y.Z', max_length=32)),
                        ('version_major', models.PositiveIntegerField(default=0, editable=False)),
                        ('version_minor', models.PositiveIntegerField(default=0, editable=False)),
                        ('version_patch', models.PositiveIntegerField(default=0, editable=False)),
                        ('status', models.CharField(choices=[('draft', 'draft'), ('approved', 'approved'), ('published', 'published')], default='draft', max_length=10)),
                        ('changelog', models.TextField(blank=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('approved_at', models.DateTimeField(blank=True, null=True)),
                        ('published_at', models.DateTimeField(blank=True, null=True)),
                        ('previous_version', models.CharField(blank=True, help_text='Version the diff is against', max_length=32)),
                        ('diff', models.JSONField(blank=True, default=dict)),
                        ('manifest', models.JSONField(blank=True, default=dict)),
                        ('sources', models.JSONField(blank=True, default=list, help_text='[{file, sha256}] of the imported files')),
                        ('agreement_summary', models.JSONField(blank=True, default=dict)),
                        ('item_count', models.PositiveIntegerField(default=0)),
                        ('build_status', models.CharField(choices=[('none', 'not built'), ('queued', 'queued'), ('running', 'running'), ('done', 'done'), ('failed', 'failed')], default='none', max_length=10)),
                        ('build_progress', models.PositiveSmallIntegerField(default=0, help_text='Percent')),
                        ('build_error', models.TextField(blank=True)),
                        ('built_at', models.DateTimeField(blank=True, null=True)),
                        ('approved_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('published_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'datasets_release',
                        'ordering': ['name', '-version_major', '-version_minor', '-version_patch'],
                    },
                ),
                migrations.CreateModel(
                    name='ReleaseFile',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100)),
                        ('size', models.PositiveBigIntegerField()),
                        ('sha256', models.CharField(max_length=64)),
                        ('items', models.PositiveIntegerField(default=0, help_text='Records (lines or CSV rows) in the file')),
                        ('path', models.CharField(help_text='Relative to MEDIA_ROOT', max_length=500)),
                        ('release', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='files', to='releases.release')),
                    ],
                    options={
                        'db_table': 'datasets_releasefile',
                        'ordering': ['release_id', 'name'],
                    },
                ),
                migrations.CreateModel(
                    name='ReleaseItem',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('position', models.PositiveIntegerField()),
                        ('key', models.CharField(help_text='Stable item key, e.g. wsc273:12 or wsc273:12.3', max_length=100)),
                        ('payload', models.JSONField(help_text='Canonical item record (what the files are built from)')),
                        ('digest', models.CharField(help_text='SHA-256 of the canonical payload JSON', max_length=64)),
                        ('release', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='items', to='releases.release')),
                    ],
                    options={
                        'db_table': 'datasets_releaseitem',
                        'ordering': ['release_id', 'position'],
                    },
                ),
                migrations.AddIndex(
                    model_name='release',
                    index=models.Index(fields=['status'], name='datasets_re_status_9a701c_idx'),
                ),
                migrations.AddConstraint(
                    model_name='release',
                    constraint=models.UniqueConstraint(fields=('name', 'version'), name='release_unique_version'),
                ),
                migrations.AddConstraint(
                    model_name='releasefile',
                    constraint=models.UniqueConstraint(fields=('release', 'name'), name='releasefile_unique_name'),
                ),
                migrations.AddConstraint(
                    model_name='releaseitem',
                    constraint=models.UniqueConstraint(fields=('release', 'position'), name='releaseitem_unique_position'),
                ),
                migrations.AddConstraint(
                    model_name='releaseitem',
                    constraint=models.UniqueConstraint(fields=('release', 'key'), name='releaseitem_unique_key'),
                ),
            ],
        ),
        migrations.RunPython(move_content_types, content_types_back),
    ]
