# compile-playground: `make run` opens the app, `make test` runs the tests.
# The venv sees system site-packages so that a torch already installed on the machine (as on
# workshop servers) is reused instead of downloading another; only when none >= 2.13 is there
# does it install $(TORCH_SPEC) (a CPU wheel here). The extras come with the torch already there
# pinned in the same pip command: `transformers` (the `models` extra, for snippets/models/) would
# otherwise let pip pull another torch.
# Where uv is at hand (on PATH, or named by UV; .ci/run brings its own), it installs the extras
# and the torch 2.14.1 venv: in parallel, bytecode compiled on every core (measured here, empty
# caches: the extras in 18 s where pip's venv took 72 s; the 2.14.1 venv, 5.7 GB of CUDA
# libraries, in 26 s and 45 s of CPU where pip took 2 min 41 s and 101 s). Torch itself comes
# from pip, which reads this machine's pip config (a local CPU wheel here). Without uv, pip.
PY ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# A UV that names no uv (a stray variable, a path that moved, another program) means pip.
UV ?= uv
UV_BIN := $(shell p=$$(command -v "$(strip $(UV))" 2>/dev/null) && "$$p" --version 2>/dev/null | grep -q '^uv ' && echo "$$p")

.PHONY: venv venv-214 run test test-fast test-torch214 check lint bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv --system-site-packages $(VENV)
	$(BIN)/python -c "import sys, torch; sys.exit(tuple(int(p) for p in torch.__version__.split('.')[:2]) < (2, 13))" 2>/dev/null \
		|| $(BIN)/python -m pip install --quiet "$(TORCH_SPEC)"
ifeq ($(UV_BIN),)
	$(BIN)/python -m pip install --quiet -e ".[test,models]" \
		"torch==$$($(BIN)/python -c 'import torch; print(torch.__version__.split("+")[0])')"
else
	$(UV_BIN) pip install --quiet --compile-bytecode --python $(BIN)/python -e ".[test,models]" \
		"torch==$$($(BIN)/python -c 'import torch; print(torch.__version__)')"
endif
	touch $(STAMP)

run: venv
	$(BIN)/compile-playground $(SNIPPET)

check: venv
	$(BIN)/compile-playground check $(or $(SNIPPET),snippets/default.py)

# Three pytest-xdist workers on two cores: most tests wait on torch worker processes (and some
# on timeouts and quiet periods), so a third keeps the cores busy. Measured on clean clones:
# one 14 min, two 6 min 45 s, three 6 min 18 s.
# Work-stealing: a worker that runs out of tests takes queued ones from the others, so the
# run does not end on one worker's queue of long tests behind a long one.
XDIST ?= -n 3 --dist worksteal
# This machine, as CI images often do, sets PYTHONDONTWRITEBYTECODE=1: no process writes the .pyc
# files of our own sources, so each of the suite's several hundred Python processes compiled them
# again (a worker's start: 0.13 s on our modules, 0.08 s from .pyc). The tests compile them once.
PYC = -m compileall -q -j 0 playground tui tests
# Every run of the suite ends with its slowest tests, so that the next cut of CI time starts
# from measured figures, not a guess.
DURATIONS ?= --durations=30 --durations-min=5
test: venv
	$(BIN)/python $(PYC)
	$(BIN)/python -m pytest -q $(XDIST) $(DURATIONS)

# The pure tests and the app on a fake engine: no torch worker, a loop of a minute or two.
test-fast: venv
	$(BIN)/python $(PYC)
	$(BIN)/python -m pytest -q -m "not torch"

# The engine and the gallery against torch 2.14.1 too (a separate venv: a 5 GB CUDA build that
# runs on the CPU here). compat's private hooks are checked on both versions. Not with pip's
# --no-compile (21 s less CPU to install): this machine sets PYTHONDONTWRITEBYTECODE=1, as CI
# images often do, so no import writes the .pyc files pip did not, every worker compiled torch
# from source, and this stage took 10 min 31 s instead of 4 min 22 s.
# It runs on Python 3.12 (the main venv on the machine's 3.11): one stage, a newer torch and a
# newer Python, where most users are. pyenv's 3.12 where there is one, else a python3.12 on PATH; a
# venv left from another Python is made again. torch 2.14.1 for 3.12 comes from the registry.
PY214_VERSION ?= 3.12
PY214 ?= $(or $(lastword $(sort $(wildcard $(or $(PYENV_ROOT),$(HOME)/.pyenv)/versions/$(PY214_VERSION).*/bin/python$(PY214_VERSION)))),python$(PY214_VERSION))
VENV214 ?= .venv-214
STAMP214 := $(VENV214)/.installed
venv-214: $(STAMP214)

