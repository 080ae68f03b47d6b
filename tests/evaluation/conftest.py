"""Fixtures shared by the evaluation tests: the tiny random models of each kind
(tests/evaluation/tiny_models.py), a published WSC release, two runs on it, a models
folder holding a tiny masked LM, and the native kernels."""

import os

import pytest

from evaluation.services import evaluation_run, evaluation_run_create
from tests.evaluation.audit_helpers import audit_models_dir, audit_registry  # noqa: F401  (the audit tests' fixtures)
from tests.evaluation.cloze_models import build_masked
from tests.evaluation.tiny_models import (  # noqa: F401  (session fixtures: tiny random models)
    tiny_causal,
    tiny_causal_path,
    tiny_gpt2,
    tiny_gpt2_path,
    tiny_masked,
    tiny_masked_path,
)
from tests.releases.factories import make_schemas, published_release


@pytest.fixture
def release(tmp_path, settings, curator, django_capture_on_commit_callbacks):
    """A published WSC release of four schemas, as NAME@VERSION."""
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(4)
    published = published_release(django_capture_on_commit_callbacks, user=curator, name="wsc-mini")
    return f"{published.name}@{published.version}"


@pytest.fixture
def two_runs(tmp_path, release, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    first = evaluation_run(run=evaluation_run_create(release=str(release), method="first"))
    majority = evaluation_run(run=evaluation_run_create(release=str(release), method="random", seed=1))
    return first, majority


@pytest.fixture(scope="module")
def models_folder(tmp_path_factory):
    """A models folder (WINNOW_MODELS_DIR) with one tiny masked LM, ``cloze-bert``."""
    folder = tmp_path_factory.mktemp("models")
    build_masked(folder / "cloze-bert")
    return folder


@pytest.fixture(scope="module")
def native():
    """The native kernels (evaluation/lm/kernels.cpp), built when needed: where they cannot
    be built (no g++) the test skips, except in CI (WINNOW_REQUIRE_SERVICES=1), where
    that fails."""
    from evaluation.lm import kernels

    try:
        kernels.build()
    except kernels.KernelBuildError as exc:
        message = f"the native kernels cannot be built here: {exc}"
        if os.environ.get("WINNOW_REQUIRE_SERVICES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    module = kernels.get()
    assert module is not None, "built, but not loaded: is WINNOW_NATIVE_KERNELS off?"
    return module
