"""Read a docstring (Google, NumPy, reST or Epydoc) into a description and per-parameter text."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any

__all__: list[str] = []


@dataclass(frozen=True, slots=True)
class ParsedDocstring:
    """What a tool takes from its docstring.

    ``description`` is the summary and body, then the Returns text; the Args, Raises,
    Examples and Yields sections are left out. ``params`` maps a documented parameter
    name to its text, in docstring order.
    """

    description: str = ""
    params: dict[str, str] = field(default_factory=dict)


_EMPTY = ParsedDocstring()


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Parse ``doc`` with docstring-parser, detecting its style."""
    if not doc or not doc.strip():
        return _EMPTY
    import docstring_parser  # imported when a spec is first built, not with the package

    text = _clean(doc)
    style = _style(text, docstring_parser.DocstringStyle)
    if style is None:  # no sections: the whole text is the description
        return ParsedDocstring(description=text.strip())
    try:
        # docstring-parser cleans the text again, and ``cleandoc`` treats the first line
        # apart: a text that opens with a section title ("Args:") would lose the
        # indentation of its entries. After a blank first line, cleaning changes nothing.
        parsed = docstring_parser.parse("\n" + text, style=style)
    except docstring_parser.ParseError:
        # A docstring that is not well-formed in any style is still a fine description.
        return ParsedDocstring(description=text.strip())

    pieces = [p.strip() for p in (parsed.short_description, parsed.long_description) if p]
    returns = parsed.returns
    if returns is not None and not returns.is_generator and returns.description:
        pieces.append(f"Returns: {_one_paragraph(returns.description)}")
    params = {
        p.arg_name: _one_paragraph(p.description)
        for p in parsed.params
        if p.description and p.description.strip()
    }
    return ParsedDocstring(description="\n\n".join(pieces), params=params)


def _clean(doc: str) -> str:
    """``inspect.cleandoc``, keeping a section that opens the docstring readable.

    When a title ("Returns:") follows the opening quotes on the same line, ``cleandoc``
    cannot see that the lines below it are indented under it, and moves them to the left
    edge, where they read as text after the section. When no other title is at the left edge,
    every following line belongs to that first section: indent it again.
    """
    text = inspect.cleandoc(doc)
    first, _, rest = text.partition("\n")
    if not rest or not _GOOGLE.fullmatch(first):
        return text
    flush = [line for line in rest.splitlines() if line and not line[0].isspace()]
    if any(_GOOGLE.fullmatch(line) for line in flush):
        return text
    indented = "\n".join(f"    {line}" if line else line for line in rest.splitlines())
    return f"{first}\n{indented}"


_GOOGLE = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Returns|Return|Raises|Yields|"
    r"Examples?|Attributes|Notes?):\s*$",
    re.MULTILINE,
)
_NUMPY = re.compile(r"^\s*-{3,}\s*$", re.MULTILINE)
_REST = re.compile(
    r"^\s*:(param|parameter|arg|argument|key|keyword|type|returns?|rtype|raises?)\b", re.MULTILINE
)
_EPYDOC = re.compile(r"^\s*@(param|type|return|rtype|raise)\b", re.MULTILINE)


def _style(text: str, styles: Any) -> Any:
    """Pick the style from cheap markers (None: no sections at all); letting
    docstring-parser try every style costs several times more."""
    if _NUMPY.search(text):
        return styles.NUMPYDOC
    if _REST.search(text):
        return styles.REST
    if _EPYDOC.search(text):
        return styles.EPYDOC
    if _GOOGLE.search(text):
        return styles.GOOGLE
    return None


def _one_paragraph(text: str) -> str:
    """Join a wrapped docstring entry into single spaced lines, keeping blank-line breaks."""
    paragraphs = [
        " ".join(line.strip() for line in block.splitlines()) for block in text.split("\n\n")
    ]
    return "\n\n".join(p for p in paragraphs if p)
