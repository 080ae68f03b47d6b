"""Agreement and annotation quality (DESIGN section 6): the statistics (``stats``, pure),
what a campaign's judgments give (``services``), and the curator's pages (``views``)."""
