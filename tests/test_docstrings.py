"""Tool descriptions and parameter descriptions read from docstrings of every style."""

import warnings
from typing import Annotated

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field

from tooling import FunctionTool, tool
from tooling._function.docstrings import parse_docstring

LONG_RUNNING_SENTENCE = (
    "This tool runs for a while: once it has answered with a pending status, do not call it "
    "again for the same request; wait for its result."
)

EXPECTED = "Summary line.\n\nBody paragraph one\ncontinues here.\n\nReturns: The answer."


def param_descriptions(t: FunctionTool) -> dict[str, str | None]:
    return {k: v.get("description") for k, v in t.parameters_json_schema["properties"].items()}


def google(a: int, b: str) -> int:
    """Summary line.

    Body paragraph one
    continues here.

    Args:
        a: The a value,
            wrapped onto a second line.
        b: The b value.

    Returns:
        The answer.

    Raises:
        ValueError: When RAISES_TEXT.

    Examples:
        >>> google(1, "EXAMPLE_TEXT")
        1
    """
    return a


def numpy_style(a: int, b: str) -> int:
    """Summary line.

    Body paragraph one
    continues here.

    Parameters
    ----------
    a : int
        The a value,
        wrapped onto a second line.
    b : str
        The b value.

    Returns
    -------
    int
        The answer.

    Raises
    ------
    ValueError
        When RAISES_TEXT.

    Examples
    --------
    >>> numpy_style(1, "EXAMPLE_TEXT")
    1
    """
    return a


def rest_style(a: int, b: str) -> int:
    """Summary line.

    Body paragraph one
    continues here.

    :param a: The a value,
        wrapped onto a second line.
    :param b: The b value.
    :returns: The answer.
    :raises ValueError: When RAISES_TEXT.
    """
    return a


def epydoc_style(a: int, b: str) -> int:
    """Summary line.

    Body paragraph one
    continues here.

    @param a: The a value,
        wrapped onto a second line.
    @param b: The b value.
    @return: The answer.
    @raise ValueError: When RAISES_TEXT.
    """
    return a


STYLES = [google, numpy_style, rest_style, epydoc_style]


@pytest.mark.parametrize("func", STYLES, ids=lambda f: f.__name__)
def test_description_is_summary_body_and_returns(func) -> None:
    t = tool(func)
    assert t.description == EXPECTED


@pytest.mark.parametrize("func", STYLES, ids=lambda f: f.__name__)
def test_sections_left_out_of_description(func) -> None:
    description = tool(func).description
    for unwanted in (
        "RAISES_TEXT",
        "EXAMPLE_TEXT",
        "ValueError",
        "The a value",
        "The b value",
        "Args",
        "Parameters",
        "Raises",
        "Examples",
        ":param",
        "@param",
    ):
        assert unwanted not in description


@pytest.mark.parametrize("func", STYLES, ids=lambda f: f.__name__)
def test_parameter_text_reaches_schema(func) -> None:
    t = tool(func)
    assert param_descriptions(t) == {
        "a": "The a value, wrapped onto a second line.",
        "b": "The b value.",
    }
    assert t.diagnostics == []


def test_summary_only() -> None:
    @tool
    def f(x: int) -> int:
        """Just a summary."""
        return x

    assert f.description == "Just a summary."


def test_no_docstring_gives_empty_description() -> None:
    @tool
    def f(x: int) -> int:
        return x

    assert f.description == ""


def test_indented_multi_paragraph_body_is_dedented() -> None:
    @tool
    def f(x: int) -> int:
        """Summary.

        First paragraph.

        Second paragraph
            with an indented line.

        Args:
            x: The x.
        """
        return x

    assert f.description == (
        "Summary.\n\nFirst paragraph.\n\nSecond paragraph\n    with an indented line."
    )


def test_yields_section_left_out() -> None:
    @tool
    def gen(n: int):
        """Count up.

        Args:
            n: How far.

        Yields:
            Each number YIELDS_TEXT.
        """
        yield from range(n)

    assert gen.description == "Count up."
    assert param_descriptions(gen) == {"n": "How far."}


def test_numpy_yields_section_left_out() -> None:
    @tool
    def gen(n: int):
        """Count up.

        Parameters
        ----------
        n : int
            How far.

        Yields
        ------
        int
            Each number YIELDS_TEXT.
        """
        yield from range(n)

    assert gen.description == "Count up."
    assert param_descriptions(gen) == {"n": "How far."}


def test_returns_without_text_adds_nothing() -> None:
    @tool
    def f(x: int) -> int:
        """Summary.

        :param x: The x.
        :rtype: int
        """
        return x

    assert f.description == "Summary."


def test_explicit_description_overrides_docstring() -> None:
    @tool(description="Explicit text.")
    def f(a: int) -> int:
        """Docstring summary.

        Args:
            a: The a.
        """
        return a

    assert f.description == "Explicit text."
    # parameter text still comes from the docstring
    assert param_descriptions(f) == {"a": "The a."}


def test_explicit_empty_description_overrides_docstring() -> None:
    @tool(description="")
    def f(a: int) -> int:
        """Docstring summary."""
        return a

    assert f.description == ""


def test_function_tool_description_option() -> None:
    t = FunctionTool(google, description="Other.")
    assert t.description == "Other."
    assert tool(google).description == EXPECTED  # the same function, unaffected


def test_long_running_appends_sentence() -> None:
    @tool(long_running=True)
    def f(a: int) -> int:
        """Start a job.

        Args:
            a: The a.

        Returns:
            A job id.
        """
        return a

    assert f.description == f"Start a job.\n\nReturns: A job id.\n\n{LONG_RUNNING_SENTENCE}"
    assert f.description.endswith(LONG_RUNNING_SENTENCE)


