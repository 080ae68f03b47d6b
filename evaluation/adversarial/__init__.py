"""Adversarial writing (issue 27, docs/adversarial.md): models in the loop while people write.

The rows (rounds, items, tries, re-scores) are annotation's models
(``annotation.models.AdversarialRound`` ...), so that validation campaigns and releases,
which sit below evaluation, can read them; what needs a language model (the verdict of a
try, the re-scoring of earlier rounds' items), the writer's page actions and the figures
live here.
"""
