"""`manage.py simulate_workflows` files cases through the real HTTP API as a test source and
leaves no usable key behind."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from apps.cases import demo
from apps.cases.models import Case
from apps.workflows.models import ApiKey


@pytest.mark.django_db(transaction=True)
def test_simulator_files_test_cases_through_the_api_and_revokes_its_key(live_server):
    call_command("seed_demo", "--allow-no-debug", stdout=StringIO())
    before = set(Case.objects.values_list("id", flat=True))
    out = StringIO()
    call_command(
        "simulate_workflows",
        "--url",
        f"{live_server.url}/api/v1/cases",
        "--count",
        "3",
        "--interval",
        "0",
        "--seed",
        "7",
        stdout=out,
    )
    new = Case.objects.exclude(id__in=before)
    assert new.count() == 3
    assert all(case.is_test for case in new)
    assert {case.source.name for case in new} == {demo.SIMULATOR_SOURCE}
    for case in new:
        assert case.id in out.getvalue()
    keys = ApiKey.objects.filter(source__name=demo.SIMULATOR_SOURCE)
    assert keys.count() == 1
    assert keys.get().revoked_at is not None


@pytest.mark.django_db
def test_simulator_without_the_demo_workflow_types_asks_for_the_seed():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="seed_demo"):
        call_command("simulate_workflows", "--count", "1", stdout=StringIO())
    assert not ApiKey.objects.exists()
