# The two Quickstart commands: `make run` (validate + drift) and `make test`.
# Both build .venv from scratch on a fresh machine; nothing else is needed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/opspec validate
	$(BIN)/opspec drift

test: $(STAMP)
	$(BIN)/python -m pytest -n auto -p no:cacheprovider

clean:
	rm -rf $(VENV) build dist src/*.egg-info
