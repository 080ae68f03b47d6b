"""Template filters for the plain words of code names (core.words):
``{{ key|words }}`` prints "Fleiss' kappa" for ``fleiss_kappa``."""

from django import template

from core import words as plain

register = template.Library()


@register.filter(name="words")
def words(code: object) -> str:
    return plain.words(str(code))


@register.filter(name="figure")
def figure(value: object) -> object:
    """A number of a table cell to a sensible precision (4 significant digits); other
    values as they are, "—" for none."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return plain.number(value, 4)
    return value
