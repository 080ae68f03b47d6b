"""Cloze-test analysis of a language model (Qasemi et al.; DESIGN section 8).

``text`` splits statements into words and finds the differing span of a pair, ``math``
holds the equations (no Django, no torch), ``candidates`` asks a masked or causal model
for replacements, ``embeddings`` gives word vectors, ``experiments`` runs experiments 1
(dispersion) and 2 (confidence); the violin plot's geometry is ``core.charts``. Beside the
pure part, the web layer: ``services`` (runs and their results), ``selectors``,
``permissions``, ``views`` and ``urls``.
"""
