# Two entry points for a fresh machine (see README):
#   make demo   set up and launch the inspector on the bundled samples (no API key)
#   make test   set up and run the whole test suite (lint, types, unit, property, AppTest, e2e)
# and one for notebooks:
#   make lab    set up the notebook extra (JupyterLab included) and open JupyterLab on examples/
# and a fast lane for developers:
#   make check  lint, types and the unit and property tests (no browser, AppTest or slow test)
PYTHON ?= python3
VENV ?= .venv
PORT ?= 8501
# Dependencies are installed with uv from the lock files in requirements/ (pinned, so a
# fresh machine gets the versions the tests passed with). After changing the extras in
# pyproject.toml, run `make lock` and commit the lock files.
UV_VERSION ?= 0.13.9
UV := $(VENV)/bin/uv
UV_INSTALL := $(UV) pip install -q --python $(VENV)/bin/python
LOCK := $(UV) pip compile -q --universal --python-version 3.11 pyproject.toml

PYTEST := $(VENV)/bin/python -m pytest
# Worker processes for the tests that need no browser (pytest-xdist). worksteal hands each
# worker a contiguous half of the tests, so a module mostly runs in one process, in order,
# and its module fixtures are built once; an idle worker takes tests from the other's end.
WORKERS ?= 2

.PHONY: demo lab examples test check setup lint typecheck bench clean lock

$(UV):
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check uv==$(UV_VERSION)

$(VENV)/.ok-app: pyproject.toml requirements/app.lock | $(UV)
	$(UV_INSTALL) -r requirements/app.lock
	$(UV_INSTALL) --no-deps -e .
	touch $@

$(VENV)/.ok-dev: pyproject.toml requirements/dev.lock | $(UV)
	$(UV_INSTALL) -r requirements/dev.lock
	$(UV_INSTALL) --no-deps -e .
	touch $(VENV)/.ok-app $(VENV)/.ok-notebook $@

$(VENV)/.ok-notebook: pyproject.toml requirements/notebook.lock | $(UV)
	$(UV_INSTALL) -r requirements/notebook.lock
	$(UV_INSTALL) --no-deps -e .
	touch $@

lock: | $(UV)
	$(LOCK) --extra app --extra openai -o requirements/app.lock
	$(LOCK) --extra notebook -o requirements/notebook.lock
	$(LOCK) --all-extras -o requirements/dev.lock

# The demo runs on this machine only, so its Runs page may open folders by path.
demo: $(VENV)/.ok-app
	COMPACTLENS_RUNS_FOLDERS=on $(VENV)/bin/streamlit run app/streamlit_app.py --server.port $(PORT) --server.address 127.0.0.1

# JupyterLab on the example notebooks, on this machine only (127.0.0.1, LAB_PORT; it prints
# the address with its token). As root (a container) JupyterLab needs --allow-root.
LAB_PORT ?= 8888
lab: $(VENV)/.ok-notebook
	$(VENV)/bin/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT) \
		--ServerApp.root_dir=examples $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_FLAGS)

# The example notebooks are committed with their outputs (they read on a code host): after a
# change that alters them, run them again in place, one at a time, the way users run them.
examples: $(VENV)/.ok-notebook
	cd examples && for nb in *.ipynb; do \
		$(abspath $(VENV))/bin/jupyter nbconvert --to notebook --execute --inplace \
			--ExecutePreprocessor.record_timing=False $$nb || exit 1; \
	done

# The inspector for a team (docs/deploy.md): headless, no file watcher, XSRF and CORS
# protection on, 50 MB uploads, the viewer toolbar, no error details for visitors, closed
# sessions dropped after 60 s. ADDRESS=0.0.0.0 to listen beyond this machine. It first
# checks the operator's settings and refuses to start on one it cannot read.
ADDRESS ?= 127.0.0.1
SERVE_FLAGS ?=
serve: $(VENV)/.ok-app
	$(VENV)/bin/python -m compactlens_inspector.serving.preflight
	$(VENV)/bin/streamlit run app/streamlit_app.py --server.headless true \
		--server.address $(ADDRESS) --server.port $(PORT) \
		--server.enableXsrfProtection true --server.enableCORS true \
		--server.maxUploadSize 50 --server.maxMessageSize 200 \
		--server.fileWatcherType none --server.runOnSave false \
		--server.disconnectedSessionTTL 60 --browser.gatherUsageStats false \
		--client.toolbarMode viewer --client.showErrorDetails none $(SERVE_FLAGS)

setup: $(VENV)/.ok-dev
	bash scripts/ensure_chromium.sh

lint: $(VENV)/.ok-dev
	$(VENV)/bin/ruff check core app tests bench
	$(VENV)/bin/ruff format --check core app tests bench

typecheck: $(VENV)/.ok-dev
	$(VENV)/bin/mypy

# Python may be told not to write bytecode (PYTHONDONTWRITEBYTECODE); then every
# interpreter the tests start (a worker, a Streamlit server, a CLI run) compiles streamlit,
# langchain and the rest from source again. The test targets let it keep its .pyc files.
test check: export PYTHONDONTWRITEBYTECODE :=

# Two lanes at once: the browser tests (-m e2e) in one pytest process, one Streamlit server
# and one Chromium, their output kept in test-artifacts/e2e-lane.log and shown when they
# end; every other test in $(WORKERS) xdist workers. Either lane failing fails the target.
test: setup lint typecheck
	@mkdir -p test-artifacts
	@$(PYTEST) -q -p no:xdist -m e2e > test-artifacts/e2e-lane.log 2>&1 & browser=$$!; \
	$(PYTEST) -q -n $(WORKERS) --dist worksteal -m "not e2e"; rest=$$?; \
	wait $$browser; e2e=$$?; \
	echo "== the browser tests (pytest -m e2e), from test-artifacts/e2e-lane.log =="; \
	cat test-artifacts/e2e-lane.log; \
	test $$rest -eq 0 && test $$e2e -eq 0

check: lint typecheck
	$(PYTEST) -q -n $(WORKERS) --dist worksteal -m "not e2e and not apptest and not slow"

bench: $(VENV)/.ok-dev
	$(VENV)/bin/python bench/run_all.py
	$(VENV)/bin/python bench/bench_fixes.py
	$(VENV)/bin/python bench/bench_speed.py
	$(VENV)/bin/python bench/bench_loop.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis test-artifacts
