"""Stock prices from a table shipped with the example: ``python -m examples.stock_price``."""
