"""Four tools of a small shop assistant, and what each model provider is shown of them.

Run it with ``python -m examples.tool_schemas``. For every tool it prints the
description, the schema each exporter produces (Gemini, Gemini legacy, OpenAI, OpenAI
strict, Anthropic, MCP) and whatever an export could not express; then it runs a valid
call, a call with bad arguments (and the error response the model would be shown), and
streams a long-running tool's updates.

No model and no network are involved: the tools return made-up data.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Callable, Generator
from datetime import date
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from tooling import BaseTool, SimpleToolContext, ToolContext, ToolError, tool

# -- the tools ---------------------------------------------------------------------------


@tool(read_only=True, concurrency_safe=True, idempotent=True)
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, Any]:
    """Get the current weather in a city.

    Args:
        city: The city name, e.g. "Lisbon" or "São Paulo".
        unit: The temperature unit of the answer.

    Returns:
        The temperature, the unit and a one-word sky condition.
    """
    celsius = 12 + sum(map(ord, city.lower())) % 18  # made-up but stable per city
    temperature = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32, 1)
    return {"city": city, "temperature": temperature, "unit": unit, "sky": "clear"}


class OrderStatus(StrEnum):
    PENDING = "pending"
    SHIPPED = "shipped"
    DELIVERED = "delivered"
    CANCELLED = "cancelled"


class DateRange(BaseModel):
    """An inclusive range of calendar days."""

    start: date
    end: date | None = Field(default=None, description="Last day; open-ended when omitted.")


class OrderFilter(BaseModel):
    """What to look for among a customer's orders."""

    customer_email: str = Field(description="The customer's e-mail address.")
    status: list[OrderStatus] = Field(
        default_factory=list, description="Keep orders in any of these states; all when empty."
    )
    placed: DateRange | None = Field(default=None, description="When the order was placed.")


class Order(BaseModel):
    order_id: str
    status: OrderStatus
    placed_on: date
    total_eur: float


_ORDERS = [
    Order(order_id="A-1001", status="delivered", placed_on="2024-03-02", total_eur=42.5),
    Order(order_id="A-1002", status="shipped", placed_on="2024-04-18", total_eur=19.9),
    Order(order_id="A-1003", status="pending", placed_on="2024-05-01", total_eur=7.0),
]


@tool(read_only=True, concurrency_safe=True)
def search_orders(
    filter: OrderFilter,
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
) -> list[Order]:
    """Search a customer's orders, newest first.

    Args:
        filter: Who the orders belong to, and which of them to keep.
        limit: The most orders to return.
    """
    found = [
        order
        for order in _ORDERS
        if (not filter.status or order.status in filter.status)
        and (
            filter.placed is None
            or (
                filter.placed.start <= order.placed_on
                and (filter.placed.end is None or order.placed_on <= filter.placed.end)
            )
        )
    ]
    return sorted(found, key=lambda order: order.placed_on, reverse=True)[:limit]


