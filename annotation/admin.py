"""Annotation admin."""
