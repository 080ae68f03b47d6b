"""Generation as a job on the ``models`` queue (issue 13): a causal model's candidate reasons
for Winograd questions, or a finished run's ComVE explanations turned into a plausibility
campaign. Services, views and forms of the feature live here; the pure text part is
``evaluation.lm.generation``."""
