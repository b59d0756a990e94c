"""DRF authentication by `Authorization: Bearer <key>`; the request's user is the ApiSource."""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions, permissions

from .models import ApiSource
from .services import authenticate_key


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Any) -> tuple[ApiSource, None] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        parts = header.split()
        if len(parts) != 2 or parts[0] != self.keyword:
            raise exceptions.AuthenticationFailed("Use 'Authorization: Bearer <api key>'.")
        source = authenticate_key(parts[1])
        if source is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
        return source, None

    def authenticate_header(self, request: Any) -> str:
        # Makes DRF answer 401 (with WWW-Authenticate), not 403, when no key is sent.
        return self.keyword


class IsApiSource(permissions.BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        return isinstance(request.user, ApiSource)
