# One entry point per job. Each target creates .venv and installs on first use.
PY ?= python3
export NPM_CONFIG_UPDATE_NOTIFIER := false
export NPM_CONFIG_FUND := false
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Some shells export PYTHONDONTWRITEBYTECODE=1; every Python process a recipe starts (the
# suite starts hundreds of real agentd/agentctl processes) would then compile its ~300 modules
# again. Recipes run without it, and the install compiles the sources once.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: lock demo docs test test-fast lint typecheck pytest bench bench-smoke schema web-vendor vscode-build vscode-test vscode-vsix ui-typecheck mcp-npm langserver-npm clean

LOCK := requirements.lock

# Installs come from the lock file: a library's new release cannot change what a fresh
# `make test` runs. `make lock` moves the lock to the newest versions pyproject.toml allows.
$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c $(LOCK) pip
	@# setuptools' editable-install banner is advice for package authors, not for this install
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install --quiet -c $(LOCK) -e '.[dev]'
	@# a cache only: a file that does not compile (a test's broken fixture) is named, not fatal
	$(BIN)/python -m compileall -q -j 0 -x /node_modules/ daemon clients tests || true
	touch $(STAMP)

lock:  ## regenerate requirements.lock from a fresh venv with the newest allowed versions
	.ci/newest --write-lock

demo: $(STAMP)  ## offline demo: the agent writes and runs hello.py against the built-in mock LLM
	$(BIN)/python -m agentctl.demo

test: $(STAMP) lint typecheck docs vscode-test pytest  ## lint, type-check, build the docs and run the whole test suite

# The suite mostly waits on real processes, so more workers than cores pays off: three per
# core, less the 1-minute load average already on the machine (its whole part), never
# fewer than two. An idle 2-core machine gets 6, one at load 3 gets 3, one at load 25 gets 2.
# --dist loadfile keeps each file on one worker (module-scoped daemons stay shared); tests
# marked serial (code-server's workbench, too heavy beside the others) run afterwards in one
# process, even when the parallel run failed. pytest's exit 5 (no tests collected) fails the
# parallel run; the serial run may legitimately select nothing. The last lines name every layer
# that skipped tests and why (tests/conftest.py), and whether each run passed. Deadlines in the
# tests scale with AGENTD_TEST_SLOWDOWN (default: 2 on two cores or fewer, more when the
# machine is already loaded; tests/harness.py).
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); l=$$(cut -d. -f1 /proc/loadavg 2>/dev/null || echo 0); w=$$((3 * n - $${l:-0})); echo $$((w < 2 ? 2 : w)))
LAYER_REPORT := .pytest-layers.txt
PYTEST_PARALLEL = -n $(PYTEST_WORKERS) --dist loadfile
FAST_MARKERS = not e2e and not serial and not nested
FAST_SKIP = --ignore=tests/vscode --ignore=tests/web --ignore=tests/nvim --ignore=tests/lsp_editors

test-fast: $(STAMP) lint typecheck  ## inner loop: lint, type-check, tests without e2e/editor/browser/nested-make layers
	$(BIN)/python -m pytest -q $(PYTEST_PARALLEL) -m "$(FAST_MARKERS)" $(FAST_SKIP); \
	rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

pytest: $(STAMP) mcp-npm langserver-npm  ## the test suite alone; pytest's exit 5 (no tests collected) is a failure
	@rm -f $(LAYER_REPORT)
	AGENTD_LAYER_REPORT=$(abspath $(LAYER_REPORT)) $(BIN)/python -m pytest -q $(PYTEST_PARALLEL) -m "not serial"; \
	par=$$?; if [ $$par -eq 5 ]; then echo "pytest collected no tests" >&2; par=1; fi; \
	AGENTD_LAYER_REPORT=$(abspath $(LAYER_REPORT)) $(BIN)/python -m pytest -q -m serial; \
	ser=$$?; if [ $$ser -eq 5 ]; then ser=0; fi; \
	echo "== test layers =="; [ -f $(LAYER_REPORT) ] && cat $(LAYER_REPORT) || echo "no layer skipped tests"; \
	echo "parallel run: $$( [ $$par -eq 0 ] && echo passed || echo "FAILED (exit $$par)" ); serial run (code-server): $$( [ $$ser -eq 0 ] && echo passed || echo "FAILED (exit $$ser)" )"; \
	[ $$par -eq 0 ] && [ $$ser -eq 0 ]

lint: $(STAMP)
	$(BIN)/ruff check daemon clients tests docs/hooks
	$(BIN)/ruff format --check daemon clients tests docs/hooks

typecheck: $(STAMP)
	$(BIN)/mypy

# The site: docs/, the README as its home page and the package READMEs they link to
# (docs/hooks/repo_links.py). Offline (no web fonts, no plugins that fetch); --strict fails on
# a broken link or anchor. The runnable snippets run in tests/test_docs.py.
docs: $(STAMP)  ## build the documentation site into .site/ (mkdocs build --strict)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

bench: $(STAMP)  ## run every benchmark and print the tables
	$(BIN)/python -m tests.bench

