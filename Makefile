# posenc: set up, test, demo and benchmark. Needs only a Python 3.10 to 3.13 with venv (and, for the
# grading sandbox, Linux's bubblewrap, which `make install` installs when run as root on Debian or Ubuntu).
# Pick the Python with PYTHON: make install PYTHON=python3.12
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The oldest supported Python, read from pyproject.toml: the lock covers it and every newer one.
MIN_PYTHON := $(shell sed -n 's/^requires-python = ">=\([0-9.]*\)".*/\1/p' pyproject.toml)
UV_VERSION := 0.13.9
# What installs the locked packages into the venv: uv (UV_VERSION; pip installs it into the venv first, following
# pip's own settings), several times faster than pip (docs/install.md), or pip. uv reads its own settings
# (UV_INDEX_URL, SSL_CERT_FILE, uv.toml), not pip's: where it cannot install, pip does, after saying so.
# pip alone: make install INSTALLER=pip
INSTALLER ?= uv
UV_INSTALL  = $(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode
PIP_INSTALL = $(BIN)/python -m pip install --quiet --disable-pip-version-check
# $(call venv_install,ARGS): install ARGS into the venv with INSTALLER, falling back to pip; says which. A lock is
# installed as it is, with --no-deps: it is complete, and leaves out on purpose what lock-overrides.txt names.
venv_install = if [ "$(INSTALLER)" = uv ] && [ -x $(BIN)/uv ]; then echo "uv pip install $(1)"; $(UV_INSTALL) $(1) || \
  { echo "note: uv could not install $(1); pip installs it instead"; $(PIP_INSTALL) $(1); }; \
  else echo "pip install $(1)"; $(PIP_INSTALL) $(1); fi
# $(call venv_uninstall_extras,LOCK): uninstall from the venv what LOCK does not name (what an older lock had, or what was
# installed by hand; posenc_course/venv_extras.py finds it, keeping pip, uv and the course's editable installs), with
# INSTALLER, falling back to pip: installing a lock adds and moves packages, and this removes, so the venv is the lock.
venv_uninstall_extras = extras="$$($(BIN)/python -I posenc_course/venv_extras.py $(1))" || exit 1; \
  if [ -n "$$extras" ]; then echo "uninstalling what $(1) does not name:" $$extras; \
    if [ "$(INSTALLER)" = uv ] && [ -x $(BIN)/uv ]; then $(BIN)/uv pip uninstall --quiet --python $(BIN)/python $$extras || \
      { echo "note: uv could not uninstall them; pip does"; $(BIN)/python -m pip uninstall --quiet -y $$extras; }; \
    else $(BIN)/python -m pip uninstall --quiet -y $$extras; fi; fi
# nbgrader runs `alembic` in a subprocess: the venv's bin/ must be on PATH.
export PATH := $(abspath $(BIN)):$(PATH)

# Every target a person runs is .PHONY and has its one-line summary after `##` on its rule line; a `##@ GROUP` line
# starts a group (a group may go on further down). `make help` lists them, group by group (tests/unit/test_make_help.py).
.PHONY: help install docs test test-fast test-tools hf-env hf-lock demo demo-record bench mutants notebook release mistakes-table lock clean bubblewrap chromium python lab formgrader grade grade-slurm bench-slurm postgresql slurm FORCE

##@ Set up
install: $(STAMP) ## make .venv with the locked packages, a student's JupyterLab, bubblewrap (as root)

$(STAMP): pyproject.toml engine/pyproject.toml requirements.lock $(VENV)/.python
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
	  echo "error: $(PYTHON) could not make a virtual environment; on Debian or Ubuntu: sudo apt-get install python3-venv"; exit 1; }
	@[ "$(INSTALLER)" != uv ] || [ -x $(BIN)/uv ] || $(PIP_INSTALL) uv==$(UV_VERSION) || \
	  echo "note: pip could not install uv $(UV_VERSION); pip installs the packages instead (slower)"
	@$(call venv_install,--no-deps -r requirements.lock)
	@$(call venv_install,--no-deps -e .)
	@# the engine after the course: a venv from before it was a distribution of its own has posenc's old
	@# record of bin/hardened-grade, which reinstalling posenc removes
	@$(call venv_install,--no-deps -e ./engine)
	@# the venv's lock: docs/requirements.lock (requirements.lock and the site's) once `make docs` installed it
	@$(call venv_uninstall_extras,$(if $(wildcard $(DOCS_STAMP)),docs/requirements.lock,requirements.lock))
	@rm -rf $(VENV)/share/jupyter/kernels/posenc-grader  # a kernel spec older versions installed
	$(BIN)/python -m posenc_course.student.lab student
	@$(MAKE) --no-print-directory bubblewrap
	@touch $(STAMP)

