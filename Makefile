# Flowgate's commands: `make help` lists them. The two of the README: `make run` and `make test`.
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
WEB_BIND ?= 127.0.0.1:8000
HOOKS_BIND ?= 127.0.0.1:8001
export WEB_BIND HOOKS_BIND

# The project pins Python 3.11 (pyproject.toml). PYTHON names the interpreter to make $(VENV) with;
# unset, the first 3.11 among these is taken.
PYTHON_CANDIDATES = $(or $(PYTHON),python3.11 $$(pyenv root 2>/dev/null)/versions/3.11*/bin/python3.11 python3 python)
IS_311 := import sys; sys.exit(sys.version_info[:2] != (3, 11))
NO_PYTHON := Flowgate needs Python 3.11. Install it (Debian and Ubuntu: apt install python3.11 python3.11-venv, \
from the deadsnakes PPA on older Ubuntu; macOS: brew install python@3.11; pyenv: pyenv install 3.11), \
or name one: make run PYTHON=/path/to/python3.11

.DEFAULT_GOAL := help
# Browser tests drive this Chromium (tests/e2e/browser.py); never one that playwright downloads.
CHROMIUM ?= /usr/bin/chromium

.PHONY: help install browser nginx run test lint clean

help: ## list these targets
	@echo "make TARGET, where TARGET is one of:"
	@sed -n 's/^\([a-z]*\):.*## \(.*\)/  \1\t\2/p' $(MAKEFILE_LIST) | expand -t 12

install: ## make .venv with Python 3.11 and install the project into it; a broken .venv is made anew
	@$(BIN)/python -c 'import django; $(IS_311)' 2>/dev/null || rm -f $(VENV)/.installed-*
	@$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) $(STAMP)
	@$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) browser
	@$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) nginx

browser: ## install Debian's chromium for the browser tests when $(CHROMIUM) is missing (apt-get, as root)
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  if [ "$$(id -u 2>/dev/null)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's chromium for the browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "no $(CHROMIUM): browser tests will be skipped (Debian and Ubuntu: sudo apt-get install chromium)" >&2; \
	  fi; \
	fi

nginx: ## install Debian's nginx for the several-machines test when it is missing (apt-get, as root; never started)
	@if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then \
	  if [ "$$(id -u 2>/dev/null)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's nginx for the several-machines test"; \
	    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null; \
	    rm -f /usr/sbin/policy-rc.d; \
	  else \
	    echo "no nginx: the several-machines test will be skipped (Debian and Ubuntu: sudo apt-get install nginx-light)" >&2; \
	  fi; \
	fi

$(STAMP): pyproject.toml
	@if ! $(BIN)/python -c '$(IS_311)' 2>/dev/null; then \
	  python=; \
	  for candidate in $(PYTHON_CANDIDATES); do \
	    if "$$candidate" -c '$(IS_311)' 2>/dev/null; then python=$$(command -v "$$candidate"); break; fi; \
	  done; \
	  if [ -z "$$python" ]; then \
	    if [ -n "$(PYTHON)" ]; then echo "PYTHON=$(PYTHON) is not Python 3.11." >&2; fi; \
	    echo "$(NO_PYTHON)" >&2; exit 1; \
	  fi; \
	  if [ -e $(VENV) ]; then echo "$(VENV) is not a Python 3.11 environment: making it anew with $$python"; \
	  else echo "making $(VENV) with $$python"; fi; \
	  rm -rf $(VENV); \
	  "$$python" -m venv $(VENV) || { rm -rf $(VENV); \
	    echo "$$python -m venv failed (Debian and Ubuntu: apt install python3.11-venv)" >&2; exit 1; }; \
	fi
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet ".[dev]"
	rm -f $(VENV)/.installed-*
	touch $@

# Starts web, hooks, worker and beat with the demo catalog. Without DATABASE_URL and
# REDIS_URL it runs on the embedded default (SQLite, file broker and cache).
# DEBUG defaults to on here so no SECRET_KEY is needed to try it out: a random one is made
# once per install in var/. Settings refuse DEBUG when WEB_BIND or HOOKS_BIND is not loopback.
run: export DEBUG ?= 1
# Anyone may sign up at /signup; the confirmation mail is printed by the console email backend.
run: export SIGNUP_OPEN ?= 1
# The printed URLs must be an allowed host: the public URL follows the bind address.
run: export BASE_URL ?= http://$(WEB_BIND)
# Webhook and web service URLs are served by the hooks process (config/asgi.py), as in production.
run: export HOOKS_URL ?= http://$(HOOKS_BIND)
# A line each process prints once it is up, from each of a gunicorn master's WEB_CONCURRENCY workers: the banner
# waits for all of them (edge/procfile.py).
WORKERS = $(or $(WEB_CONCURRENCY),2)
READY = --ready 'web*$(WORKERS)=Booting worker' --ready 'hooks*$(WORKERS)=Application startup complete' \
  --ready 'worker=celery@\S+ ready' --ready 'beat=beat: schedule ready'
# A second make run stops before it migrates when WEB_BIND or HOOKS_BIND is taken (edge/binds.py).
# The demo automations' URLs and the closing banner (with the admin's password, the first time) are
# printed once every process is up, after start-up's output. --under-make: a SIGINT or SIGTERM sent to
# make's pid alone (by an IDE, a supervisor) stops every process, as Ctrl-C does.
run: install ## migrate, load the demo catalog and automations (the first time), start every process; Ctrl-C stops
	@$(BIN)/python -m edge.binds
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py load_demo --first-time
	@banner="$$($(BIN)/python -m accounts.run_banner)" && \
	  demos="$$($(BIN)/python -m interfaces.demo_automations)" && \
	  echo "starting web, hooks, worker and beat: the URLs to try follow once all four are up" && \
	  PROCFILE_BANNER="$$(printf '%s\n\n%s' "$$demos" "$$banner")" PATH="$(CURDIR)/$(BIN):$$PATH" \
	  exec $(BIN)/python -m edge.procfile --under-make $(READY) Procfile

# The suite runs in TEST_PROCESSES processes (pytest-xdist), each test file whole in one of them, so a
# file's end-to-end stack starts once; each process has its own test database, Redis database and var/
# directory (config/test_settings.py). TEST_PROCESSES=0 runs it in this process alone. The 25 slowest tests are
# listed at the end: the suite is kept well under 30 minutes on 2 cores.
TEST_PROCESSES ?= 2
test: install ## run the whole suite on DATABASE_URL and REDIS_URL, or on the embedded default
	$(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadfile --durations 25

lint: install ## ruff check and ruff format --check (settings in pyproject.toml)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean: ## delete .venv, staticfiles/ AND THE DATA in var/ (the embedded default's database: automations, runs)
	@echo "deleting .venv, staticfiles/ and var/: the embedded default's database (automations, runs, users)," \
	  "broker, cache and development secret"
	rm -rf $(VENV) staticfiles var
