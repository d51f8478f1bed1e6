# Two entry points for a fresh machine (see README):
#   make demo   set up and launch the inspector on the bundled samples (no API key)
#   make test   set up and run the whole test suite (lint, types, unit, property, AppTest, e2e)
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

.PHONY: demo test setup lint typecheck bench clean lock

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
	touch $(VENV)/.ok-app $@

lock: | $(UV)
	$(LOCK) --extra app --extra openai -o requirements/app.lock
	$(LOCK) --all-extras -o requirements/dev.lock

demo: $(VENV)/.ok-app
	$(VENV)/bin/streamlit run app/streamlit_app.py --server.port $(PORT) --server.address 127.0.0.1

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

test: setup lint typecheck
	$(VENV)/bin/python -m pytest -q

bench: $(VENV)/.ok-dev
	$(VENV)/bin/python bench/run_all.py
	$(VENV)/bin/python bench/bench_fixes.py
	$(VENV)/bin/python bench/bench_speed.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis test-artifacts