# $(VENV)/.python names the interpreter the venv was made with. It changes (and the venv is made
# again) only when PYTHON is given and is another Python than the venv's: `make test` after
# `make install PYTHON=python3.12` keeps using 3.12.
$(VENV)/.python: FORCE
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < tuple(map(int, "$(MIN_PYTHON)".split("."))))' 2>/dev/null || { \
	  echo "error: PYTHON=$(PYTHON) is not a Python $(MIN_PYTHON) or newer ($$($(PYTHON) --version 2>&1 | head -n 1))."; \
	  echo "  posenc supports Python 3.10 to 3.13; pick one with: make install PYTHON=python3.12 (or its full path)"; exit 1; }
	@want="$$($(PYTHON) -c 'import sys; print(sys.version)' | head -n 1)"; \
	  have="$$(test -x $(BIN)/python && $(BIN)/python -c 'import sys; print(sys.version)' | head -n 1)"; \
	  if [ -n "$$have" ] && [ "$$have" != "$$want" ] && [ "$(origin PYTHON)" != file ]; then \
	    echo "$(VENV) was made with Python $$have; making it again with $(PYTHON) ($$want)"; rm -rf $(VENV); have=; fi; \
	  mkdir -p $(VENV); [ -z "$$have" ] && have="$$want"; \
	  [ "$$(cat $@ 2>/dev/null)" = "$$have" ] || echo "$$have" > $@

# Which Python the venv runs.
python: ## which Python the venv runs
	@$(BIN)/python -c 'import sys; print(sys.executable, sys.version)'

# The grading kernel's sandbox is bubblewrap (Linux only; Debian's package `bubblewrap`), installed here
# as root. Elsewhere the notebooks and posenc-check work, and class grading says what to do.
bubblewrap: ## install the grading sandbox, bubblewrap (as root, on Debian or Ubuntu)
	@if [ "$$(uname -s)" != Linux ]; then \
	  echo "note: no bubblewrap on $$(uname -s): the notebooks and posenc-check work; grading a class needs Linux,"; \
	  echo "  or c.ResilientExecute.sandbox = 'off' in nbgrader_config.py for submissions you trust (docs/install.md: Platforms)"; \
	elif ! command -v bwrap >/dev/null 2>&1; then \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { apt-get install -y -q bubblewrap >/dev/null 2>&1 || \
	      { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q bubblewrap >/dev/null 2>&1; }; }; } || \
	  echo "warning: could not install bubblewrap (sudo apt-get install bubblewrap, or sudo dnf install bubblewrap):" \
	       "grading a class refuses to run without it (docs/install.md: Platforms)"; \
	fi

# The real-browser tests of the student's JupyterLab (tests/system/test_browser.py) drive Debian's chromium with
# Playwright (which cannot download its own browsers here); installed by `make test` (not `make install`:
# a student or a self-learner does not need it) as root. Without it those tests are skipped, and say why.
chromium: ## install chromium, for the browser tests (as root)
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { apt-get install -y -q chromium >/dev/null 2>&1 || \
	      { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1; }; }; } || \
	  echo "note: chromium is not installed (sudo apt-get install chromium): the browser tests will be skipped"

# PostgreSQL, for a gradebook shared between machines (docs/instructors/large-class.md), and for the tests
# that start a server of their own (tests/grading/test_grade_class.py): Debian's package, installed by `make test`
# as root. Without it those tests are skipped, and say why; the SQLite gradebook needs nothing.
postgresql: ## install PostgreSQL, for the shared gradebook's tests (as root)
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || command -v pg_ctl >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { apt-get install -y -q postgresql >/dev/null 2>&1 || \
	      { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q postgresql >/dev/null 2>&1; }; }; } || \
	  echo "note: PostgreSQL is not installed (sudo apt-get install postgresql): its tests will be skipped"

# Slurm (slurmctld, slurmd, its client commands and munge), for the tests that start a one-node cluster of their own
# (tests/system/test_slurm.py): Debian's packages, installed by `make test` as root. Without them those tests are skipped,
# and say why. Grading on your own cluster needs none of this here: `make grade-slurm` runs on its login node.
slurm: ## install Slurm and munge, for the Slurm tests (as root)
	@{ command -v slurmctld >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ]; } && command -v sbatch >/dev/null 2>&1 && \
	  { command -v munged >/dev/null 2>&1 || [ -x /usr/sbin/munged ]; } || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { apt-get install -y -q slurmctld slurmd slurm-client munge >/dev/null 2>&1 || \
	      { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q slurmctld slurmd slurm-client munge >/dev/null 2>&1; }; }; } || \
	  echo "note: Slurm is not installed (sudo apt-get install slurmctld slurmd slurm-client munge): its tests will be skipped"