# every bench module once on a token size (tests/bench/smoke.py); `make test` runs the same
# through tests/test_bench_smoke.py. Numbers of a smoke run mean nothing; no budget is judged.
bench-smoke: $(STAMP)  ## run every benchmark once on a tiny size (checks they still run)
	AGENTD_BENCH_SMOKE=1 $(BIN)/python -m tests.bench

schema: $(STAMP)  ## regenerate schemas/*.json from the wire types (and protocol.ts / the web UI's protocol.d.ts)
	$(BIN)/agentd schema
	$(MAKE) -s $(VSCODE_DEPS) && cd $(VSCODE) && node scripts/gen-protocol.mjs

WEB := daemon/agentd/web
VENDOR_OUT ?= $(WEB)/ui/vendor

web-vendor:  ## rebuild the web chat's vendored marked and DOMPurify from web/package-lock.json
	cd $(WEB) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	node $(WEB)/vendor.mjs $(abspath $(VENDOR_OUT))

VSCODE := editors/vscode
VSCODE_DEPS := $(VSCODE)/node_modules/.installed
NPM_CI := npm ci --ignore-scripts --no-audit --no-fund --loglevel=error

$(VSCODE_DEPS): $(VSCODE)/package-lock.json
	cd $(VSCODE) && $(NPM_CI)
	touch $@

# The bundles and the .vsix are files that make rebuilds only when an input changed, so the
# tests (tests/vscode/conftest.py) and `make test` build them once per change, not once per use.
VSCODE_BUILT := $(VSCODE)/dist/.built
VSIX := $(VSCODE)/dist/agentd-vscode.vsix
VSCODE_INPUTS := $(shell find $(VSCODE)/src $(WEB)/ui -type f 2>/dev/null) \
	$(VSCODE)/esbuild.mjs $(VSCODE)/package.json $(VSCODE)/tsconfig.json
VSIX_INPUTS := $(shell find $(VSCODE)/media -type f 2>/dev/null) $(wildcard $(VSCODE)/*.md $(VSCODE)/LICENSE* $(VSCODE)/.vscodeignore)

vscode-build: $(VSCODE_BUILT)  ## bundle the VS Code extension (editors/vscode/dist) and type-check it

$(VSCODE_BUILT): $(VSCODE_DEPS) $(VSCODE_INPUTS)
	$(VSCODE)/node_modules/.bin/tsc -p $(WEB)/ui
	cd $(VSCODE) && node esbuild.mjs && node_modules/.bin/tsc --noEmit -p .
	touch $@

ui-typecheck: $(VSCODE_DEPS)  ## type-check the chat UI's JavaScript against the generated protocol.d.ts
	$(VSCODE)/node_modules/.bin/tsc -p $(WEB)/ui

# a .vsix that vsce left half-written is not kept as up to date
.DELETE_ON_ERROR:

vscode-vsix: $(VSIX)  ## package editors/vscode/dist/agentd-vscode.vsix (offline)

$(VSIX): $(VSCODE_BUILT) $(VSIX_INPUTS)
	cd $(VSCODE) && node_modules/.bin/vsce package --no-dependencies --allow-missing-repository \
		--skip-license -o dist/agentd-vscode.vsix >/dev/null

vscode-test: $(STAMP) vscode-vsix  ## the extension's node --test layer (real daemon), protocol.ts drift
	@# code-server (for tests/vscode) installs in the background meanwhile; the tests wait for it
	@# and print its error when it failed (the log stays in .code-server/setup.log)
	@mkdir -p $(VSCODE)/.code-server
	@($(VSCODE)/scripts/setup-code-server.sh >$(VSCODE)/.code-server/setup.log 2>&1 &)
	@# four test files at a time: they wait on their own daemons (node's default is cores - 1)
	cd $(VSCODE) && node --test --test-concurrency=4 test/*.test.mjs

# The npm packages the MCP tests run (the Inspector, the reference servers), one folder each
# with its lock file; the stamp holds the lock's sha256, as tests/mcp/npm.py (which installs a
# folder on first use when pytest runs without make) expects. Without npm the tests skip.
MCP_NPM := $(patsubst %/package-lock.json,%/node_modules/.lock-sha256,$(wildcard tests/mcp/*/package-lock.json))

mcp-npm: $(MCP_NPM)  ## install the npm MCP packages of tests/mcp (npm ci)

tests/mcp/%/node_modules/.lock-sha256: tests/mcp/%/package-lock.json
	@if command -v npm >/dev/null; then \
		cd tests/mcp/$* && $(NPM_CI) && sha256sum package-lock.json | cut -d' ' -f1 >node_modules/.lock-sha256; \
	else echo "npm is not installed: the MCP tests that need npm packages will skip"; fi

LANGSERVER_NPM := tests/langserver/typescript/node_modules/.lock-sha256
langserver-npm: $(LANGSERVER_NPM)  ## install typescript-language-server for tests/langserver (npm ci)

$(LANGSERVER_NPM): tests/langserver/typescript/package-lock.json
	@if command -v npm >/dev/null; then \
		cd tests/langserver/typescript && $(NPM_CI) && sha256sum package-lock.json | cut -d' ' -f1 >node_modules/.lock-sha256; \
	else echo "npm is not installed: the TypeScript language server tests will skip"; fi

clean:
	rm -rf $(VENV)
