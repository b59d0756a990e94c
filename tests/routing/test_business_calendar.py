"""Service targets count working time only: the calendar's time zone, working hours,
weekends and public holidays (from the `holidays` package), safely across DST changes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from apps.routing.calendar import CalendarError, CalendarSpec, due_at, working_seconds_between

BERLIN = ZoneInfo("Europe/Berlin")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri")


def nine_to_five(**extra: object) -> CalendarSpec:
    """Monday to Friday, 09:00-17:00 in Berlin."""
    hours = {day: (("09:00", "17:00"),) for day in WEEKDAYS}
    return CalendarSpec(time_zone="Europe/Berlin", working_hours=hours, **extra)  # type: ignore[arg-type]


GERMANY = nine_to_five(holiday_country="DE")


def berlin(*args: int) -> datetime:
    return datetime(*args, tzinfo=BERLIN)


def test_without_a_calendar_the_target_runs_on_the_wall_clock():
    start = datetime(2026, 9, 4, 16, 30, tzinfo=UTC)  # a Friday afternoon
    assert due_at(start, 120, None) == start + timedelta(hours=2)
    assert working_seconds_between(start, start + timedelta(days=3), None) == 3 * 86400


def test_a_case_filed_friday_afternoon_is_due_monday_morning():
    filed = berlin(2026, 9, 4, 16, 30)  # Friday: 30 working minutes left today

    due = due_at(filed, 120, GERMANY)

    assert due == berlin(2026, 9, 7, 10, 30)  # Monday: 09:00 + the remaining 90 minutes
    assert working_seconds_between(filed, due, GERMANY) == 2 * 3600


def test_a_target_that_ends_at_closing_time_is_due_at_closing_time():
    assert due_at(berlin(2026, 9, 4, 15, 0), 120, GERMANY) == berlin(2026, 9, 4, 17, 0)


def test_a_case_filed_before_opening_starts_counting_at_opening():
    assert due_at(berlin(2026, 9, 7, 6, 45), 30, GERMANY) == berlin(2026, 9, 7, 9, 30)


def test_a_public_holiday_is_skipped():
    # Thursday 14 May 2026 is Ascension Day, a public holiday everywhere in Germany.
    filed = berlin(2026, 5, 13, 16, 0)

    due = due_at(filed, 120, GERMANY)

    assert due == berlin(2026, 5, 15, 10, 0)  # 1 h on Wednesday, 1 h on Friday
    without_holidays = nine_to_five()
    assert due_at(filed, 120, without_holidays) == berlin(2026, 5, 14, 10, 0)


def test_a_regional_holiday_counts_only_for_its_subdivision():
    # Corpus Christi (Thursday 4 June 2026) is a holiday in Bavaria, not in Berlin.
    filed = berlin(2026, 6, 3, 16, 0)
    bavaria = nine_to_five(holiday_country="DE", holiday_subdivision="BY")
    berlin_state = nine_to_five(holiday_country="DE", holiday_subdivision="BE")

    assert due_at(filed, 120, bavaria) == berlin(2026, 6, 5, 10, 0)
    assert due_at(filed, 120, berlin_state) == berlin(2026, 6, 4, 10, 0)


def test_extra_closed_dates_are_skipped_with_the_public_holidays():
    # 24 Dec is not a public holiday; the desk closes anyway. 25/26 Dec are, 27 is Sunday.
    calendar = nine_to_five(holiday_country="DE", extra_holidays=frozenset({date(2026, 12, 24)}))

    due = due_at(berlin(2026, 12, 23, 16, 0), 120, calendar)

    assert due == berlin(2026, 12, 28, 10, 0)


def test_working_hours_are_local_time_across_the_autumn_clock_change():
    # Clocks go back on Sunday 25 Oct 2026: Friday 16:00 is 14:00 UTC, Monday 09:00 is
    # 08:00 UTC. The due time is Monday 10:00 local, which is one hour "later" in UTC terms
    # than naive UTC arithmetic on Friday's offset would give.
    filed = berlin(2026, 10, 23, 16, 0)

    due = due_at(filed, 120, GERMANY)

    assert due == berlin(2026, 10, 26, 10, 0)
    assert due.astimezone(UTC) == datetime(2026, 10, 26, 9, 0, tzinfo=UTC)
    assert working_seconds_between(filed, due, GERMANY) == 2 * 3600


def test_round_the_clock_calendar_counts_real_hours_on_the_short_spring_day():
    # Sunday 29 Mar 2026 has 23 hours in Berlin; a 24 h target is still 24 real hours.
    around_the_clock = CalendarSpec(time_zone="Europe/Berlin")
    filed = berlin(2026, 3, 28, 12, 0)

    due = due_at(filed, 24 * 60, around_the_clock)

    # (Aware datetimes in one zone subtract as wall times, so compare in UTC.)
    assert due.astimezone(UTC) - filed.astimezone(UTC) == timedelta(hours=24)
    assert due.astimezone(BERLIN).hour == 13  # 12:00 CET + 24 h = 13:00 CEST
    assert working_seconds_between(filed, due, around_the_clock) == 24 * 3600


def test_working_seconds_between_is_negative_when_the_due_time_has_passed():
    due = berlin(2026, 9, 7, 10, 30)
    now = berlin(2026, 9, 7, 11, 0)
    assert working_seconds_between(now, due, GERMANY) == -30 * 60


def test_working_seconds_ignore_the_weekend_and_the_night():
    friday_noon, monday_noon = berlin(2026, 9, 4, 12, 0), berlin(2026, 9, 7, 12, 0)
    assert working_seconds_between(friday_noon, monday_noon, GERMANY) == 8 * 3600


def test_a_calendar_that_is_never_open_is_an_error_not_a_hang():
    closed = CalendarSpec(time_zone="UTC", working_hours={})
    with pytest.raises(CalendarError, match="no working time"):
        due_at(datetime(2026, 9, 4, tzinfo=UTC), 60, closed)


def test_hours_that_end_before_they_start_are_rejected():
    with pytest.raises(CalendarError, match="does not end after it starts"):
        CalendarSpec(working_hours={"mon": (("17:00", "09:00"),)})


def test_a_spec_is_built_from_a_stored_calendar():
    class Stored:
        name = "eu-finance"
        time_zone = "Europe/Berlin"
        working_hours = {"fri": [["09:00", "17:00"]]}
        holiday_country = "DE"
        holiday_subdivision = ""
        extra_holidays = ["2026-12-24"]

    spec = CalendarSpec.of(Stored())

    assert spec is not None
    assert spec.working_hours == {"fri": (("09:00", "17:00"),)}
    assert spec.is_holiday(date(2026, 12, 24)) and spec.is_holiday(date(2026, 12, 25))
    assert CalendarSpec.of(None) is None
