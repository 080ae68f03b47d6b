"""A models folder (WINNOW_MODELS_DIR) holding tiny random models built in the test: the
registry names the round's models are chosen by."""

from pathlib import Path

import pytest

from tests.evaluation.tiny_models import build_tiny_causal, build_tiny_masked


@pytest.fixture(scope="session")
def adversarial_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("adversarial-models")
    build_tiny_causal(folder / "tiny-llama", arch="llama")
    build_tiny_masked(folder / "tiny-bert")
    return folder


@pytest.fixture
def models_dir(settings, adversarial_models: Path) -> Path:
    settings.WINNOW_MODELS_DIR = str(adversarial_models)
    return adversarial_models
