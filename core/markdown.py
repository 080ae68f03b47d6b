"""The one Markdown dialect of Winnow's docs pages and release cards (pure: no Django).

CommonMark with tables (markdown-it-py), raw HTML off (written as text), images off (a
page never makes the browser fetch anything). A table column's alignment (``---:``,
``:---:``, ``:---``) becomes a class, ``align-right``, ``align-center`` or ``align-left``
(static/css/winnow.css), instead of the inline ``style`` attribute markdown-it writes,
which the content security policy refuses (config/settings.py, ``style-src``).
"""

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

_ALIGN = re.compile(r"^text-align:(left|center|right)$")


def parser() -> MarkdownIt:
    """A new parser of the dialect."""
    return MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")


def render(md: MarkdownIt, tokens: list[Token]) -> str:
    """HTML of parsed ``tokens``, with table alignment as classes (module note)."""
    for token in tokens:
        if token.type in ("th_open", "td_open"):
            style = token.attrGet("style")
            if style is not None:
                match = _ALIGN.match(str(style))
                token.attrs.pop("style")
                if match:
                    token.attrSet("class", f"align-{match.group(1)}")
    return str(md.renderer.render(tokens, md.options, {}))
