"""A run's lifecycle: ``create`` (validate, store queued), ``execute`` (lease, score through
the data set's evaluator, write the run folder), ``progress`` (the lease and the progress
columns the page polls), ``errors``. The per-data-set part is ``evaluation.evaluators``."""
