"""What the workflow may send and what it gets back.

Input serializers are strict: a key the packet does not declare is an error naming it,
never silently dropped. The review packet is a contract with the workflow, and a dropped
key is how private model reasoning ("chain_of_thought") or a client's idea of its own
priority would slip past unnoticed. Validated data is normalized (defaults filled, null
optional text as "") so that a retry that omits a field and one that sends it empty are
the same packet for the dedupe check.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.audit.services import canonical_json
from apps.routing.models import Classification

from ..models import Case, CloseReason, DeliveryStatus, OutboxEvent, SideEffectState, State
from ..services import allowed_resolutions
from ..services.filing import dedupe_key_for

DEDUPE_KEY_MAX_LENGTH = Case._meta.get_field("dedupe_key").max_length

# Fields of the case the desk computes. A client that sends one is told so by name rather
# than with a generic "unknown field": it is a misunderstanding worth explaining.
DESK_COMPUTED_FIELDS = frozenset(
    {
        "id",
        "queue",
        "severity",
        "priority",
        "due_at",
        "original_due_at",
        "allowed_resolutions",
        "state",
        "version",
        "url",
        "evidence_version",
        "evidence_digest",
        "close_reason",
        "delivery_status",
        "created_at",
        "decision",
    }
)


class StrictSerializer(serializers.Serializer):
    """Rejects every key it does not declare, naming it, together with any field errors."""

    computed_fields: frozenset[str] = frozenset()
    unknown_field_message = gettext_lazy("Unknown field: there is no such field here.")

    def to_internal_value(self, data: Any) -> Any:
        unknown: dict[str, list[str]] = {}
        if isinstance(data, Mapping):
            for key in data:
                if key in self.fields:
                    continue
                if key in self.computed_fields:
                    unknown[str(key)] = [
                        gettext("The desk computes %(field)s; do not send it.") % {"field": key}
                    ]
                else:
                    unknown[str(key)] = [str(self.unknown_field_message)]
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as error:
            if not unknown:
                raise
            detail = error.detail
            if not isinstance(detail, dict):
                detail = {"non_field_errors": detail}
            raise serializers.ValidationError({**detail, **unknown}) from error
        if unknown:
            raise serializers.ValidationError(unknown)
        return value


class OptionalTextField(serializers.CharField):
    """Optional text: missing, null and "" all mean "" (one packet, one digest)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_blank", True)
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("default", "")
        super().__init__(**kwargs)

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data is None:
            return True, ""
        return super().validate_empty_values(data)


class AwareDateTimeField(serializers.DateTimeField):
    """ISO 8601 with a timezone. A naive time is ambiguous evidence, so it is refused
    rather than silently read as UTC."""

    default_error_messages = {
        "naive": gettext_lazy(
            "Give the timezone, e.g. 2026-08-31T14:19:59Z; a time without one is ambiguous."
        ),
    }

    def enforce_timezone(self, value: Any) -> Any:
        if timezone.is_naive(value):
            self.fail("naive")
        return super().enforce_timezone(value)


@extend_schema_field(
    {
        "oneOf": [{"type": "string", "format": "decimal"}, {"type": "number"}],
        "example": "12400.00",
    }
)
class AmountField(serializers.Field):
    """A decimal string or a JSON number, kept as a decimal string (JSON has no decimals,
    and a float would round money)."""

    default_error_messages = {
        "invalid": gettext_lazy("Give the amount as a decimal string or a number."),
        "too_large": gettext_lazy("The amount is out of range."),
    }
    MAX_ABSOLUTE = Decimal("1e15")

    def to_internal_value(self, data: Any) -> str:
        if isinstance(data, bool) or not isinstance(data, str | int | float):
            self.fail("invalid")
        try:
            value = Decimal(str(data).strip())
        except InvalidOperation:
            self.fail("invalid")
        if not value.is_finite():
            self.fail("invalid")
        if abs(value) >= self.MAX_ABSOLUTE:
            self.fail("too_large")
        return str(value)

    def to_representation(self, value: Any) -> str:
        return str(value)


class AttributesSerializer(serializers.Serializer):
    """Trusted business metadata that routing reads. The named keys are typed; other keys
    are kept as sent (a workflow may route or report on its own attributes)."""

    tenant = serializers.CharField(required=False, allow_null=True, max_length=100)
    region = serializers.CharField(required=False, allow_null=True, max_length=100)
    amount = AmountField(required=False, allow_null=True)
    currency = serializers.RegexField(
        r"^[A-Za-z]{3}$",
        required=False,
        allow_null=True,
        error_messages={"invalid": gettext_lazy("Give a three-letter currency code, e.g. EUR.")},
    )
    initiated_by = serializers.CharField(required=False, allow_null=True, max_length=200)

    def to_internal_value(self, data: Any) -> Any:
        value = dict(super().to_internal_value(data))
        if value.get("currency"):
            value["currency"] = value["currency"].upper()
        extras = {key: item for key, item in data.items() if key not in self.fields}
        return {**extras, **value}


