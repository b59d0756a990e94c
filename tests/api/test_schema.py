"""The OpenAPI schema documents every endpoint, and generates without warnings."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command

EXPECTED = {
    "/api/v1/cases": {"post": ("ReviewPacket", "Case")},
    "/api/v1/cases/{case_id}": {"get": (None, "Case")},
    "/api/v1/cases/{case_id}/evidence": {"post": ("EvidenceAppend", "Case")},
    "/api/v1/cases/{case_id}/side-effect": {"post": ("SideEffectReport", "Case")},
    "/api/v1/cases/{case_id}/cancel": {"post": ("Cancel", "Case")},
    "/api/v1/decisions": {"get": (None, "Feed")},
    "/api/v1/decisions/{event_id}/ack": {"post": (None, "Ack")},
}


def ref(content: dict) -> str:
    return content["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]


@pytest.mark.django_db
def test_schema_documents_every_endpoint_with_its_request_and_response(client):
    response = client.get("/api/schema/", {"format": "json"})

    assert response.status_code == 200
    schema = response.json()
    assert {path: set(ops) for path, ops in schema["paths"].items()} == {
        path: set(ops) for path, ops in EXPECTED.items()
    }
    for path, operations in EXPECTED.items():
        for method, (request_name, response_name) in operations.items():
            operation = schema["paths"][path][method]
            if request_name:
                assert ref(operation["requestBody"]["content"]) == request_name
            assert ref(operation["responses"]["200"]["content"]) == response_name
            assert operation["security"] == [{"ApiKey": []}]
            assert "401" in operation["responses"]
    assert ref(schema["paths"]["/api/v1/cases"]["post"]["responses"]["409"]["content"]) == (
        "Conflict"
    )
    packet = schema["components"]["schemas"]["ReviewPacket"]
    assert "class" in packet["required"]
    assert "chain_of_thought" not in packet["properties"]
    assert schema["components"]["securitySchemes"]["ApiKey"]["scheme"] == "bearer"


@pytest.mark.django_db
def test_schema_generates_without_warnings(tmp_path):
    call_command(
        "spectacular", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"), stdout=StringIO()
    )

    assert "/api/v1/decisions/{event_id}/ack" in (tmp_path / "schema.yml").read_text()


@pytest.mark.django_db
def test_api_docs_page_is_served(client):
    response = client.get("/api/docs/")

    assert response.status_code == 200
    assert b"swagger" in response.content.lower()


@pytest.mark.django_db
def test_api_docs_load_no_asset_from_a_cdn(client):
    page = client.get("/api/docs/").content.decode()

    assets = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert any(a.endswith("swagger-ui-bundle.js") for a in assets)
    assert all(a.startswith("/static/") for a in assets), assets
