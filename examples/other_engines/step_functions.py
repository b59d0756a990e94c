"""AWS Step Functions: ``.waitForTaskToken`` pauses the execution; the desk carries the task
token as the case's resume handle; the decision comes back through SendTaskSuccess.

NOT run by the test suite, and boto3 is NOT a dependency of this repo. To deploy it you
need an AWS account, three Lambda functions (the handlers below, packaged with this
repo's exception_desk_client, httpx and standardwebhooks), a DynamoDB table for seen
webhook-ids (partition key ``webhook_id``, a string) and the state machine below:

    pip install boto3 httpx standardwebhooks
    Lambda environment: DESK_URL, DESK_API_KEY, DESK_WEBHOOK_SECRET, SEEN_TABLE

How it maps onto the desk:

- The state ``AwaitDecision`` invokes ``file_case_handler`` with ``$$.Task.Token`` and
  waits. The token is the resume handle. The dedupe key includes a digest of the token,
  so Lambda's own retries of one invocation file one case.
- ``webhook_handler`` (behind API Gateway or a Lambda function URL) verifies the desk's
  webhook and calls SendTaskSuccess with the decision; a "close" decision is sent as
  SendTaskFailure with the error ``Desk.Closed``, which the state machine catches.
- TaskTimedOut (and TaskDoesNotExist, InvalidToken) is terminal: the execution stopped
  waiting (its timeout branch ran) and will never take this decision. The handler answers
  410, so the desk stops retrying and the case waits in its recovery queue, where a
  supervisor sees that the workflow is gone. The pull-feed handler acknowledges such an
  event after logging it, since nothing can ever act on it.
- On ``States.Timeout`` the machine cancels the case, so nobody decides a case whose
  workflow is no longer waiting. If someone decided it a moment before, cancel answers
  409 and the decision stands (and meets TaskTimedOut, above).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from typing import Any

try:
    import boto3
    from botocore.exceptions import ClientError
except ImportError as error:  # the snippet's own dependency, not the desk's
    raise ImportError("This snippet needs boto3: pip install boto3") from error

from exception_desk_client import (
    Conflict,
    DecisionEvent,
    Desk,
    WebhookRejected,
    WebhookReplayed,
    WebhookVerifier,
)

logger = logging.getLogger(__name__)

STATE_MACHINE: dict[str, Any] = {
    "Comment": "Invoice matching with a human decision through the Exception Desk",
    "StartAt": "AwaitDecision",
    "States": {
        "AwaitDecision": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
            "Parameters": {
                "FunctionName": "exception-desk-file-case",
                "Payload": {
                    "invoice.$": "$.invoice",
                    "candidates.$": "$.candidates",
                    "execution.$": "$$.Execution.Name",
                    "state.$": "$$.State.Name",
                    "task_token.$": "$$.Task.Token",
                },
            },
            "TimeoutSeconds": 3 * 24 * 3600,
            "ResultPath": "$.decision",
            "Catch": [
                {"ErrorEquals": ["Desk.Closed"], "ResultPath": "$.closed", "Next": "Closed"},
                {
                    "ErrorEquals": ["States.Timeout"],
                    "ResultPath": "$.timeout",
                    "Next": "CancelCase",
                },
            ],
            "Next": "ApplyPurchaseOrder",
        },
        "ApplyPurchaseOrder": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": "apply-purchase-order", "Payload.$": "$"},
            "End": True,
        },
        "CancelCase": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": "exception-desk-cancel-case", "Payload.$": "$"},
            "Next": "TimedOut",
        },
        "TimedOut": {"Type": "Fail", "Error": "Desk.NoDecision"},
        "Closed": {"Type": "Succeed"},
    },
}

# Errors of SendTaskSuccess/Failure after which no retry can ever succeed.
TERMINAL_ERRORS = {"TaskTimedOut", "TaskDoesNotExist", "InvalidToken"}


def _desk() -> Desk:
    return Desk(os.environ["DESK_URL"], os.environ["DESK_API_KEY"], retries=2)


def _token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:32]


def file_case_handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    """Lambda ``exception-desk-file-case``: file the case, then return; the execution keeps
    waiting on the token. Raising (DeskUnavailable) fails the invocation and Lambda's or
    the state's retry files the same case again."""
    token = event["task_token"]
    checkpoint = f"{event['state']}:{_token_digest(token)}"
    packet: dict[str, Any] = {
        "workflow_type": "invoice_match",
        "workflow_version": "17",
        "workflow_instance_id": event["execution"],
        "checkpoint_id": checkpoint,
        "resume_handle": token,  # opaque to the desk; never shown to people
        "case_ref": f"invoice_{event['invoice'].removeprefix('INV-')}",
        "summary": f"Invoice {event['invoice']} matches {len(event['candidates'])} orders",
        "class": "evidence_conflict",
        "reason_code": "multiple_po_match",
        "evidence": [
            {
                "ref": ref,
                "source": "erp",
                "source_timestamp": "2026-08-31T14:19:59Z",
                "classification": "internal",
                "content": {"po_number": ref},
            }
            for ref in event["candidates"]
        ],
        "dedupe_key": f"sfn:{event['execution']}:{checkpoint}",
    }
    with _desk() as desk:
        case = desk.file_case(packet)
    return {"case_id": case.id}


