"""MkDocs hook: docstrings name things Sphinx's way (:class:`Tool`); show just the name.

mkdocstrings renders ``:class:`Tool``` as the text ":class:" followed by the code
``Tool``; this drops the role prefix from the generated HTML.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:class|func|meth|attr|data|exc|mod|obj|py:\w+):(?=<code>)")


def on_page_content(html: str, **kwargs: Any) -> str:
    """Drop Sphinx role prefixes in front of inline code."""
    return _ROLE.sub("", html)