$(STAMP214): pyproject.toml
	$(PY214) -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$(PY214_VERSION)'.split('.'))))" \
		|| { echo "$(PY214) is not Python $(PY214_VERSION)"; exit 1; }
	$(VENV214)/bin/python -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$(PY214_VERSION)'.split('.'))))" 2>/dev/null \
		|| { rm -rf $(VENV214) && $(PY214) -m venv $(VENV214); }
ifeq ($(UV_BIN),)
	$(VENV214)/bin/python -c "import torch, sys; sys.exit(not torch.__version__.startswith('2.14'))" 2>/dev/null \
		|| $(VENV214)/bin/python -m pip install --quiet "torch==2.14.1"
	$(VENV214)/bin/python -m pip install --quiet -e ".[test,models]" "torch==2.14.1"
else
	$(UV_BIN) pip install --quiet --compile-bytecode --python $(VENV214)/bin/python -e ".[test,models]" "torch==2.14.1"
endif
	touch $(STAMP214)

# Two workers here: the CUDA build's processes are heavier, and a third made this stage slower
# (4:22 -> 5:18 on a clean clone; again later, 2:40 -> 4:16). The stage runs what asserts torch's
# behaviour (diagnostics, guards, recompiles, equivalence and its references, isolation, the
# gallery, compat's private hooks); not the tests of our own plumbing, which `make test` has run on
# the main torch and no torch release changes: odd file names, paths, signals and failed writes
# (test_cli_hostile, 50 s of this stage once), caps, keyed messages, last words, sessions, limits,
# the client's and the CLI's own handling, the report's codec and the import contracts; nor the
# template's import of a snippet's libraries (test_preimport: our own machinery, a fifth of this
# stage). The gallery's lessons are checked here as the playground reports them (each claim, on
# each setting it names); running each file as a plain script is left to the main torch (two fifths
# of the gallery's time, and it asserts only that the script exits 0 and prints), nor the two
# `check --json carries ...` tests: a fresh `check` each (one with Inductor, --kernels and --code
# on two snippets) for what the JSON carries, our plumbing, where the torch-facing part of each
# view is asserted on the warm worker by its neighbours. Nor what a fork guarantees whatever the
# release (test_isolation, test_reference_isolation: a run's child and its references are forks of
# the template, so no state of theirs reaches the next run), nor which of model and fn is compiled
# (test_target_choice: our loading), nor a switch's warm run against a fresh process's (test_config_settings'
# `..._match_a_fresh_process`: the fork again), nor the code view's own timeout and cancel (test_dynamo_code:
# a kill of a hung child), nor a bisection stopped by a signal or a cancel midway (test_bisect's
# `mid_bisection` and `bisection_cancelled`: our process handling, 4 min of this stage once), nor the
# tests that start no torch at all (-m torch: the pure ones), nor a process killed under a run (a
# program's, a node's) or a compile that hangs: our process handling again. The program corpus
# runs here: each of its programs against a plain `python PROG` on this torch is the claim that
# the playground observes torch without changing it, release by release.
# Keeping CI under 15 minutes with the models extra installed is the reason.
TORCH214_SKIP := cli_hostile caps check_header cli cli_deep_config client forged_reports history \
	import_contracts import_hygiene last_words limits_unit matrix_exports explain_exports \
	ladder_no_verdict report_wire session settings_parse watch_present worker_limits \
	worker_memory worker_scratch bad_input blame preimport import_cycles live \
	isolation reference_isolation target_choice timeout_dump
XDIST214 ?= -n 2 --dist worksteal
test-torch214: venv-214
	$(VENV214)/bin/python $(PYC)
	$(VENV214)/bin/python -m pytest -q $(XDIST214) $(DURATIONS) -m torch tests/engine tests/test_gallery.py tests/test_gallery_programs.py tests/test_gallery_ranks.py \
		tests/test_program_corpus.py \
		-k "not runs_standalone and not check_json_carries and not match_a_fresh_process \
			and not hung_code_run and not cancel_during_the_code_run \
			and not mid_bisection and not bisection_cancelled \
			and not process_dies_keeps_what_it_streamed and not a_node_killed_mid_run \
			and not a_compile_that_hangs_is_stopped" \
		$(foreach t,$(TORCH214_SKIP),--ignore=tests/engine/test_$(t).py)

lint: venv
	$(BIN)/ruff check playground tui tests benchmarks snippets
	$(BIN)/ruff format --check playground tui tests benchmarks snippets

bench: venv
	$(BIN)/python benchmarks/latency.py

clean:
	rm -rf $(VENV) .pytest_cache
