"""Built-in tools: search and code execution run by the model's provider, declared once;
code execution on this machine; retrieval over a document store.

- :class:`WebSearch`, :class:`CodeExecution`, :class:`WebFetch`, :class:`FileSearch` (and
  ``google_search``): provider-run tools, each mapped to Gemini, OpenAI Responses and
  Anthropic in the form their APIs take (``to_gemini``, ``to_openai``, ``to_anthropic``).
  A scheduler never runs them; where the agent's model lacks one, the loop offers its
  ``fallback``, drops it (``optional=True``) or stops with ``tool.unsupported``.
- :class:`LocalCodeExecution`: ``run_python(code)`` in a fresh, resource-bounded process
  (not a security boundary).
- :func:`retriever_tool` over any ``search(query, k)``; :class:`SqliteFtsRetriever` and
  :class:`PostgresFtsRetriever`.
"""

from ._declared import (
    BuiltinTool,
    CodeExecution,
    FileSearch,
    WebFetch,
    WebSearch,
    google_search,
)
from ._fts import PostgresFtsRetriever, SqliteFtsRetriever
from ._local_code import LocalCodeExecution
from ._retrieval import Document, Retriever, retriever_tool

__all__ = [
    "BuiltinTool",
    "CodeExecution",
    "Document",
    "FileSearch",
    "LocalCodeExecution",
    "PostgresFtsRetriever",
    "Retriever",
    "SqliteFtsRetriever",
    "WebFetch",
    "WebSearch",
    "google_search",
    "retriever_tool",
]
