"""Evaluation admin."""
