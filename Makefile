# posenc: set up, test, demo and benchmark. Needs only a Python 3.11 with venv (and, for the
# grading sandbox, Debian's bubblewrap, which `make install` installs when run as root).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# nbgrader runs `alembic` in a subprocess: the venv's bin/ must be on PATH.
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: install test demo bench notebook release lock clean bubblewrap

install: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(BIN)/python -m posenc_course.kernel install
	@$(MAKE) --no-print-directory bubblewrap
	@touch $(STAMP)

# The grading kernel's sandbox is bubblewrap (Debian's package `bubblewrap`), installed here as root.
bubblewrap:
	@command -v bwrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  { apt-get install -y -q bubblewrap >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q bubblewrap >/dev/null 2>&1; }; }; } || \
	  echo "warning: could not install bubblewrap (run: sudo apt-get install bubblewrap); grading runs without a sandbox"

test: $(STAMP)
	$(BIN)/python -m pytest

demo: $(STAMP)
	$(BIN)/python -m posenc_course.demo

# source/*/*.ipynb are built from authoring/*.md (and, for the exercises, posenc_solutions).
notebook: $(STAMP)
	$(BIN)/python -m posenc_course.notebook

# release/ is made by nbgrader from source/, never by hand.
release: notebook
	$(BIN)/nbgrader generate_assignment posenc --force
	$(BIN)/nbgrader generate_assignment theory --force

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_solutions.py
	$(BIN)/python benchmarks/bench_grading.py

# Refresh the pinned versions after changing the ranges in pyproject.toml.
lock:
	rm -rf .lockenv && $(PYTHON) -m venv .lockenv
	.lockenv/bin/python -m pip install --quiet -e '.[test]'
	{ echo "# Exact versions for reproducible grading (Python 3.11). Regenerate with: make lock"; \
	  .lockenv/bin/python -m pip freeze --exclude-editable | grep -v '^posenc'; } > requirements.lock
	rm -rf .lockenv

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .benchmarks
