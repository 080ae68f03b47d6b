"""Datasets admin."""
