"""Memory of declared tools, for one side, printed as JSON (run by ``bench_declarations.py``
in fresh interpreters, so nothing the other side loaded is counted)::

    <project venv>/bin/python benchmarks/_declarations_side.py ours 500
    <project venv>/bin/python benchmarks/_declarations_side.py genai 500
    <adk venv>/bin/python     benchmarks/_declarations_side.py adk 500

Each side declares ``N`` tools from freshly compiled copies of the six functions of
``_functions.py`` (cycled) and keeps them: ours ``tool(f).to_gemini()``, google-genai's
``FunctionDeclaration.from_callable_with_api_option(callable=f, use_json_schema=True)``,
google-adk's ``FunctionTool(f)._get_declaration()``. The figure is tracemalloc's net
growth over the declarations (the functions themselves are made before it starts).
"""

from __future__ import annotations

import gc
import json
import sys
import tracemalloc
import warnings
from collections.abc import Callable
from typing import Any

import _functions as F


def _declare(impl: str) -> Callable[[Any], Any]:
    if impl == "ours":
        from tooling import tool

        def ours(func: Any) -> Any:
            made = tool(func)
            return made, made.to_gemini()

        return ours
    if impl == "genai":
        from google.genai import types

        def genai(func: Any) -> Any:
            return types.FunctionDeclaration.from_callable_with_api_option(
                callable=func, use_json_schema=True
            )

        return genai
    from google.adk.tools import FunctionTool

    def adk(func: Any) -> Any:
        made = FunctionTool(func)
        return made, made._get_declaration()

    return adk


def main() -> None:
    impl, count = sys.argv[1], int(sys.argv[2])
    warnings.simplefilter("ignore")
    declare = _declare(impl)
    keys = list(F.FUNCTIONS)
    for key in keys:  # imports and one-time caches, outside the measurement
        declare(F.fresh(key))
    funcs = [F.fresh(keys[i % len(keys)]) for i in range(count)]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = [declare(func) for func in funcs]
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    print(json.dumps({"impl": impl, "tools": len(kept), "bytes": grown}))


if __name__ == "__main__":
    main()
