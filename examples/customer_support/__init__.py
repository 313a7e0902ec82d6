"""A tool that hands urgent queries to a support agent: ``python -m examples.customer_support``."""
