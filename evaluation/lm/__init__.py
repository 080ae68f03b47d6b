"""The language-model stack, without Django: loading (modeling), the loaded-model cache,
the registry of the models the server offers, features, generation, and the scorers.

Nothing under this package imports Django, DRF or Celery (the layer contract in
pyproject.toml forbids it; tests/test_architecture.py checks it).
"""
