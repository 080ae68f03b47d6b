"""The core app has no tables; this module lets Django send it post_migrate (role groups)."""