# The course site (docs/maintainers/docs.md): Sphinx with MyST-NB, pinned in docs/requirements.lock, into
# docs/_build/html. Warnings are errors. `make test` installs it too: tests/system/test_docs.py builds the site.
DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): $(STAMP) docs/requirements.lock
	@$(call venv_install,--no-deps -r docs/requirements.lock)
	@$(call venv_uninstall_extras,docs/requirements.lock)
	@touch $@

##@ Author
docs: $(DOCS_STAMP) ## build the course site into docs/_build/html (warnings are errors)
	$(BIN)/python -m sphinx -W --keep-going -q -b html -d docs/_build/doctrees docs docs/_build/html
	@echo "the site: $(abspath docs/_build/html/index.html)"

##@ Set up
# The tools only the tests use: a browser for tests/system/test_browser.py, a PostgreSQL server for the shared
# gradebook's tests, a Slurm cluster for tests/system/test_slurm.py. `make install` leaves them out; `make test` (and so
# CI's .ci/run) brings them.
test-tools: chromium postgresql slurm ## install what only the tests use: chromium, PostgreSQL, Slurm

# The test-only environment of tests/system/test_hf_agreement.py (docs/maintainers/testing.md): Hugging Face transformers and
# CPU torch, pinned in tests/system/hf/requirements.lock, in a venv of its own, HF_VENV, kept out of the course's dependencies.
# Made with HF_PYTHON (torch's CPU wheel here is for CPython 3.11 only), again from nothing when the lock changes.
# `make test` makes it; where it cannot (no HF_PYTHON, no network), it says so in a line and the suite still runs:
# those tests then fail, and say how to make it.
HF_PYTHON ?= python3.11
HF_VENV   := .venv-hf
HF_STAMP  := $(HF_VENV)/.installed
HF_LOCK   := tests/system/hf/requirements.lock
# Where pip finds torch's CPU wheel (torch-2.13.0+cpu): pip's own find-links (PIP_FIND_LINKS, or pip config), which uv
# does not read, so they are given to uv too. Elsewhere: make hf-env HF_FIND_LINKS=https://download.pytorch.org/whl/cpu/torch/
HF_FIND_LINKS ?= $(or $(PIP_FIND_LINKS),$(shell $(HF_PYTHON) -m pip config get global.find-links 2>/dev/null))

hf-env: $(HF_STAMP) ## make .venv-hf, transformers and CPU torch, for tests/system/test_hf_agreement.py

# venv_install, into HF_VENV: uv (the course venv's, when there is one) or pip.
$(HF_STAMP): UV_INSTALL = $(BIN)/uv pip install --quiet --python $(HF_VENV)/bin/python --compile-bytecode \
  $(addprefix --find-links ,$(HF_FIND_LINKS))
$(HF_STAMP): PIP_INSTALL = $(HF_VENV)/bin/python -m pip install --quiet --disable-pip-version-check
$(HF_STAMP): $(HF_LOCK)
	@rm -rf $(HF_VENV); echo "making $(HF_VENV) with $(HF_PYTHON), from $(HF_LOCK)"; \
	if ! $(HF_PYTHON) -m venv $(HF_VENV) >/dev/null 2>&1; then rm -rf $(HF_VENV); \
	  echo "warning: no $(HF_VENV): $(HF_PYTHON) cannot make a venv (give a CPython 3.11: make hf-env HF_PYTHON=/path/to/python3.11); tests/system/test_hf_agreement.py will fail"; \
	elif ! { $(call venv_install,--no-deps -r $(HF_LOCK)); }; then rm -rf $(HF_VENV); \
	  echo "warning: no $(HF_VENV): $(HF_LOCK) could not be installed (no network? torch's CPU wheel not found?); tests/system/test_hf_agreement.py will fail"; \
	else touch $@; fi