def cancel_case_handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    """Lambda ``exception-desk-cancel-case`` (the timeout branch)."""
    with _desk() as desk:
        for case_id in event.get("case_ids", []):
            try:
                desk.cancel(case_id, reason="The workflow stopped waiting (timeout).")
            except Conflict:
                logger.info("%s was decided just before the timeout; the decision stands", case_id)
    return {"status": "canceled"}


def resume_execution(event: DecisionEvent) -> str:
    """Hand the decision to the waiting execution. Returns "sent" or "terminal"."""
    sfn = boto3.client("stepfunctions")
    decision = {"case_id": event.case_id, "resolution": event.resolution, "fields": event.fields}
    try:
        if event.resolution in {"close_invalid", "deny", "reject_output"}:
            sfn.send_task_failure(
                taskToken=event.resume_handle,
                error="Desk.Closed",
                cause=json.dumps(decision)[:32768],
            )
        else:
            sfn.send_task_success(taskToken=event.resume_handle, output=json.dumps(decision))
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code in TERMINAL_ERRORS:
            logger.warning("execution no longer waits for %s: %s", event.case_id, code)
            return "terminal"
        raise  # throttling, service errors: the desk retries the webhook
    return "sent"


class DynamoDbSeenStore:
    """The verifier's seen store in DynamoDB: a conditional put is the atomic add_if_new."""

    def __init__(self, table_name: str) -> None:
        self.table = boto3.resource("dynamodb").Table(table_name)

    def add_if_new(self, webhook_id: str) -> bool:
        try:
            self.table.put_item(
                Item={"webhook_id": webhook_id},
                ConditionExpression="attribute_not_exists(webhook_id)",
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True


def webhook_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Lambda behind API Gateway (proxy integration) or a function URL."""
    verifier = WebhookVerifier(
        os.environ["DESK_WEBHOOK_SECRET"], DynamoDbSeenStore(os.environ["SEEN_TABLE"])
    )
    body = event.get("body") or ""
    try:
        decision = verifier.verify(body, event.get("headers") or {})
    except WebhookReplayed:
        return {"statusCode": 200, "body": '{"status": "duplicate"}'}
    except WebhookRejected as error:
        return {"statusCode": 400, "body": json.dumps({"error": str(error)})}
    if not decision.is_decision:
        return {"statusCode": 200, "body": '{"status": "noted"}'}
    outcome = resume_execution(decision)
    return {
        "statusCode": 410 if outcome == "terminal" else 200,
        "body": json.dumps({"status": outcome}),
    }


def pull_feed_handler(event: dict[str, Any], context: Any) -> dict[str, int]:
    """Lambda on an EventBridge schedule, for a workflow type without a callback URL."""
    counts = {"sent": 0, "terminal": 0}
    with _desk() as desk:
        for decision in desk.decisions():
            if decision.is_decision:
                counts[resume_execution(decision)] += 1
            desk.ack(decision)  # after SendTaskSuccess, or after a terminal error was logged
    return counts
