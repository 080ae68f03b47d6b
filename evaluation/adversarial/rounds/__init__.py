"""Starting a round of adversarial writing (issue 27): the curator's page that names the
models in the loop from the server's registry (which the annotation layer may not read),
with their SHA-256, and calls ``annotation.pipelines.rounds.adversarial_round_create``."""
