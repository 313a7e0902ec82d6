"""A tool that draws a PNG chart and returns it as an image: ``python -m examples.chart``."""
