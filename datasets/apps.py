from django.apps import AppConfig


class DatasetsConfig(AppConfig):
    name = "datasets"
    verbose_name = "Data sets"
    curator_admin = True  # core.roles.curator_admin_access_grant