##@ Maintain
# Refresh tests/system/hf/requirements.lock after changing tests/system/hf/requirements.in (for CPython 3.11 on x86-64 Linux, where
# torch's CPU wheel is); `make hf-lock LOCK_FLAGS=--upgrade` moves every unpinned package to its newest version.
hf-lock: $(STAMP) ## refresh tests/system/hf/requirements.lock from tests/system/hf/requirements.in
	@[ -x $(BIN)/uv ] || $(PIP_INSTALL) uv==$(UV_VERSION)
	$(BIN)/uv pip compile tests/system/hf/requirements.in --python-version 3.11 --python-platform x86_64-unknown-linux-gnu \
	  $(addprefix --find-links ,$(HF_FIND_LINKS)) --custom-compile-command "make hf-lock" --quiet $(LOCK_FLAGS) -o $(HF_LOCK)

# The suite runs on TEST_WORKERS pytest-xdist workers, a module to a worker (tests/conftest.py), the heaviest
# modules first. Much of a grading test waits on kernels, timeouts and servers: one worker more than the
# cores, which on 2 cores was faster than two per core (docs/maintainers/testing.md). All in one process: make test TEST_WORKERS=0
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))

##@ Test and measure
test: $(STAMP) $(DOCS_STAMP) test-tools hf-env ## run every test, every tier, as CI does
	$(BIN)/python -m pytest -n $(TEST_WORKERS)

# The fast tier: tests/unit/ and the doctests (a test's folder gives its tier, tests/conftest.py: LAYERS): no grading run, browser,
# other Python, PostgreSQL, Slurm or Hugging Face venv (no hf-env: tests/system/test_hf_agreement.py is a system
# test). For a developer's edit-test loop; `make test` (CI) runs every tier.
# Its tests only compute (no kernel to wait on): one worker per core (FAST_WORKERS), and only its folders (with the
# helpers' doctests) are collected: the grading and system modules' imports are half of a whole suite's collection.
FAST_WORKERS ?= $(shell nproc 2>/dev/null || echo 1)
test-fast: $(STAMP) $(DOCS_STAMP) ## run the fast tier, tests/unit/: no real grading, browser, Pythons, PostgreSQL, Slurm or .venv-hf
	$(BIN)/python -m pytest -n $(FAST_WORKERS) -m "not slow and not browser and not pythons and not postgres and not slurm" \
		tests/unit tests/helpers posenc_solutions

##@ Use the course
# JupyterLab as a student sees it (nbgrader's Validate, none of its instructor tools), and as an
# instructor does (formgrader, at the course folder). ARGS are passed on: make lab ARGS=release/theory
lab: $(STAMP) ## JupyterLab as a student sees it (ARGS: paths, JupyterLab options)
	$(BIN)/posenc-lab $(ARGS)

formgrader: $(STAMP) ## JupyterLab as an instructor sees it, with formgrader, at the course folder
	$(BIN)/posenc-lab --instructor $(ARGS)

# Grade the class in parallel (posenc-grade, docs/instructors/large-class.md): make grade ARGS="--jobs 2"
grade: $(STAMP) ## grade the class in parallel with posenc-grade (ARGS="--jobs 2")
	$(BIN)/posenc-grade $(ARGS)

# Grade the class on a Slurm cluster, from its login node (deploy/slurm/, docs/instructors/across-machines.md):
# make grade-slurm ARGS="--tasks 4 --cpus 2"
grade-slurm: $(STAMP) ## grade the class on a Slurm cluster (ARGS="--tasks 4 --cpus 2")
	$(BIN)/python -m posenc_course.slurm $(ARGS)

demo: $(STAMP) ## grade three demo students end to end, in demo/
	$(BIN)/python -m posenc_course.instructor.demo

##@ Author
# source/*/*.ipynb are built from authoring/*.md (and, for the exercises, posenc_solutions).
notebook: $(STAMP) ## build source/*/*.ipynb from authoring/*.md and posenc_solutions
	$(BIN)/python -m posenc_course.authoring.notebook

# release/ is made by nbgrader from source/, never by hand (nbgrader generate_assignment A --force, for
# each assignment). If nbgrader refuses (this course's gradebook has submissions of an assignment whose
# cells changed), the old release is put back and it says what to do (posenc_course/authoring/generate.py).
release: notebook ## make release/ from source/ with nbgrader, the old release kept if nbgrader refuses
	$(BIN)/python -m posenc_course.authoring.generate posenc posenc-advanced posenc-current theory

# Each mistake an exercise names, graded as its wrong answer in tests/ (in this process, through the real judge):
# what it costs, for the docs (posenc_course/authoring/rubric.py; test_named_mistakes fails when it is stale).
mistakes-table: notebook ## measure what each named mistake costs: docs/course/named-mistakes.md
	$(BIN)/python -m tests.helpers.named_mistakes

