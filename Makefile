# Every target creates .venv and installs what it needs if missing, so `make run` and
# `make test` work on a fresh clone: `make run` only the product, `make test` (and check,
# bench) the test extras too (Playwright, mypy, a PostgreSQL server), which running never needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
TEST_STAMP := $(VENV)/.test-installed-stamp

.PHONY: run test check lint typecheck suite lowest bench clean chromium

# uv installs exactly what uv.lock pins (about 3 s with its cache warm, where pip took 37 s to
# resolve and unpack): the uv on PATH, else one pip puts into the venv once. Where uv cannot be
# had, pip installs from pyproject.toml as before. `--inexact`: `make run` after `make test`
# keeps the test extras. After changing pyproject.toml's dependencies, run `.venv/bin/uv lock`.
UV := $(or $(shell command -v uv),$(BIN)/uv)
define install
	test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	test -x $(UV) || $(PYTHON) -m pip --python $(BIN)/python install --quiet uv==0.13.9 \
	  --disable-pip-version-check || echo "uv could not be installed: pip installs instead"
	if [ -x $(UV) ]; then $(UV) sync --locked --inexact --quiet $(1); else \
	  $(BIN)/python -m ensurepip --default-pip >/dev/null && $(BIN)/python -m pip install \
	    --quiet --disable-pip-version-check --no-compile -e '.$(2)'; fi
endef

$(STAMP): pyproject.toml uv.lock
	$(call install,,)
	touch $(STAMP)

# The suite starts hundreds of processes: the packages they import are compiled once here
# (about 8 s), since `make run` installs without compiling and PYTHONDONTWRITEBYTECODE, where
# it is set, keeps Python from caching what it compiles (each start then takes about twice as
# long). The project's own modules are compiled by tests/conftest.py as the suite starts.
$(TEST_STAMP): $(STAMP)
	$(call install,--extra test,[test])
	$(BIN)/python -m compileall -qq -j 0 $(VENV)/lib
	touch $(TEST_STAMP)

run: $(STAMP)
	$(BIN)/switchboard run

# deptry: what the product imports is declared, in its dependencies or extras (not only pulled
# in by another package), and each dependency is used; then the same of tests/ and bench/,
# which may use the test extra and need not use every dependency.
lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/deptry .
	$(BIN)/deptry tests bench --exclude '\.venv' --ignore DEP002,DEP004

typecheck: $(TEST_STAMP)
	$(BIN)/mypy

check: lint typecheck

# Six workers on two cores: most of the suite's time is spent waiting on loopback fakes,
# platform pacing and the processes it starts, not computing; worksteal keeps the long tests
# from ending up at one worker's tail (4:54 here against 5:36 with -n 4 and 5:58 without
# worksteal). -rfEs: the summary names failures, errors and skipped tests with why (the
# browser tests skip where there is no Chromium).
suite: $(TEST_STAMP) chromium
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -n 6 --dist worksteal -rfEs

# The lint first (seconds), then mypy beside the suite: a fresh clone's mypy takes about 25 s
# of one core with no cache, and alone it left the other core idle that long.
test: lint
	@$(MAKE) --no-print-directory -j 2 typecheck suite

# The browser tests (tests/admin/browser/) drive Debian's Chromium through Playwright
# (Playwright's own browser download is not used): its headless shell, the build Playwright
# itself runs headless tests on, a quarter less CPU than the full browser (which the tests
# take where only it is installed). Install it where we can: as root with apt-get, as in CI.
# Elsewhere say loudly that those tests will be skipped, and why.
DEBIAN_CHROMIUM := /usr/bin/chromium-headless-shell
CHROMIUM := $(or $(SWITCHBOARD_CHROMIUM),$(DEBIAN_CHROMIUM))
chromium:
	@if [ -x "$(CHROMIUM)" ] || { [ -z "$(SWITCHBOARD_CHROMIUM)" ] && [ -x /usr/bin/chromium ]; }; \
	  then exit 0; fi; \
	if [ "$(CHROMIUM)" = $(DEBIAN_CHROMIUM) ] && [ "$$(id -u)" = 0 ] \
	    && command -v apt-get >/dev/null; then \
	  echo "Installing Debian's chromium-headless-shell for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    chromium-headless-shell && [ -x "$(CHROMIUM)" ] && exit 0; \
	  why="apt-get install chromium-headless-shell failed"; \
	elif [ "$(CHROMIUM)" != $(DEBIAN_CHROMIUM) ]; then \
	  why="SWITCHBOARD_CHROMIUM names $(CHROMIUM), which is not an executable"; \
	else \
	  why="it is not installed, and installing it needs root and apt-get"; \
	fi; \
	echo "******************************************************************************"; \
	echo "WARNING: no Chromium at $(CHROMIUM): $$why."; \
	echo "The browser tests (tests/admin/browser/) will be SKIPPED."; \
	echo "Install it with: apt-get install chromium-headless-shell (as root), or set"; \
	echo "SWITCHBOARD_CHROMIUM to a Chromium executable."; \
	echo "******************************************************************************"

# A smoke subset of the tests (config, the Telegram and Slack adapters over their fakes, the
# Anthropic and OpenAI providers) on the lowest versions pyproject.toml allows, in a venv of
# its own (.venv/lowest): each floor proven, not guessed.
lowest: $(STAMP)
	.ci/lowest

bench: $(TEST_STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
