"""The six functions the benchmarks turn into tools, with the arguments a model would send.

Importable from the project's venv and from google-adk's (it needs only pydantic), so
both sides of a comparison measure exactly the same functions. :func:`fresh` defines a
function anew from its source, so no cache keyed by the function object (or its code
object) can apply to a "cold" build.
"""

import enum
import functools
import inspect
import textwrap
from typing import Any, Literal

from pydantic import BaseModel

__all__ = ["ARGS", "DIRECT_ARGS", "FUNCTIONS", "Item", "Order", "Priority", "fresh", "fresh_set"]


class Priority(enum.Enum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"


class Item(BaseModel):
    sku: str
    quantity: int
    unit_price: float


class Order(BaseModel):
    customer: str
    items: list[Item]
    priority: Priority = Priority.NORMAL
    note: str | None = None


def is_even(number: int) -> bool:
    """Tell whether a number is even.

    Args:
        number: The whole number to check.

    Returns:
        True when the number is divisible by two.
    """
    return number % 2 == 0


def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict:
    """Get the current weather in a city.

    Args:
        city: The city's name, for example "Paris".
        unit: The temperature unit of the answer.

    Returns:
        The temperature and a short summary of the sky.
    """
    temperature = 21.5 if unit == "celsius" else 70.7
    return {"city": city, "temperature": temperature, "unit": unit, "sky": "clear"}


def search(query: str, limit: int = 10, tags: list[str] | None = None) -> list[dict]:
    """Search the knowledge base.

    Args:
        query: Words to look for.
        limit: The largest number of hits to return.
        tags: Only return documents carrying all of these tags.

    Returns:
        The hits, best first, each with a title and a score.
    """
    hits = [
        {"title": f"{query} #{i}", "score": 1.0 / (i + 1), "tags": tags or []} for i in range(3)
    ]
    return hits[:limit]


def create_order(order: Order) -> dict:
    """Place an order for a customer.

    Args:
        order: The order: who buys, which items, how urgent.

    Returns:
        The new order's id and total price.
    """
    total = sum(item.quantity * item.unit_price for item in order.items)
    return {"order_id": "ord-0001", "total": total, "priority": order.priority}


async def fetch_page(url: str, timeout_s: float = 5.0) -> str:
    """Fetch a web page and return its text.

    Args:
        url: The address of the page.
        timeout_s: Give up after this many seconds.

    Returns:
        The page's text.
    """
    return "<html><body>Example Domain</body></html>"


def configure_job(
    name: str,
    replicas: int = 1,
    cpu: float = 0.5,
    enabled: bool = True,
    owner: str | None = None,
    tags: list[str] | None = None,
    labels: dict[str, str] | None = None,
    mode: Literal["batch", "stream", "interactive"] = "batch",
    retries: int = 3,
    timeout_s: float = 30.0,
    priority: int | None = None,
    notes: str = "",
) -> dict:
    """Create or update a job definition.

    Args:
        name: The job's unique name.
        replicas: How many copies run at once.
        cpu: CPU cores per replica.
        enabled: Whether the job may be scheduled.
        owner: Who is responsible for the job.
        tags: Free-form tags for searching.
        labels: Key-value labels attached to every replica.
        mode: How the job processes its input.
        retries: How often a failed run is retried.
        timeout_s: Seconds before a run is stopped.
        priority: Scheduling priority; higher runs first.
        notes: Anything a human operator should know.

    Returns:
        The stored job definition.
    """
    return {
        "name": name,
        "replicas": replicas,
        "cpu": cpu,
        "enabled": enabled,
        "mode": mode,
        "labels": labels or {},
    }


FUNCTIONS: dict[str, Any] = {
    "f1": is_even,
    "f2": get_weather,
    "f3": search,
    "f4": create_order,
    "f5": fetch_page,
    "f6": configure_job,
}

#: Valid arguments as a model would send them (JSON values).
ARGS: dict[str, dict[str, Any]] = {
    "f1": {"number": 4},
    "f2": {"city": "Paris", "unit": "fahrenheit"},
    "f3": {"query": "python tools", "limit": 2, "tags": ["docs", "howto"]},
    "f4": {
        "order": {
            "customer": "ada",
            "items": [
                {"sku": "A-1", "quantity": 2, "unit_price": 9.5},
                {"sku": "B-2", "quantity": 1, "unit_price": 20.0},
            ],
            "priority": "high",
        }
    },
    "f5": {"url": "https://example.com/", "timeout_s": 2.5},
    "f6": {
        "name": "nightly-etl",
        "replicas": 3,
        "cpu": 1.5,
        "enabled": True,
        "owner": "data-team",
        "tags": ["etl", "nightly"],
        "labels": {"env": "prod", "tier": "2"},
        "mode": "stream",
        "retries": 5,
    },
}


#: The same arguments as Python values the function takes directly (for a plain call).
DIRECT_ARGS: dict[str, dict[str, Any]] = {
    **ARGS,
    "f4": {"order": Order.model_validate(ARGS["f4"]["order"])},
}


@functools.cache
def _source(key: str) -> str:
    return textwrap.dedent(inspect.getsource(FUNCTIONS[key]))


_counter = 0


def fresh(key: str) -> Any:
    """Define function ``key`` anew: its source compiled and executed again.

    The result is a new function object with a new code object (and the same name,
    docstring and annotations), whose globals are a copy of this module's.
    """
    global _counter
    _counter += 1
    code = compile(_source(key), f"<fresh {key} #{_counter}>", "exec")
    namespace = dict(globals())
    exec(code, namespace)
    return namespace[FUNCTIONS[key].__name__]


def fresh_set(key: str, count: int) -> list[Any]:
    """``count`` fresh copies of function ``key``."""
    return [fresh(key) for _ in range(count)]
