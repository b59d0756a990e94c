"""The ingestion API and the pull feed. Each view: validate with a serializer, call one
service (or selector), render. The authenticated ``request.user`` is the ApiSource.

Errors of every kind (bad input, CaseError from a service, auth) leave through
apps.cases.api.errors.exception_handler in the shape {"errors": {"field.path": [...]}}.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import services
from ..models import Case
from ..services import delivery
from . import schema as _schema  # noqa: F401  (registers the auth scheme with the schema)
from .parsers import LimitedJSONParser
from .selectors import case_for_source
from .serializers import (
    AckSerializer,
    CancelSerializer,
    CaseSerializer,
    ConflictSerializer,
    ErrorSerializer,
    EvidenceAppendSerializer,
    FeedEventSerializer,
    FeedQuerySerializer,
    FeedSerializer,
    ReviewPacketSerializer,
    SideEffectReportSerializer,
)

TAG_CASES = "cases"
TAG_DECISIONS = "decisions"

CASE_ID = OpenApiParameter("case_id", str, OpenApiParameter.PATH, description="e.g. exc_01j…")
EVENT_ID = OpenApiParameter("event_id", str, OpenApiParameter.PATH, description="e.g. evt_01j…")


def _error(description: str, serializer: Any = ErrorSerializer) -> OpenApiResponse:
    return OpenApiResponse(response=serializer, description=description)


AUTH_ERRORS = {
    401: _error("No API key, or an invalid or revoked one."),
    405: _error("Method not allowed."),
}
BODY_ERRORS = {
    400: _error("Invalid input; every message is keyed by its field path."),
    413: _error("The body is larger than MAX_BODY_BYTES."),
    415: _error("The body is not application/json."),
}
CASE_ERRORS = {404: _error("No such case, or one of a workflow type outside the key's scope.")}


def validated(serializer_class: type[serializers.Serializer], data: Any) -> Any:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def case_response(request: Request, case: Case, status_code: int = status.HTTP_200_OK) -> Response:
    return Response(CaseSerializer(case, context={"request": request}).data, status=status_code)


class ApiView(APIView):
    parser_classes = [LimitedJSONParser]


class CaseCollectionView(ApiView):
    @extend_schema(
        operation_id="file_case",
        tags=[TAG_CASES],
        summary="File a case (idempotent by dedupe key)",
        request=ReviewPacketSerializer,
        responses={
            201: OpenApiResponse(CaseSerializer, description="Created."),
            200: OpenApiResponse(
                CaseSerializer, description="The same packet was filed before: that case."
            ),
            403: _error("The key may not file cases of this workflow type."),
            409: _error(
                "The dedupe key was used by another case with a different packet.",
                ConflictSerializer,
            ),
            **BODY_ERRORS,
            **AUTH_ERRORS,
        },
    )
    def post(self, request: Request) -> Response:
        packet = validated(ReviewPacketSerializer, request.data)
        case, created = services.file_case(source=request.user, packet=packet)
        if not created:
            return case_response(request, case)
        response = case_response(request, case, status.HTTP_201_CREATED)
        response["Location"] = request.build_absolute_uri(
            reverse("api:case-detail", args=[case.pk])
        )
        return response


class CaseDetailView(ApiView):
    @extend_schema(
        operation_id="get_case",
        tags=[TAG_CASES],
        summary="Read a case",
        parameters=[CASE_ID],
        responses={200: CaseSerializer, **CASE_ERRORS, **AUTH_ERRORS},
    )
    def get(self, request: Request, case_id: str) -> Response:
        return case_response(request, case_for_source(source=request.user, case_id=case_id))


class CaseEvidenceView(ApiView):
    @extend_schema(
        operation_id="append_evidence",
        tags=[TAG_CASES],
        summary="Append a new evidence version (a waiting case returns to open)",
        parameters=[CASE_ID],
        request=EvidenceAppendSerializer,
        responses={
            200: CaseSerializer,
            409: _error("The case no longer takes evidence.", ConflictSerializer),
            **CASE_ERRORS,
            **BODY_ERRORS,
            **AUTH_ERRORS,
        },
    )
    def post(self, request: Request, case_id: str) -> Response:
        body = validated(EvidenceAppendSerializer, request.data)
        case = services.append_evidence(
            source=request.user, case_id=case_id, items=body["evidence"]
        )
        return case_response(request, case)


class CaseSideEffectView(ApiView):
    @extend_schema(
        operation_id="report_side_effect",
        tags=[TAG_CASES],
        summary="Report what the destination says happened to the side effect",
        parameters=[CASE_ID],
        request=SideEffectReportSerializer,
        responses={200: CaseSerializer, **CASE_ERRORS, **BODY_ERRORS, **AUTH_ERRORS},
    )
    def post(self, request: Request, case_id: str) -> Response:
        body = validated(SideEffectReportSerializer, request.data)
        case = services.report_side_effect(
            source=request.user,
            case_id=case_id,
            state=body["state"],
            provider_record=body["provider_record"],
        )
        return case_response(request, case)


class CaseCancelView(ApiView):
    @extend_schema(
        operation_id="cancel_case",
        tags=[TAG_CASES],
        summary="Cancel a case the workflow no longer needs (closed, canceled_by_workflow)",
        parameters=[CASE_ID],
        request=CancelSerializer,
        responses={
            200: CaseSerializer,
            409: _error("The case is already decided.", ConflictSerializer),
            **CASE_ERRORS,
            **BODY_ERRORS,
            **AUTH_ERRORS,
        },
    )
    def post(self, request: Request, case_id: str) -> Response:
        body = validated(CancelSerializer, request.data)
        case = services.cancel_case(source=request.user, case_id=case_id, reason=body["reason"])
        return case_response(request, case)


class DecisionFeedView(ApiView):
    @extend_schema(
        operation_id="list_decisions",
        tags=[TAG_DECISIONS],
        summary="Pull feed: this source's unacknowledged events, oldest first",
        parameters=[FeedQuerySerializer],
        responses={
            200: FeedSerializer,
            400: _error("Invalid limit."),
            **AUTH_ERRORS,
        },
    )
    def get(self, request: Request) -> Response:
        query = validated(FeedQuerySerializer, request.query_params)
        events = delivery.unacknowledged_events(source=request.user, limit=query["limit"])
        return Response({"events": [FeedEventSerializer.body(event) for event in events]})


class DecisionAckView(ApiView):
    @extend_schema(
        operation_id="ack_decision",
        tags=[TAG_DECISIONS],
        summary="Acknowledge an event (a decided case becomes resolved); repeatable",
        parameters=[EVENT_ID],
        request=None,
        responses={
            200: AckSerializer,
            404: _error("No such event for this source."),
            **AUTH_ERRORS,
        },
    )
    def post(self, request: Request, event_id: str) -> Response:
        event = services.ack_event(source=request.user, event_id=event_id)
        return Response({"id": event.pk, "status": event.status})


@csrf_exempt
def endpoint_not_found(request: HttpRequest, unmatched: str = "") -> JsonResponse:
    """Unknown paths under the API answer in the API's error shape, not an HTML page."""
    return JsonResponse(
        {"errors": {"detail": [gettext("No such API endpoint.")]}},
        status=status.HTTP_404_NOT_FOUND,
    )
