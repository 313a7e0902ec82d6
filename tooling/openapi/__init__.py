"""A REST API described by OpenAPI (3.0 or 3.1) becomes a toolset.

``OpenAPIToolset(spec, base_url=...)`` gives one :class:`RestApiTool` per operation:
named after its ``operationId``, its arguments the operation's parameters and JSON body
(required-ness kept exactly), its flags from the HTTP method, its requests sent through
``httpx2.AsyncClient`` to the base URL only. YAML specs need PyYAML and argument checks
need jsonschema (the ``openapi`` extra); ``import tooling`` never imports this package.

The modules, by concern::

    _document    reading a spec (dict, JSON, YAML, path), its version, $ref resolution
    _schemas     OpenAPI schemas to JSON Schema ($defs for recursive models, nullable)
    _naming      tool and argument names
    _media       media types, request bodies, the answer's schema
    _operations  one operation to one tool's plan: name, arguments, schemas, flags
    _fastcheck   a fast exact check of simple arguments (jsonschema for the rest)
    _requests    arguments to a request that reaches only the operation's own URL
    _security    credentials for an operation's security requirements
    _answers     HTTP answers to response dicts and errors
    _tool        RestApiTool
    _toolset     OpenAPIToolset
"""

from ._tool import RestApiTool
from ._toolset import OpenAPIToolset

__all__ = ["OpenAPIToolset", "RestApiTool"]
