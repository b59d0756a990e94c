from __future__ import annotations

import hashlib
import hmac
import secrets

from django.db import transaction
from django.utils import timezone

from apps.audit.services import Actor, record

from .models import ApiKey, ApiSource, WorkflowType

KEY_PREFIX = "edk_"


def _hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def create_api_key(
    *, source_name: str, workflow_type_names: list[str], is_test: bool, acting: Actor
) -> tuple[ApiKey, str]:
    """Create (or extend) a source and issue a key. Returns the row and the plain key."""
    types = list(WorkflowType.objects.filter(name__in=workflow_type_names))
    missing = sorted(set(workflow_type_names) - {t.name for t in types})
    if missing:
        raise ValueError(f"unknown workflow types: {', '.join(missing)}")
    prefix = secrets.token_hex(6)
    plain = f"{KEY_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    with transaction.atomic():
        source, created = ApiSource.objects.get_or_create(
            name=source_name, defaults={"is_test": is_test}
        )
        if not created and source.is_test != is_test:
            source.is_test = is_test
            source.save(update_fields=["is_test"])
        source.workflow_types.add(*types)
        key = ApiKey.objects.create(source=source, prefix=prefix, key_hash=_hash_key(plain))
        record(
            stream="config:workflows.apikey",
            actor=acting,
            action="api_key.created",
            after={
                "id": key.pk,
                "source": source.name,
                "prefix": prefix,
                "workflow_types": sorted(t.name for t in source.workflow_types.all()),
                "is_test": source.is_test,
            },
        )
    return key, plain


def authenticate_key(plain: str) -> ApiSource | None:
    if not plain.startswith(KEY_PREFIX):
        return None
    prefix = plain[len(KEY_PREFIX) :].split("_", 1)[0]
    key = (
        ApiKey.objects.select_related("source")
        .filter(prefix=prefix, revoked_at__isnull=True)
        .first()
    )
    if key is None or not hmac.compare_digest(key.key_hash, _hash_key(plain)):
        return None
    return key.source


def revoke_api_key(*, key: ApiKey, acting: Actor) -> None:
    with transaction.atomic():
        ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
        record(
            stream="config:workflows.apikey",
            actor=acting,
            action="api_key.revoked",
            before={"id": key.pk, "prefix": key.prefix},
        )
