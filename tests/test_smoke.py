import pytest
from django.contrib.auth.models import Group


@pytest.mark.django_db
def test_migrations_create_the_three_role_groups():
    assert set(Group.objects.values_list("name", flat=True)) >= {"annotator", "curator", "researcher"}


@pytest.mark.django_db
def test_home_page_sends_anonymous_users_to_login(client):
    response = client.get("/")
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


@pytest.mark.django_db
def test_api_schema_is_served_to_logged_in_users(client, researcher):
    client.force_login(researcher)
    response = client.get("/api/schema/")
    assert response.status_code == 200
    assert b"openapi" in response.content