class EvidenceItemSerializer(StrictSerializer):
    """One evidence snapshot as the workflow saw it; stored with the sha256 of its canonical
    JSON."""

    ref = serializers.CharField(max_length=200)
    source = serializers.CharField(max_length=200)
    source_timestamp = AwareDateTimeField()
    classification = serializers.ChoiceField(choices=Classification.choices)
    content = serializers.DictField()

    def validate_content(self, value: dict[str, Any]) -> dict[str, Any]:
        limit = int(settings.EXCEPTION_DESK["MAX_EVIDENCE_ITEM_BYTES"])
        size = len(canonical_json(value))
        if size > limit:
            raise serializers.ValidationError(
                gettext("This content is %(size)d bytes as canonical JSON; the limit is %(limit)d.")
                % {"size": size, "limit": limit}
            )
        return value


class EvidenceListField(serializers.ListField):
    """Counts the items before validating them, so an oversized list is refused cheaply."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("child", EvidenceItemSerializer())
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Any:
        limit = int(settings.EXCEPTION_DESK["MAX_EVIDENCE_ITEMS"])
        if isinstance(data, list) and len(data) > limit:
            raise serializers.ValidationError(
                gettext("At most %(limit)d evidence items per request; got %(count)d.")
                % {"limit": limit, "count": len(data)}
            )
        return super().to_internal_value(data)


class ReviewPacketSerializer(StrictSerializer):
    """The review packet: what the workflow knew when it stopped, never what it thought."""

    computed_fields = DESK_COMPUTED_FIELDS
    unknown_field_message = gettext_lazy(
        "Unknown field: the review packet has no such field. It carries observable facts "
        "(inputs, tool calls, results, policy decisions), never private model reasoning."
    )

    workflow_type = serializers.CharField(max_length=64)
    workflow_version = serializers.CharField(max_length=40)
    workflow_instance_id = serializers.CharField(max_length=200)
    checkpoint_id = serializers.CharField(max_length=200)
    resume_handle = OptionalTextField(
        trim_whitespace=False,
        help_text=gettext_lazy(
            "Opaque, e.g. a Step Functions task token; returned in the decision event."
        ),
    )
    case_ref = serializers.CharField(
        max_length=200, help_text=gettext_lazy("The business entity, e.g. invoice_8421.")
    )
    summary = serializers.CharField(max_length=500)
    # "class" is a Python keyword, so it is added in get_fields() below.
    reason_code = serializers.CharField(max_length=100)
    reason_note = OptionalTextField(max_length=5000)
    proposed_action = serializers.JSONField(required=False, allow_null=True, default=None)
    side_effect_state = serializers.ChoiceField(
        choices=SideEffectState.choices, default=SideEffectState.NONE_ATTEMPTED
    )
    policy_version = OptionalTextField(max_length=100)
    policy_decision_ref = OptionalTextField(max_length=200)
    trace_ref = OptionalTextField(max_length=200)
    input_snapshot_ref = OptionalTextField(max_length=200)
    timeline = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        default=list,
        help_text=gettext_lazy(
            "Observable tool calls, results and validation failures; no private reasoning."
        ),
    )
    evidence = EvidenceListField(required=False, default=list)
    attributes = AttributesSerializer(required=False, default=dict)
    dedupe_key = OptionalTextField(
        max_length=DEDUPE_KEY_MAX_LENGTH,
        help_text=gettext_lazy(
            "Optional; defaults to workflow type + instance + checkpoint + reason code."
        ),
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["class"] = serializers.CharField(
            max_length=64,
            help_text=gettext_lazy("Exception class, e.g. evidence_conflict."),
        )
        return fields

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        packet = dict(attrs)
        if len(dedupe_key_for(packet)) > DEDUPE_KEY_MAX_LENGTH:
            raise serializers.ValidationError(
                {
                    "dedupe_key": [
                        gettext(
                            "The identifiers are too long to form a dedupe key; send a "
                            "dedupe_key of at most %(limit)d characters."
                        )
                        % {"limit": DEDUPE_KEY_MAX_LENGTH}
                    ]
                }
            )
        return packet


class EvidenceAppendSerializer(StrictSerializer):
    """New evidence: stored as the next evidence version; earlier versions stay."""

    evidence = EvidenceListField(allow_empty=False)


class SideEffectReportSerializer(StrictSerializer):
    """The workflow's reconciliation of a side effect with its destination."""

    state = serializers.ChoiceField(
        choices=[
            (SideEffectState.CONFIRMED_APPLIED.value, SideEffectState.CONFIRMED_APPLIED.label),
            (SideEffectState.CONFIRMED_REJECTED.value, SideEffectState.CONFIRMED_REJECTED.label),
        ]
    )
    provider_record = serializers.DictField(
        allow_empty=False,
        help_text=gettext_lazy(
            "What the destination says happened: its record id, idempotency key, status."
        ),
    )

    def validate_provider_record(self, value: dict[str, Any]) -> dict[str, Any]:
        limit = int(settings.EXCEPTION_DESK["MAX_EVIDENCE_ITEM_BYTES"])
        if len(canonical_json(value)) > limit:
            raise serializers.ValidationError(
                gettext("The provider record is larger than %(limit)d bytes.") % {"limit": limit}
            )
        return value


