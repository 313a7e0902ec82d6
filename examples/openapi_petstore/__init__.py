"""A REST API as a toolset: ``python -m examples.openapi_petstore``."""
