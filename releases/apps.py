from django.apps import AppConfig


class ReleasesConfig(AppConfig):
    name = "releases"
    verbose_name = "Releases"
    curator_admin = True  # core.roles.curator_admin_access_grant
