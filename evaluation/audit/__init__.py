"""Artifact audit of a data set on frozen features (DESIGN section 11).

The pure part (no Django): ``data`` checks the inputs and standardises features (no
torch), ``linear`` trains many logistic regressions at once (torch, imported by the
others inside their functions), ``aflite`` is Le Bras et al.'s Algorithm 1, ``reference``
the same algorithm as a plain scikit-learn loop (the equivalence tests and the bench
compare them), ``baselines`` the partial-input baselines with grouped folds,
``cartography`` Swayamdipta et al.'s data maps. ``errors`` holds the refusal every one of
them raises on bad input. The web layer (features job, models, pages) sits beside them.

The modules the web process imports (``aflite``, ``baselines``, ``cartography``,
``data``, ``errors``) import no torch at module level: their result types load in a
process without it. docs/filtering.md describes the algorithms and their defaults.
"""
