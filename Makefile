# Quick start: `make demo` (set up + run the bundled example), `make test` (set up + whole suite).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench setup clean browser

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,jax]"
	touch $(STAMP)

# The demo needs only the package and JAX: its own small environment, set up in seconds.
DEMO_VENV ?= .venv-demo
DEMO_PY := $(DEMO_VENV)/bin/python
DEMO_STAMP := $(DEMO_VENV)/.installed

$(DEMO_STAMP): pyproject.toml
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_PY) -m pip install --quiet -e ".[jax]"
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(DEMO_PY) examples/make_lstm_models.py --out examples/models
	$(DEMO_PY) examples/demo.py examples/models

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench examples

# tests/inspect/test_view.py opens pages in Debian's Chromium; installed here when missing.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
		echo "chromium missing (apt-get install chromium as root): the view tests will fail"

test: $(STAMP) lint browser
	$(VENV)/bin/pytest -n 2 --dist loadfile

bench: $(STAMP)
	$(PY) bench/real_models.py --markdown
	$(PY) bench/loops.py --markdown
	$(PY) bench/recurrent.py --markdown --sgemm
	$(PY) bench/recurrent_corpus.py --markdown
	$(PY) bench/scale.py --markdown
	$(PY) bench/transforms.py --corpus --markdown
	$(PY) bench/transforms_cells.py --markdown
	$(PY) bench/generation.py --markdown

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache examples/models
