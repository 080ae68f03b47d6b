"""A release's README.md card as HTML for its page (pure: no Django).

CommonMark with tables (markdown-it-py), raw HTML off (written as text), images off (a card
never makes the browser fetch anything), and only links to the web (http, https, mailto)
or to an anchor kept: a relative link into a source tree the reader does not have becomes
its text. The YAML front matter (Hugging Face's metadata) is not shown as text; the page
lists the configs it declares instead.
"""

from markdown_it.token import Token

from core import markdown

_MD = markdown.parser()
_KEPT = ("http://", "https://", "mailto:", "#")


def split_front_matter(text: str) -> tuple[str, str]:
    """(front matter, body): the YAML between a first line ``---`` and the next ``---``."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end >= 0:
            return text[4:end], text[end + 5 :]
    return "", text


def _drop_foreign_links(tokens: list[Token]) -> None:
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        kept: list[Token] = []
        dropped = 0
        for child in token.children:
            if child.type == "link_open" and not str(child.attrGet("href") or "").startswith(_KEPT):
                dropped += 1
                continue
            if child.type == "link_close" and dropped:
                dropped -= 1
                continue
            kept.append(child)
        token.children = kept


def card_html(text: str) -> str:
    """The card's body as HTML, safe to put in a page as is."""
    _, body = split_front_matter(text)
    tokens = _MD.parse(body)
    _drop_foreign_links(tokens)
    return markdown.render(_MD, tokens)
