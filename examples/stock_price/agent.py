"""Stock prices looked up in a table shipped with the example (no network).

``prices.csv`` holds one closing price per symbol (sample figures for the demo, not
market quotes; each row says the date it stands for). ``get_stock_price`` answers with
a ``status`` the model can act on: ``"success"`` with the price, or ``"error"`` with a
message for a symbol the table does not have. ``find_symbol`` maps a company name to
its symbol first, when the user names a company.

Both tools only read, and say so (``read_only=True, concurrency_safe=True``): when the
model asks for several prices in one turn, the calls run side by side.
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path
from typing import Any

from agent_core import Agent
from tooling import tool

PRICES = Path(__file__).with_name("prices.csv")


@cache
def _table() -> dict[str, dict[str, str]]:
    with PRICES.open(newline="", encoding="utf-8") as f:
        return {row["symbol"].upper(): row for row in csv.DictReader(f)}


@tool(read_only=True, concurrency_safe=True, idempotent=True)
def get_stock_price(symbol: str) -> dict[str, Any]:
    """Look up the latest closing price of a stock by its ticker symbol.

    Args:
        symbol: The ticker symbol, such as "AAPL" or "GOOG" (case does not matter).

    Returns:
        {"status": "success", "symbol", "company", "price", "currency", "as_of"} when
        the symbol is known, else {"status": "error", "error_message": "..."}.
    """
    row = _table().get(symbol.strip().upper())
    if row is None:
        known = ", ".join(sorted(_table()))
        return {
            "status": "error",
            "error_message": f"No price found for symbol {symbol!r}. Known symbols: {known}.",
        }
    return {
        "status": "success",
        "symbol": row["symbol"],
        "company": row["company"],
        "price": float(row["price"]),
        "currency": row["currency"],
        "as_of": row["as_of"],
    }


@tool(read_only=True, concurrency_safe=True, idempotent=True)
def find_symbol(company: str) -> dict[str, Any]:
    """Find the ticker symbol of a company by (part of) its name.

    Args:
        company: The company's name or a part of it, such as "microsoft".

    Returns:
        {"status": "success", "matches": [{"symbol", "company"}, ...]} or
        {"status": "error", "error_message": "..."} when no company matches.
    """
    wanted = company.strip().lower()
    matches = [
        {"symbol": row["symbol"], "company": row["company"]}
        for row in _table().values()
        if wanted and wanted in row["company"].lower()
    ]
    if not matches:
        return {"status": "error", "error_message": f"No company matching {company!r}."}
    return {"status": "success", "matches": matches}


root_agent = Agent(
    name="stock_price",
    model="gemini-2.5-flash",
    description="Looks up stock prices from a local table.",
    instruction=(
        "You look up stock prices. Given a ticker symbol, call get_stock_price. Given only "
        "a company name, call find_symbol first, then get_stock_price with the symbol "
        "found. When several prices are wanted, ask for all of them in the same turn. "
        "Always say the date a price is from. If a tool answers with status 'error', "
        "tell the user the price could not be found and why; never make a price up."
    ),
    tools=[get_stock_price, find_symbol],
)
