# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
WEB_BIND ?= 127.0.0.1:8000
HOOKS_BIND ?= 127.0.0.1:8001
export WEB_BIND HOOKS_BIND

.PHONY: install run test migrate demo clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet ".[dev]"
	rm -f $(VENV)/.installed-*
	touch $@

# Starts web, hooks, worker and beat with the demo catalog. Without DATABASE_URL and
# REDIS_URL it runs on the embedded default (SQLite, file broker and cache).
# DEBUG defaults to on here so no SECRET_KEY is needed to try it out: a random one is made
# once per install in var/. Settings refuse DEBUG when WEB_BIND or HOOKS_BIND is not loopback.
run: export DEBUG ?= 1
# The printed URLs must be an allowed host: the public URL follows the bind address.
run: export BASE_URL ?= http://$(WEB_BIND)
# Webhook and web service URLs are served by the hooks process (config/asgi.py), as in production.
run: export HOOKS_URL ?= http://$(HOOKS_BIND)
run: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py load_demo
	@$(BIN)/python -m config.first_admin
	@$(BIN)/python manage.py import_automation automations/demo/record-and-answer.json --owner admin --on
	@echo
	@echo "Flowgate is starting on $$BASE_URL"
	@echo "  catalog feed  $$BASE_URL/catalog/v1/apps"
	@echo "  one app       $$BASE_URL/catalog/v1/apps/acorn-crm"
	@echo "  bulk          $$BASE_URL/catalog/v1/bulk"
	@echo "  OpenAPI       $$BASE_URL/catalog/v1/openapi.json"
	@echo "  admin         $$BASE_URL/admin/  (user admin; its password is printed above on the first start)"
	@echo "  webhooks and web services on $$HOOKS_URL (the hooks process)"
	@echo "  try the demo automation: curl -d '{\"email\": \"ada@example.com\"}' <its web service or webhook URL above>"
	@echo
	PATH="$(CURDIR)/$(BIN):$$PATH" exec $(BIN)/honcho start -f Procfile

test: install
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) var staticfiles
