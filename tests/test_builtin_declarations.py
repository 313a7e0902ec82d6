"""Built-in tools declared once: each provider's form, checked against that provider's SDK types."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from anthropic.types import (
    CodeExecutionTool20250825Param,
    WebFetchTool20250910Param,
    WebSearchTool20250305Param,
)
from google.genai import types as genai_types
from openai.types.responses import FileSearchToolParam, ToolParam, WebSearchToolParam
from pydantic import TypeAdapter

from tooling.builtin import (
    BuiltinTool,
    CodeExecution,
    FileSearch,
    WebFetch,
    WebSearch,
    google_search,
)


def _quiet(call: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


def _strict(param_type: Any, value: dict[str, Any]) -> None:
    """``value`` has only keys ``param_type`` declares, with values of its types."""
    TypeAdapter(param_type).validate_python(value, strict=False)
    assert set(value) <= set(param_type.__annotations__), set(value) - set(
        param_type.__annotations__
    )


def test_web_search_per_provider() -> None:
    search = WebSearch()
    gemini = search.to_gemini()
    assert isinstance(gemini, genai_types.Tool)
    assert gemini.google_search is not None and gemini.function_declarations is None
    assert search.to_openai() == {"type": "web_search"}
    _strict(WebSearchToolParam, search.to_openai())
    assert search.to_anthropic() == {"type": "web_search_20250305", "name": "web_search"}
    _strict(WebSearchTool20250305Param, search.to_anthropic())
    assert search.diagnostics == []


def test_web_search_settings_and_what_each_provider_drops() -> None:
    search = WebSearch(max_uses=3, allowed_domains=["docs.python.org"])
    with pytest.warns(UserWarning, match="gemini has no setting for 'max_uses'"):
        search.to_gemini()
    openai = _quiet(search.to_openai)
    assert openai == {"type": "web_search", "filters": {"allowed_domains": ["docs.python.org"]}}
    _strict(WebSearchToolParam, openai)
    anthropic = search.to_anthropic()
    assert anthropic["max_uses"] == 3 and anthropic["allowed_domains"] == ["docs.python.org"]
    _strict(WebSearchTool20250305Param, anthropic)
    lossy = {(d.code, d.parameter) for d in search.diagnostics}
    assert lossy == {
        ("export.lossy", "max_uses"),
        ("export.lossy", "allowed_domains"),
    }

    blocked = WebSearch(blocked_domains=["example.com"])
    gemini_search = blocked.to_gemini().google_search
    assert gemini_search is not None and gemini_search.exclude_domains == ["example.com"]
    assert _quiet(blocked.to_anthropic)["blocked_domains"] == ["example.com"]
    _quiet(blocked.to_openai)
    assert [d.parameter for d in blocked.diagnostics] == ["blocked_domains"]


def test_anthropic_takes_one_domain_list_and_says_which_it_dropped() -> None:
    both = WebSearch(allowed_domains=["a.org"], blocked_domains=["b.org"])
    tool = _quiet(both.to_anthropic)
    assert "blocked_domains" not in tool and tool["allowed_domains"] == ["a.org"]
    assert any(
        d.parameter == "blocked_domains" and "anthropic" in d.message for d in both.diagnostics
    )


def test_code_execution_per_provider() -> None:
    code = CodeExecution()
    assert code.to_gemini().code_execution is not None
    openai = code.to_openai()
    assert openai == {"type": "code_interpreter", "container": {"type": "auto"}}
    TypeAdapter(ToolParam).validate_python(openai)
    assert code.to_anthropic() == {"type": "code_execution_20250825", "name": "code_execution"}
    _strict(CodeExecutionTool20250825Param, code.to_anthropic())


def test_web_fetch_has_no_openai_form() -> None:
    fetch = WebFetch(max_uses=2)
    assert _quiet(fetch.to_gemini).url_context is not None
    assert fetch.to_anthropic() == {
        "type": "web_fetch_20250910",
        "name": "web_fetch",
        "max_uses": 2,
    }
    _strict(WebFetchTool20250910Param, fetch.to_anthropic())
    assert not fetch.supported_by("openai")
    with pytest.raises(ValueError, match="has no openai form"):
        fetch.to_openai()


def test_file_search_per_provider() -> None:
    files = FileSearch(["vs_123"], max_results=4)
    gemini = files.to_gemini().file_search
    assert gemini is not None and gemini.file_search_store_names == ["vs_123"]
    assert gemini.top_k == 4
    openai = files.to_openai()
    assert openai == {"type": "file_search", "vector_store_ids": ["vs_123"], "max_num_results": 4}
    _strict(FileSearchToolParam, openai)
    assert not files.supported_by("anthropic")
    with pytest.raises(ValueError, match="no anthropic form"):
        files.to_anthropic()
    with pytest.raises(ValueError, match="store_ids"):
        FileSearch("vs_123")


def test_google_search_is_a_plain_web_search() -> None:
    assert isinstance(google_search, WebSearch)
    assert google_search.name == "web_search"
    assert google_search.to_openai() == {"type": "web_search"}


@pytest.mark.parametrize("builtin", [WebSearch(), CodeExecution(), WebFetch(), FileSearch(["s"])])
async def test_a_scheduler_never_runs_a_builtin(builtin: BuiltinTool) -> None:
    from tooling import Scheduler, ToolCall

    [response] = await Scheduler([builtin]).dispatch(
        [ToolCall(id="c1", name=builtin.name, args={})]
    )
    assert response.response["status"] == "error"
    assert response.response["error"]["code"] == "tool.unsupported"
    assert builtin.read_only and builtin.concurrency_safe
    with pytest.raises(ValueError, match="MCP"):
        builtin.to_mcp()


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="max_uses"):
        WebSearch(max_uses=0)
    with pytest.raises(ValueError, match="max_uses"):
        WebFetch(max_uses=0)
