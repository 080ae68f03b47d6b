"""Versioned, curator-approved, immutable releases (DESIGN section 7, issue 5)."""
