"""The automation boundary: which workflows may file cases, and how they learn decisions."""

from __future__ import annotations

import secrets

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _


def new_signing_secret() -> str:
    # Standard Webhooks secrets are "whsec_" + base64 of 24-64 random bytes.
    import base64

    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def validate_versions(value: object) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValidationError(_("Supported versions must be a list of non-empty strings."))


class WorkflowType(models.Model):
    name = models.SlugField(max_length=64, unique=True)
    display_name = models.CharField(max_length=120)
    supported_versions = models.JSONField(
        default=list,
        validators=[validate_versions],
        help_text=_('Workflow versions whose checkpoints this desk accepts, e.g. ["16", "17"].'),
    )
    callback_url = models.URLField(
        blank=True, help_text=_("Webhook endpoint for decisions. Empty: the pull feed only.")
    )
    signing_secret = models.CharField(max_length=120, default=new_signing_secret)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.display_name or self.name

    def supports(self, version: str) -> bool:
        return version in self.supported_versions


class ApiSource(models.Model):
    """A caller of the API (one workflow engine deployment). Test sources mark their cases."""

    name = models.SlugField(max_length=64, unique=True)
    is_test = models.BooleanField(default=False)
    workflow_types = models.ManyToManyField(WorkflowType, related_name="sources", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ApiKey(models.Model):
    """Only a sha256 of the key is stored; the key itself is printed once at creation.

    Keys are 256-bit random tokens, so a fast hash is enough (no password stretching needed);
    the prefix finds the row without scanning.
    """

    source = models.ForeignKey(ApiSource, on_delete=models.CASCADE, related_name="keys")
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.source.name} {self.prefix}…"
