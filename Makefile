# One-command setup: every target creates .venv from the project's own files when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-nvim test-vim test-emacs test-e2e lint lint-workflows format bench vsix dist clean docs

# The install's output (pip's and the build backend's) goes to a log, shown in full on failure.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "Installing echoes-lsp and its test tools into $(VENV) (log: $(VENV)/install.log)..."
	@{ $(BIN)/python -m pip install --quiet --upgrade pip && \
	  $(BIN)/python -m pip install --quiet -e '.[test,dev]'; } > $(VENV)/install.log 2>&1 || \
	  { cat $(VENV)/install.log; echo "make: installing into $(VENV) failed (log above)"; exit 1; }
	@touch $(STAMP)

demo: $(STAMP)
	@$(BIN)/python examples/demo.py

# `make test` leaves out the suites that drive a real editor (minutes each); each has its own
# target, and `.ci/run` runs them after `make test`. A new editor suite joins EDITOR_SUITES.
# The rest runs in TEST_WORKERS processes (pytest-xdist), each module's tests in one of them.
EDITOR_SUITES := tests/nvim tests/vim tests/emacs
TEST_WORKERS ?= 2

test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile $(addprefix --ignore=,$(EDITOR_SUITES))

# Headless Neovim against the real server (tests/nvim).
test-nvim: $(STAMP)
	$(BIN)/python -m pytest -q tests/nvim

# Vim 9 + ALE against the real server (tests/vim); installs vim-nox and vim-ale from Debian
# when they are missing and it runs as root.
test-vim: $(STAMP)
	$(BIN)/python -m pytest -q tests/vim

# Headless Emacs 28 + eglot against the real server (tests/emacs); the suite installs Debian's
# emacs-nox and elpa-eglot when they are missing (as root).
test-emacs: $(STAMP)
	$(BIN)/python -m pytest -q tests/emacs

# The documentation site: warnings are errors, every local link and reference is checked (-n).
DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): pyproject.toml $(STAMP)
	@echo "Installing the documentation tools into $(VENV) (log: $(VENV)/install.log)..."
	@$(BIN)/python -m pip install --quiet -e '.[test,dev,docs]' > $(VENV)/install.log 2>&1 || \
	  { cat $(VENV)/install.log; echo "make: installing into $(VENV) failed (log above)"; exit 1; }
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/python -m sphinx -E -W --keep-going -n -q -b html docs docs/_build/html
	@echo "docs/_build/html/index.html"

lint: $(STAMP) lint-workflows
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The GitHub Actions workflows, against the workflow schema that check-jsonschema ships.
lint-workflows: $(STAMP)
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python bench/runtime_bench.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache editors/vscode/bundled/libs docs/_build docs/_generated

# VS Code extension (editors/vscode): packaging, unit tests, real-editor end-to-end test.
VSCODE_DIR := editors/vscode
VSCODE_NPM := $(VSCODE_DIR)/node_modules/.package-lock.json

.PHONY: test-vscode-unit

$(VSCODE_NPM): $(VSCODE_DIR)/package.json $(VSCODE_DIR)/package-lock.json
	cd $(VSCODE_DIR) && npm ci --no-audit --no-fund
	touch $@

VERSION = $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' echoes_lsp/__init__.py)
WHEEL := dist/echoes_lsp-$(VERSION)-py3-none-any.whl

# The extension bundles the server built from this checkout (editors/vscode/bundled/libs).
vsix: $(STAMP) $(VSCODE_NPM)
	$(BIN)/python $(VSCODE_DIR)/scripts/bundle_server.py
	cd $(VSCODE_DIR) && npm run package

# sdist, wheel and .vsix (bundling that wheel) into dist/.
dist: $(STAMP) $(VSCODE_NPM)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/python $(VSCODE_DIR)/scripts/bundle_server.py --wheel $(WHEEL)
	cd $(VSCODE_DIR) && npm run package -- --out ../../dist/echoes-lsp-$(VERSION).vsix
	@ls -l dist

test-vscode-unit: $(VSCODE_NPM)
	cd $(VSCODE_DIR) && npm run test:unit

test-e2e: $(STAMP) test-vscode-unit vsix
	bash $(VSCODE_DIR)/e2e/run.sh
