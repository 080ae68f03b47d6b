"""Evaluation runs (DESIGN section 8). Filled in by the evaluation issue."""
