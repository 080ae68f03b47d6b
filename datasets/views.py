from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from config.roles import user_is_curator


@login_required
def import_upload(request: HttpRequest) -> HttpResponse:
    if not user_is_curator(request.user):
        raise PermissionDenied
    return render(request, "datasets/import_upload.html")
