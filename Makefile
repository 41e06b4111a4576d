# The two Quickstart commands: `make run` (validate + drift) and `make test`.
# Both build .venv from scratch on a fresh machine; nothing else is needed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test sweep explore browser screenshots matrix clean

# --no-compile: pip would compile every module of every package (torch's thousands: 20 s of the 40); Python
# compiles a module when it is first imported and keeps it, and the suite imports a fraction of them.
# --clear: a .venv is made afresh, never over one that another Python made (venv then fails in ensurepip).
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv --clear $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -c constraints.txt -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/opspec validate
	$(BIN)/opspec drift

# Headless Chromium for the site's browser test, from Debian's packages: asked for by name (`make browser`),
# never by `make test`, where the browser test skips with the reason when Chromium is missing.
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } || \
	  echo "chromium not installed: the browser test will be skipped"

# The ci hypothesis profile is the default whatever the environment: every run draws
# the same inputs and gives the same verdict. Tests that share one expensive run are grouped on one worker.
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist loadgroup -p no:cacheprovider

# The heavy sweeps left out of `make test` (marker `sweep`): every sampled repro of the committed reports whose
# backend is installed here (not the few of each outcome `make test` replays), every mutating variant exported
# through torch.export, and the end-to-end runs that take a minute or more each (the release loop, the conformance
# workflow, the published site and its browser test, the CUDA report script, worker pools crashed, hung or flooded
# on purpose, every fault kind in one run, a validate and the decomposition suite as on a torch that lacks a
# decomposition, and the runs checked against other runs: shuffled, one worker against
# two, three shards merged, killed and resumed, two Inductor builds), and a pytest of its own that checks the pinned
# pytest and pytest-xdist still group tests.
sweep: $(STAMP)
	$(BIN)/python -m pytest -m sweep -n auto --dist loadgroup -p no:cacheprovider

# Random exploration of the conformance suite (50 fresh examples per rule and dtype):
# new counterexamples, not a gate. What it finds is fixed or recorded, then `make test` checks it.
explore: $(STAMP)
	OPSPEC_HYPOTHESIS_PROFILE=dev $(BIN)/python -m pytest conformance/ -n auto -p no:cacheprovider

# The screenshots the site's "What it looks like" page shows, taken by the browser test.
screenshots: $(STAMP) browser
	OPSPEC_SCREENSHOTS=site/docs/assets/screenshots $(BIN)/python -m pytest tests/test_site_browser.py -m sweep -q -p no:cacheprovider

# The version matrix: every supported torch in a venv of its own under MATRIX_VENVS
# (several GB each, made once), validate, drift, the decomposition suite and an
# inductor run; results in benchmarks/results/version_matrix.json and benchmarks/README.md.
MATRIX_VENVS ?= $(HOME)/.cache/opspec/venvs
matrix: $(STAMP)
	OPSPEC_VENVS=$(MATRIX_VENVS) $(BIN)/python benchmarks/version_matrix.py $(MATRIX_ARGS)

clean:
	rm -rf $(VENV) build dist src/*.egg-info