class CancelSerializer(StrictSerializer):
    """The workflow no longer needs the case; an optional reason for the audit log."""

    reason = OptionalTextField(max_length=1000)


class FeedQuerySerializer(serializers.Serializer):
    limit = serializers.IntegerField(min_value=1, max_value=500, default=50)


# --- Output ------------------------------------------------------------------------------


class PrioritySerializer(serializers.Serializer):
    band = serializers.CharField(source="priority_band")
    score = serializers.IntegerField(source="priority_score")
    explanation = serializers.CharField(source="priority_explanation")
    components = serializers.DictField(source="priority_components")
    policy_version = serializers.CharField(source="priority_policy_version")


class DecisionSerializer(serializers.Serializer):
    resolution = serializers.CharField()
    fields = serializers.DictField()
    note = serializers.CharField()
    decided_at = serializers.DateTimeField()


class CaseSerializer(serializers.Serializer):
    """The case as its source sees it. The resume handle is left out: the workflow already
    holds it, and it comes back in the decision event, where it is needed."""

    id = serializers.CharField()
    state = serializers.ChoiceField(choices=State.choices)
    queue = serializers.CharField(source="queue.name")
    severity = serializers.CharField()
    priority = PrioritySerializer(source="*")
    due_at = serializers.DateTimeField()
    original_due_at = serializers.DateTimeField()
    allowed_resolutions = serializers.SerializerMethodField()
    version = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    case_ref = serializers.CharField()
    workflow_type = serializers.CharField(source="workflow_type.name")
    workflow_version = serializers.CharField()
    side_effect_state = serializers.ChoiceField(choices=SideEffectState.choices)
    evidence_version = serializers.IntegerField()
    evidence_digest = serializers.CharField()
    close_reason = serializers.ChoiceField(choices=[("", "")] + list(CloseReason.choices))
    delivery_status = serializers.ChoiceField(choices=DeliveryStatus.choices)
    created_at = serializers.DateTimeField()
    decision = serializers.SerializerMethodField()

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_allowed_resolutions(self, case: Case) -> list[str]:
        return [resolution.code for resolution in allowed_resolutions(case)]

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, case: Case) -> str:
        try:
            path = reverse("cases:detail", args=[case.pk])
        except NoReverseMatch:
            path = f"/cases/{case.pk}/"
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path

    @extend_schema_field(DecisionSerializer(allow_null=True))
    def get_decision(self, case: Case) -> dict[str, Any] | None:
        decision = getattr(case, "decision", None)
        return DecisionSerializer(decision).data if decision is not None else None


class ErrorSerializer(serializers.Serializer):
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text=gettext_lazy('Messages by field path, e.g. "evidence.0.source_timestamp".'),
    )


class ConflictSerializer(ErrorSerializer):
    case_id = serializers.CharField(help_text=gettext_lazy("The case that already exists."))


class EventActorSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()


class EventDataSerializer(serializers.Serializer):
    case_id = serializers.CharField()
    case_ref = serializers.CharField()
    workflow_type = serializers.CharField()
    workflow_version = serializers.CharField()
    workflow_instance_id = serializers.CharField()
    checkpoint_id = serializers.CharField()
    resume_handle = serializers.CharField(allow_null=True)
    resolution = serializers.CharField(required=False)
    fields = serializers.DictField(required=False)
    note = serializers.CharField(required=False)
    actor = EventActorSerializer(allow_null=True, required=False)
    decision_policy_version = serializers.CharField(required=False)
    evidence_version = serializers.IntegerField()
    evidence_digest = serializers.CharField()
    decided_at = serializers.DateTimeField(required=False)
    request = serializers.DictField(
        required=False, help_text=gettext_lazy("case.information_requested: what was asked.")
    )


class EventDeliverySerializer(serializers.Serializer):
    status = serializers.CharField()
    attempts = serializers.IntegerField()


class FeedEventSerializer(serializers.Serializer):
    """An outbox event exactly as the webhook would carry it, plus its delivery state."""

    id = serializers.CharField()
    type = serializers.ChoiceField(choices=["case.decided", "case.information_requested"])
    created_at = serializers.DateTimeField()
    data = EventDataSerializer()
    delivery = EventDeliverySerializer()

    @staticmethod
    def body(event: OutboxEvent) -> dict[str, Any]:
        return {**event.body, "delivery": {"status": event.status, "attempts": event.attempts}}


class FeedSerializer(serializers.Serializer):
    events = FeedEventSerializer(many=True)


class AckSerializer(serializers.Serializer):
    id = serializers.CharField()
    status = serializers.CharField()