def test_long_running_appends_sentence_after_explicit_description() -> None:
    @tool(long_running=True, description="Start a job.")
    def f(a: int) -> int:
        """Ignored."""
        return a

    assert f.description.startswith("Start a job.")
    assert f.description.endswith(LONG_RUNNING_SENTENCE)
    assert f.description.count(LONG_RUNNING_SENTENCE) == 1
    assert "Ignored" not in f.description


def test_long_running_without_docstring_is_the_sentence() -> None:
    @tool(long_running=True)
    def f(a: int) -> int:
        return a

    assert f.description == LONG_RUNNING_SENTENCE


def test_long_running_generator_description() -> None:
    @tool(long_running=True)
    def f(a: int):
        """Stream progress."""
        yield a

    assert f.description == f"Stream progress.\n\n{LONG_RUNNING_SENTENCE}"


def test_not_long_running_has_no_sentence() -> None:
    assert LONG_RUNNING_SENTENCE not in tool(google).description


def test_docstring_and_annotated_descriptions_combine() -> None:
    @tool
    def f(a: Annotated[int, "From annotation."], b: Annotated[int, Field(description="F.")]) -> int:
        """Summary.

        Args:
            a: From annotation.
        """
        return a

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert param_descriptions(f) == {"a": "From annotation.", "b": "F."}


def test_malformed_docstring_is_still_a_description() -> None:
    @tool
    def f(a: int) -> int:
        """Does a thing: with colons and odd formatting
        ---
        :param
        """
        return a

    assert f.description.startswith("Does a thing: with colons and odd formatting")


def test_parameter_with_multi_paragraph_description() -> None:
    @tool
    def f(a: int) -> int:
        """Summary.

        Args:
            a: First line
                continued.
        """
        return a

    assert param_descriptions(f) == {"a": "First line continued."}


def test_callable_object_description_from_call_then_class() -> None:
    class WithCallDoc:
        """Class doc."""

        def __call__(self, x: int) -> int:
            """Call doc.

            Args:
                x: The x.
            """
            return x

    class ClassDocOnly:
        """Class doc.

        Args:
            x: The x from class.
        """

        def __call__(self, x: int) -> int:
            return x

    a = FunctionTool(WithCallDoc())
    b = FunctionTool(ClassDocOnly())
    assert a.description == "Call doc."
    assert param_descriptions(a) == {"x": "The x."}
    assert b.description == "Class doc."
    assert param_descriptions(b) == {"x": "The x from class."}


# -- docstrings that are only sections ------------------------------------------------------------


def test_docstring_that_is_only_an_args_section() -> None:
    @tool
    def f(foo: int, bar: str) -> str:
        """
        Args:
            foo: The foo thing.
            bar: The bar thing,
                on two lines.
        """
        return bar

    assert f.description == ""
    assert param_descriptions(f) == {"foo": "The foo thing.", "bar": "The bar thing, on two lines."}


def test_docstring_that_is_only_a_returns_section() -> None:
    @tool
    def f(foo: int) -> str:
        """Returns:
        str: The result as a string.
        """
        return str(foo)

    assert f.description == "Returns: The result as a string."


_WORDS = st.lists(
    st.sampled_from(["alpha", "beta", "gamma", "delta", "the", "value", "of", "x"]),
    min_size=1,
    max_size=5,
).map(lambda words: " ".join(words).capitalize() + ".")


def _render(
    style: str, summary: str | None, params: dict[str, str], returns: str | None, opening: bool
) -> str:
    """A docstring as it sits in a function body (indented by four), in ``style``."""
    lines: list[str] = []
    if summary:
        lines += [summary, ""]
    if style == "google":
        if params:
            lines += ["Args:", *(f"    {n}: {t}" for n, t in params.items()), ""]
        if returns:
            lines += ["Returns:", f"    str: {returns}", ""]
    elif style == "numpy":
        if params:
            lines += ["Parameters", "----------"]
            for n, t in params.items():
                lines += [f"{n} : int", f"    {t}"]
            lines += [""]
        if returns:
            lines += ["Returns", "-------", "str", f"    {returns}", ""]
    elif style == "rest":
        lines += [f":param {n}: {t}" for n, t in params.items()]
        if returns:
            lines += [f":returns: {returns}"]
    else:
        lines += [f"@param {n}: {t}" for n, t in params.items()]
        if returns:
            lines += [f"@return: {returns}"]
    while lines and not lines[-1]:
        lines.pop()
    body = "\n".join(f"    {line}" if line else "" for line in lines)
    # Either the text starts right after the quotes, or on the next line.
    return ("\n" + body + "\n    ") if opening else (body.lstrip() + "\n    ")


@given(
    style=st.sampled_from(["google", "numpy", "rest", "epydoc"]),
    summary=st.none() | _WORDS,
    params=st.dictionaries(st.sampled_from(["a", "b", "c"]), _WORDS, max_size=3),
    returns=st.none() | _WORDS,
    opening=st.booleans(),
)
def test_any_mix_of_summary_args_and_returns_is_read(
    style: str, summary: str | None, params: dict[str, str], returns: str | None, opening: bool
) -> None:
    doc = _render(style, summary, params, returns, opening)
    parsed = parse_docstring(doc)
    expected = [p for p in (summary, returns and f"Returns: {returns}") if p]
    assert parsed.description == "\n\n".join(expected), doc
    assert parsed.params == params, doc
