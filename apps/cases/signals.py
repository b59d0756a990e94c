"""Logout releases the user's leases (an entry point, like a view: it calls a service)."""

from typing import Any

from django.contrib.auth.signals import user_logged_out
from django.dispatch import receiver


@receiver(user_logged_out)
def release_leases_on_logout(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    if user is None:
        return
    from .services import release_user_leases

    release_user_leases(user=user, reason="released at logout")
