# Exception Desk: `make run` (demo desk on this machine) and `make test` (the whole suite).
# GNU make. Everything installs into .venv; a stamp re-runs pip when pyproject.toml changes.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
DESK_HOST ?= 127.0.0.1
DESK_PORT ?= 8000
SIMULATE_INTERVAL ?= 45
# Extra arguments for pytest, e.g. `make test PYTEST_ARGS="tests/smoke -x"`.
PYTEST_ARGS ?=

export DESK_HOST DESK_PORT SIMULATE_INTERVAL

.PHONY: help run test check clean

help:
	@echo "make run    set up .venv, migrate, seed the demo, start web + worker + beat + simulator"
	@echo "make test   set up .venv with dev tools, ruff check, then pytest (PostgreSQL + Redis)"
	@echo "make check  ruff check + format check, manage.py check, missing migrations"
	@echo "make clean  remove .venv, var/ (embedded database and broker) and caches"

$(PY):
	$(PYTHON) -m venv $(VENV)

# The main dependencies only (what `make run` needs).
$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

# The main and the dev dependencies (pytest, Playwright's Python package, ruff). Browsers are
# never downloaded: the browser tests drive Debian's /usr/bin/chromium.
$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed

run: $(VENV)/.installed
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo --base-url http://$(DESK_HOST):$(DESK_PORT) --allow-no-debug
	@# runserver serves static files itself while DEBUG is on; without DEBUG, WhiteNoise
	@# serves the collected copy.
	@case "$${DEBUG:-true}" in 0|false|False|no|off) $(PY) manage.py collectstatic --noinput -v0;; esac
	@echo
	@echo "Exception Desk: http://$(DESK_HOST):$(DESK_PORT)/   (API docs: /api/docs/, admin: /admin/)"
	@echo "Database: $${DATABASE_URL:-embedded SQLite in var/}; broker: $${CELERY_BROKER_URL:-$${REDIS_URL:-embedded filesystem broker in var/broker}}"
	@echo "Starting web, Celery worker, beat and the workflow simulator. Ctrl-C stops them all."
	@echo
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/honcho start -f Procfile

test: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) manage.py makemigrations --check --dry-run
	$(BIN)/pytest $(PYTEST_ARGS)

check: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(PY) manage.py check
	$(PY) manage.py makemigrations --check --dry-run

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache .mypy_cache test-artifacts build *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
