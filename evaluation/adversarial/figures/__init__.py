"""The figures of adversarial writing (issue 27, docs/adversarial.md): per writer,
round, model and collection, as pandas frames (``frames``, pure) read from the rows
(``selectors``), on a page with charts and CSV/JSON downloads (``views``, ``urls``) and in
the API (``api``)."""
