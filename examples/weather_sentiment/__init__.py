"""A weather report, then a sentiment check: ``python -m examples.weather_sentiment``."""
