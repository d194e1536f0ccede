# One-command setup: every target creates .venv from the project's own files when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-e2e lint lint-workflows format bench vsix dist clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py
	@printf '\n%s\n%s\n%s\n\n' "$$(printf '=%.0s' $$(seq 72))" "echoes-lsp check examples/demo-vault" "$$(printf '=%.0s' $$(seq 72))"
	@$(BIN)/echoes-lsp check examples/demo-vault; status=$$?; test $$status -le 1

test: $(STAMP)
	$(BIN)/python -m pytest -q

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
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache editors/vscode/bundled/libs

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
