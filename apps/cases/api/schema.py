"""OpenAPI description of the API's authentication (drf-spectacular extension).

Registered on import; views.py imports this module so the schema always knows the scheme.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "apps.workflows.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return build_bearer_security_scheme_object(
            header_name="Authorization",
            token_prefix="Bearer",  # noqa: S106  (the auth scheme name, not a secret)
            bearer_format="edk_…",
        )