@tool
async def add_to_cart(
    sku: Annotated[str, Field(pattern=r"^[A-Z]{3}-\d{4}$")],
    tool_context: ToolContext,
    quantity: Annotated[int, Field(gt=0, le=99)] = 1,
    options: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Put an item in the user's shopping cart.

    The cart lives in the session state, so later calls see what earlier ones added.

    Args:
        sku: The product's stock-keeping unit, such as "MUG-0042".
        quantity: How many to add.
        options: Product options, such as {"size": "L", "colour": "blue"}.

    Returns:
        The cart after the change.
    """
    await asyncio.sleep(0)  # stands for a call to an inventory service
    cart = dict(tool_context.state.get("cart", {}))
    cart[sku] = cart.get(sku, 0) + quantity
    if cart[sku] > 99:
        raise ToolError(f"at most 99 of {sku} fit in one cart", code="cart.limit_exceeded")
    tool_context.state["cart"] = cart
    return {"cart": cart, "items": sum(cart.values())}


@tool(long_running=True, read_only=True)
def export_orders(
    order_ids: list[str], format: Literal["csv", "pdf"] = "csv"
) -> Generator[dict[str, Any], None, dict[str, Any]]:
    """Export orders to a file the user can download.

    Args:
        order_ids: The orders to include.
        format: The file format.
    """
    for done, order_id in enumerate(order_ids, start=1):
        yield {"status": "pending", "done": done, "total": len(order_ids), "last": order_id}
    return {"status": "done", "url": f"https://shop.example/exports/orders.{format}"}


TOOLS: list[BaseTool] = [get_weather, search_orders, add_to_cart, export_orders]

# -- printing ----------------------------------------------------------------------------


def gemini(t: BaseTool, legacy: bool = False) -> dict[str, Any]:
    # A google.genai FunctionDeclaration; dumped here to print it as JSON.
    return t.to_gemini(legacy=legacy).model_dump(exclude_none=True, mode="json")


EXPORTS: list[tuple[str, Callable[[BaseTool], Any]]] = [
    ("Gemini", gemini),
    ("Gemini (legacy)", lambda t: gemini(t, legacy=True)),
    ("OpenAI", lambda t: t.to_openai()),
    ("OpenAI (strict)", lambda t: t.to_openai(strict=True)),
    ("Anthropic", lambda t: t.to_anthropic()),
    ("MCP", lambda t: t.to_mcp()),
]


def heading(text: str, underline: str = "=") -> None:
    print(f"\n{text}\n{underline * len(text)}")


def show(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def show_tool(t: BaseTool) -> None:
    heading(f"Tool: {t.name}")
    print(t.description)
    for label, export in EXPORTS:
        heading(label, "-")
        try:
            show(export(t))
        except (TypeError, ValueError) as exc:  # an exporter refusing what it cannot express
            print(f"refused: {exc}")
    if t.diagnostics:
        heading("Diagnostics", "-")
        for d in t.diagnostics:
            where = f" [{d.parameter}]" if d.parameter else ""
            print(f"{d.level} {d.code}{where}: {d.message}")


async def sample_calls() -> None:
    heading("A valid call: get_weather")
    show(await get_weather.run({"city": "Lisbon", "unit": "fahrenheit"}))

    heading("A valid call with a nested model: search_orders")
    show(
        await search_orders.run(
            {
                "filter": {
                    "customer_email": "ana@example.com",
                    "status": ["shipped", "delivered"],
                    "placed": {"start": "2024-01-01"},
                },
                "limit": 5,
            }
        )
    )

    heading("A valid call with JSON text and a context: add_to_cart")
    ctx = SimpleToolContext(caller="shop_assistant", state={"cart": {"MUG-0042": 1}})
    show(await add_to_cart.run('{"sku": "MUG-0042", "quantity": 2}', ctx))
    print("state delta:", json.dumps(ctx.actions.state_delta))

    heading("A call with bad arguments: search_orders")
    try:
        await search_orders.run({"filter": {"status": ["lost"]}, "limit": "lots", "sort": "newest"})
    except ToolError as err:
        print(f"ToolError {err.code}: {err.message}\n")
        print("What the model is shown:")
        show(err.to_response())

    heading("A tool's own error: add_to_cart")
    try:
        await add_to_cart.run({"sku": "MUG-0042", "quantity": 99}, ctx)
    except ToolError as err:
        show(err.to_response())

    heading("A long-running tool, streamed: export_orders")
    async with export_orders.stream({"order_ids": ["A-1001", "A-1002", "A-1003"]}) as updates:
        async for update in updates:
            print(f"final={update.final!s:<5} {json.dumps(update.response)}")


def main() -> None:
    # Diagnostics are also issued as warnings; here they are printed under each tool.
    warnings.simplefilter("ignore", UserWarning)
    for t in TOOLS:
        show_tool(t)
    asyncio.run(sample_calls())


if __name__ == "__main__":
    main()
