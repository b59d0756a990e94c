"""The page frame every screen shares, and the login page."""

from __future__ import annotations

import json
import re

from django.urls import reverse


def test_frame_has_language_skip_link_landmarks_live_region_and_local_htmx(worker, client_for):
    page = client_for(worker).get("/").content.decode()

    assert '<html lang="en">' in page
    assert '<a class="skip-link" href="#main">' in page and '<main id="main"' in page
    assert '<nav aria-label="Main">' in page
    assert '<div id="announcer" class="visually-hidden" aria-live="polite" role="status">' in page
    scripts = re.findall(r'<script src="([^"]+)"', page)
    assert scripts and all(src.startswith("/static/") for src in scripts)  # no CDN
    assert any("htmx-2" in src for src in scripts)
    assert re.search(r'<body hx-headers=\'\{"X-CSRFToken": "[^"]+"\}\'', page)
    # Logout is a POST form (Django 5 refuses GET logout).
    assert re.search(r'<form method="post" action="/accounts/logout/"', page)
    assert 'href="/api/docs/"' in page


def test_htmx_is_configured_to_swap_409_and_422_responses(worker, client_for):
    page = client_for(worker).get("/").content.decode()

    config = json.loads(re.search(r'<meta name="htmx-config" content=\'([^\']+)\'', page)[1])
    rules = config["responseHandling"]

    def first_rule_for(status: str) -> dict:
        return next(rule for rule in rules if re.fullmatch(rule["code"], status))

    assert first_rule_for("409")["swap"] is True
    assert first_rule_for("422")["swap"] is True
    assert first_rule_for("204")["swap"] is False
    assert first_rule_for("403")["swap"] is False and first_rule_for("403")["error"] is True
    assert first_rule_for("200")["swap"] is True


def test_login_page_labels_fields_and_reports_a_failed_login_accessibly(worker, client_for):
    client = client_for(None)

    blank = client.get(reverse("login")).content.decode()
    failed = client.post(reverse("login"), {"username": "wendy", "password": "wrong"})

    assert '<label for="id_username">' in blank and '<label for="id_password">' in blank
    page = failed.content.decode()
    assert failed.status_code == 200
    assert "There is a problem" in page and "Please enter a correct username" in page
    assert page.count('aria-invalid="true"') == 2
    assert page.count('aria-describedby="login-error"') == 2


def test_login_with_the_right_password_opens_the_queue(worker, client_for):
    response = client_for(None).post(
        reverse("login"), {"username": "wendy", "password": "pw-wendy"}
    )

    assert response.status_code == 302 and response["Location"] == reverse("cases:queue")


def test_anonymous_visitor_is_sent_to_login_with_the_page_to_return_to(client_for):
    response = client_for(None).get("/?state=open")

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/%3Fstate%3Dopen"


def test_every_hx_get_element_also_has_a_real_href(
    worker, file_invoice_case, claimed_case, client_for
):
    client = client_for(worker)
    pages = [
        client.get("/").content.decode(),
        client.get(reverse("cases:detail", args=[claimed_case.pk])).content.decode(),
    ]

    tags = [tag for page in pages for tag in re.findall(r"<[a-z]+\b[^>]*\bhx-get=[^>]*>", page)]
    assert tags, "the queue polls through an hx-get link"
    for tag in tags:
        get = re.search(r'hx-get="([^"]*)"', tag)[1]
        assert re.search(rf'\bhref="{re.escape(get)}"', tag), tag
