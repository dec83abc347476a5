# One entry point per job. Each target creates .venv and installs on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest bench schema web-vendor clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)  ## offline demo: the agent writes and runs hello.py against the built-in mock LLM
	$(BIN)/python -m agentctl.demo

test: $(STAMP) lint typecheck pytest  ## lint, type-check and run the whole test suite

pytest: $(STAMP)  ## the test suite alone; pytest's exit 5 (no tests collected) is a failure
	$(BIN)/python -m pytest -q; rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

lint: $(STAMP)
	$(BIN)/ruff check daemon clients tests
	$(BIN)/ruff format --check daemon clients tests

typecheck: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)  ## run every benchmark and print the tables
	$(BIN)/python -m tests.bench

schema: $(STAMP)  ## regenerate schemas/*.json from the wire types
	$(BIN)/agentd schema

WEB := daemon/agentd/web
VENDOR_OUT ?= $(WEB)/ui/vendor

web-vendor:  ## rebuild the web chat's vendored marked and DOMPurify from web/package-lock.json
	cd $(WEB) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	node $(WEB)/vendor.mjs $(abspath $(VENDOR_OUT))

clean:
	rm -rf $(VENV)