##@ Test and measure
# Mutation testing of the graded notebooks' tests (posenc_course/qa/mutants.py): every one-change mutant of the
# reference solutions of each graded assignment, graded by nbgrader autograde, mutants of different exercises in one
# submission. MUTANTS_FLAGS=--sample 40 grades a deterministic sample of each, as CI does; a full run keeps its
# tables in docs/measured/mutants.txt. MUTANTS_FLAGS="--assignment posenc-current --in-process" to iterate.
mutants: $(STAMP) ## mutation testing of the graded notebooks' tests (MUTANTS_FLAGS="--sample 40")
	$(BIN)/python $(if $(MUTANTS_FLAGS),,benchmarks/record.py) -m posenc_course.qa.mutants $(MUTANTS_FLAGS)

# The demo's whole output kept in docs/measured/demo.txt (benchmarks/record.py), whose score table the workflow page
# shows; a test says when it is stale. `make demo` itself writes nothing in the repository.
demo-record: $(STAMP) ## make demo, its output kept in docs/measured/demo.txt (for the workflow page)
	$(BIN)/python benchmarks/record.py -m posenc_course.instructor.demo

# Each report is also kept whole in docs/measured/, with its commit and machine, for the site to include.
bench: $(STAMP) ## the benchmarks, each report kept in docs/measured/
	$(BIN)/python benchmarks/record.py benchmarks/bench_solutions.py
	$(BIN)/python benchmarks/record.py benchmarks/bench_grading.py
	$(BIN)/python benchmarks/record.py benchmarks/bench_class.py

# A class of 60 on a one-node Slurm cluster started here, next to posenc-grade (benchmarks/bench_slurm.py): as root,
# with Slurm and PostgreSQL, which this target installs on Debian. Kept apart from `make bench`, which needs neither.
bench-slurm: $(STAMP) slurm postgresql ## a class of 60 on a one-node Slurm cluster started here (as root)
	$(BIN)/python benchmarks/record.py benchmarks/bench_slurm.py

##@ Maintain
# Refresh the pinned versions after changing the ranges in pyproject.toml. requirements.lock is one
# universal lock made by uv (`uv pip compile --universal`): exact versions for every Python from
# MIN_PYTHON up and every platform, with environment markers where they differ (numpy 2.2 on 3.10,
# 2.4 on 3.11+, ...); pip installs from it as it is. Pins already in the lock are kept while the ranges
# allow them; `make lock LOCK_FLAGS=--upgrade` moves every package to its newest allowed version.
lock: ## refresh requirements.lock and docs/requirements.lock after changing pyproject.toml
	rm -rf .lockenv && $(PYTHON) -m venv .lockenv
	.lockenv/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	.lockenv/bin/uv pip compile pyproject.toml --extra test --universal --python-version $(MIN_PYTHON) \
	  --override lock-overrides.txt --no-emit-package hardened-grading --custom-compile-command "make lock" --quiet \
	  $(LOCK_FLAGS) -o requirements.lock
	.lockenv/bin/uv pip compile pyproject.toml --extra test --extra docs --universal --python-version $(MIN_PYTHON) \
	  --override lock-overrides.txt --no-emit-package hardened-grading --constraint requirements.lock \
	  --custom-compile-command "make lock" --quiet \
	  $(LOCK_FLAGS) -o docs/requirements.lock
	rm -rf .lockenv

clean: ## remove the venvs and the caches
	rm -rf $(VENV) $(HF_VENV) .lockenv .pytest_cache .hypothesis .benchmarks

##@ Set up
# The targets, each with its summary (the `##` on its rule line), group by group in HELP_GROUPS' order, then any
# group it does not name; in awk as POSIX has it.
HELP_GROUPS := Set up,Use the course,Author,Test and measure,Maintain
help: ## list the targets, grouped, with what each does
	@awk -v groups='$(HELP_GROUPS)' 'BEGIN { FS = ":.*## "; n = split(groups, order, ","); for (i = 1; i <= n; i++) named[order[i]] = 1 } \
	  /^##@ / { group = substr($$0, 5); if (!(group in named)) { named[group] = 1; order[++n] = group }; next } \
	  /^[a-zA-Z_-]+:.*## / { rows[group] = rows[group] sprintf("  %-12s %s\n", $$1, $$2) } \
	  END { for (i = 1; i <= n; i++) if (order[i] in rows) printf "%s%s:\n%s", (shown++ ? "\n" : ""), order[i], rows[order[i]] }' \
	  $(firstword $(MAKEFILE_LIST))
