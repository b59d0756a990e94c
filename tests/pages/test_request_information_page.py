"""Request information from the page: the case waits (not a decision), and a recorded
answer opens it again."""

from __future__ import annotations

from django.urls import reverse

from apps.cases.models import Decision, OutboxEvent, State

from .conftest import hidden_value


def test_request_information_then_record_answer_returns_the_case_to_open(
    claimed_case, worker, client_for
):
    client = client_for(worker)
    detail_url = reverse("cases:detail", args=[claimed_case.pk])
    page = client.get(detail_url).content.decode()
    assert 'id="request-question"' in page

    asked = client.post(
        reverse("cases:request_information", args=[claimed_case.pk]),
        {
            "expected_version": hidden_value(page, "expected_version"),
            "lease_token": claimed_case.lease_token,
            "question": "Which PO did the buyer approve?",
            "asked_of": "buyer@acme.example",
        },
    )

    assert asked.status_code == 302
    claimed_case.refresh_from_db()
    assert claimed_case.state == State.WAITING and claimed_case.assignee is None
    assert claimed_case.waiting_on["asked_of"] == "buyer@acme.example"
    assert not Decision.objects.exists()
    # evidence_conflict tells the workflow what is missing.
    assert OutboxEvent.objects.get(case=claimed_case).type == "case.information_requested"
    waiting_page = client.get(detail_url).content.decode()
    assert "Which PO did the buyer approve?" in waiting_page
    assert 'id="answer"' in waiting_page

    answered = client.post(
        reverse("cases:record_answer", args=[claimed_case.pk]), {"answer": "PO 781, per buyer"}
    )

    assert answered.status_code == 302
    claimed_case.refresh_from_db()
    assert claimed_case.state == State.OPEN
    assert claimed_case.waiting_on["answer"] == "PO 781, per buyer"


def test_request_without_question_is_422_with_errors_at_both_fields(
    claimed_case, worker, client_for
):
    response = client_for(worker).post(
        reverse("cases:request_information", args=[claimed_case.pk]),
        {
            "expected_version": str(claimed_case.version),
            "lease_token": claimed_case.lease_token,
            "question": " ",
            "asked_of": "",
        },
    )

    page = response.content.decode()
    assert response.status_code == 422
    assert "Say what information is needed." in page
    assert "Say whom you are asking." in page
    assert 'aria-describedby="request-question-error"' in page
    claimed_case.refresh_from_db()
    assert claimed_case.state == State.CLAIMED


def test_recording_an_empty_answer_is_refused_at_the_field(claimed_case, worker, client_for):
    client = client_for(worker)
    client.post(
        reverse("cases:request_information", args=[claimed_case.pk]),
        {
            "expected_version": str(claimed_case.version),
            "lease_token": claimed_case.lease_token,
            "question": "Which PO?",
            "asked_of": "buyer",
        },
    )

    response = client.post(reverse("cases:record_answer", args=[claimed_case.pk]), {"answer": ""})

    assert response.status_code == 422
    assert "Write down the answer you received." in response.content.decode()
    claimed_case.refresh_from_db()
    assert claimed_case.state == State.WAITING
