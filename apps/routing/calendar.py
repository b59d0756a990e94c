"""Business calendars, pure: service targets count working minutes only.

A calendar is a time zone, working hours per weekday (a missing weekday is closed) and
holidays: the public holidays of a country (and subdivision) from the maintained
`holidays` package, plus extra closed dates. No calendar means the wall clock.

All arithmetic on instants is done in UTC between local interval bounds, so a case that
spans a daylight-saving change is due after exactly the working time it was promised:
an hour of work is an hour of real time even on the night the clocks move.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

import holidays

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
ALWAYS_OPEN = {day: (("00:00", "24:00"),) for day in WEEKDAYS}
# A calendar whose open days are all holidays would loop forever; ten years of closed
# days means the calendar is misconfigured, and saying so beats hanging a filing.
MAX_DAYS_SCANNED = 3660


class CalendarError(ValueError):
    """The calendar cannot produce a due time (bad hours, or never open)."""


def _parse_time(value: str) -> tuple[int, int]:
    try:
        hours, minutes = (int(part) for part in str(value).split(":"))
    except ValueError as error:
        raise CalendarError(f"Working hours need HH:MM times, not {value!r}.") from error
    if not (0 <= hours <= 24 and 0 <= minutes < 60) or (hours == 24 and minutes):
        raise CalendarError(f"{value!r} is not a time of day.")
    return hours, minutes


@dataclass(frozen=True)
class CalendarSpec:
    """Plain data describing a business calendar; build one with `CalendarSpec.of(...)`."""

    time_zone: str = "UTC"
    # weekday ("mon".."sun") -> ((start, end), ...) as "HH:MM"; "24:00" closes at midnight.
    working_hours: Mapping[str, tuple[tuple[str, str], ...]] = field(
        default_factory=lambda: dict(ALWAYS_OPEN)
    )
    holiday_country: str = ""
    holiday_subdivision: str = ""
    extra_holidays: frozenset[date] = frozenset()
    name: str = ""

    def __post_init__(self) -> None:
        ZoneInfo(self.time_zone)  # fails early on an unknown zone
        for day, intervals in self.working_hours.items():
            if day not in WEEKDAYS:
                raise CalendarError(f"Unknown weekday {day!r}; use {', '.join(WEEKDAYS)}.")
            for start, end in intervals:
                if _parse_time(start) >= _parse_time(end):
                    raise CalendarError(f"{day}: {start}-{end} does not end after it starts.")

    @classmethod
    def of(cls, calendar: Any) -> CalendarSpec | None:
        """A spec from anything with a BusinessCalendar's attributes (or None for none)."""
        if calendar is None:
            return None
        hours = {
            day: tuple((str(start), str(end)) for start, end in intervals)
            for day, intervals in (calendar.working_hours or {}).items()
        }
        return cls(
            time_zone=calendar.time_zone or "UTC",
            working_hours=hours,
            holiday_country=calendar.holiday_country or "",
            holiday_subdivision=calendar.holiday_subdivision or "",
            extra_holidays=frozenset(
                date.fromisoformat(str(day)) for day in (calendar.extra_holidays or [])
            ),
            name=getattr(calendar, "name", "") or "",
        )

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.time_zone)

    def is_holiday(self, day: date) -> bool:
        if day in self.extra_holidays:
            return True
        if not self.holiday_country:
            return False
        return day in _public_holidays(self.holiday_country, self.holiday_subdivision, day.year)

    def intervals_on(self, day: date) -> list[tuple[datetime, datetime]]:
        """The day's working intervals as UTC instants (empty on a closed day)."""
        if self.is_holiday(day):
            return []
        zone = self.zone
        result = []
        for start, end in self.working_hours.get(WEEKDAYS[day.weekday()], ()):
            result.append((_instant(day, start, zone), _instant(day, end, zone)))
        return sorted(result)


@lru_cache(maxsize=256)
def _public_holidays(country: str, subdivision: str, year: int) -> frozenset[date]:
    found = holidays.country_holidays(country, subdiv=subdivision or None, years=year)
    return frozenset(found.keys())


def _instant(day: date, clock: str, zone: ZoneInfo) -> datetime:
    hours, minutes = _parse_time(clock)
    if hours == 24:
        day, hours = day + timedelta(days=1), 0
    # A wall time skipped by a DST jump (02:30 in spring) resolves forward, which is where
    # the working interval really starts; fold=0 picks the first of a repeated hour.
    local = datetime.combine(day, time(hours, minutes), tzinfo=zone)
    return local.astimezone(UTC)


def _working_intervals(start: datetime, spec: CalendarSpec) -> Iterator[tuple[datetime, datetime]]:
    """Working intervals (UTC) from the local day containing `start` onwards."""
    day = start.astimezone(spec.zone).date()
    open_days_seen = False
    for offset in range(MAX_DAYS_SCANNED):
        intervals = spec.intervals_on(day + timedelta(days=offset))
        if intervals:
            open_days_seen = True
        yield from intervals
    raise CalendarError(
        f"Calendar {spec.name or spec.time_zone} has no working time in "
        f"{MAX_DAYS_SCANNED} days" + ("" if open_days_seen else " (no open day at all)") + "."
    )


def due_at(start: datetime, minutes: int, calendar: CalendarSpec | None) -> datetime:
    """The instant `minutes` working minutes after `start` on the calendar.

    Outside working hours the clock waits for the next opening; a target that ends exactly
    at closing time is due at closing time, not at the next opening. No calendar: wall clock.
    """
    if start.tzinfo is None:
        raise CalendarError("due_at needs an aware datetime.")
    if calendar is None:
        return start + timedelta(minutes=minutes)
    remaining = timedelta(minutes=minutes)
    cursor = start.astimezone(UTC)
    if remaining <= timedelta(0):
        return start
    for opens, closes in _working_intervals(cursor, calendar):
        begin = max(cursor, opens)
        if begin >= closes:
            continue
        available = closes - begin
        if remaining <= available:
            return (begin + remaining).astimezone(start.tzinfo)
        remaining -= available
        cursor = closes
    raise AssertionError("unreachable: _working_intervals raises when exhausted")


def working_seconds_between(start: datetime, end: datetime, calendar: CalendarSpec | None) -> int:
    """Working seconds from `start` to `end` (negative when `end` is earlier)."""
    if start.tzinfo is None or end.tzinfo is None:
        raise CalendarError("working_seconds_between needs aware datetimes.")
    if end < start:
        return -working_seconds_between(end, start, calendar)
    if calendar is None:
        return int((end - start).total_seconds())
    zone = calendar.zone
    day, last_day = start.astimezone(zone).date(), end.astimezone(zone).date()
    total = timedelta(0)
    while day <= last_day:
        for opens, closes in calendar.intervals_on(day):
            overlap = min(closes, end) - max(opens, start)
            if overlap > timedelta(0):
                total += overlap
        day += timedelta(days=1)
    return int(total.total_seconds())
