from __future__ import annotations

from django.db import models


class AuditEvent(models.Model):
    """One append-only row of the history. Rows form a sha256 hash chain per stream.

    A stream is a case id (``exc_…``) or ``config:<model>`` for configuration changes.
    PostgreSQL triggers (migration 0002) refuse UPDATE and DELETE on this table.
    Before/after hold ids, states and digests, never evidence content.
    """

    stream = models.CharField(max_length=80)
    sequence = models.PositiveIntegerField()
    actor_kind = models.CharField(max_length=16)  # user | source | rule | system
    actor_id = models.CharField(max_length=80, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=64)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField()
    previous_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
        ordering = ["stream", "sequence"]
        constraints = [
            models.UniqueConstraint(
                fields=["stream", "sequence"], name="audit_stream_sequence_unique"
            )
        ]
        indexes = [models.Index(fields=["created_at"], name="audit_created_idx")]

    def __str__(self) -> str:
        return f"{self.stream}#{self.sequence} {self.action}"
