# estibench: `make serve` and `make test` are the whole set-up on a fresh machine (Python 3.11 + pip).
VENV ?= .venv
PY := $(VENV)/bin/python
export ESTIBENCH_DATABASE_URL ?= sqlite:///./estibench.db
PG_TEST_URL ?= postgresql+psycopg://postgres@127.0.0.1:5432/test
PYTEST_ARGS ?=
# pytest-xdist processes for make test / test-postgres (each has its own template database); 0 runs in-process.
TEST_WORKERS ?= 2

.PHONY: install install-dev serve worker migrate test test-quick test-postgres mutation lint format openapi bench backup reproduce clean

install:
	sh scripts/install.sh $(VENV)

install-dev:
	sh scripts/install.sh $(VENV) dev

migrate: install
	$(PY) -m db.migrate "$(ESTIBENCH_DATABASE_URL)"

serve: migrate
	sh scripts/serve.sh $(VENV)

# A job worker alone (e.g. on another machine, with ESTIBENCH_DATABASE_URL=postgresql+psycopg://… and
# ESTIBENCH_REDIS_URL=redis://…).
worker: migrate
	$(PY) -m worker

# Consistent copy of the live SQLite store: make backup BACKUP=backups/estibench-YYYYMMDD.db
BACKUP ?= backups/estibench-$(shell date +%Y%m%d-%H%M%S).db
backup: install
	$(PY) -m scripts.backup snapshot "$(ESTIBENCH_DATABASE_URL)" "$(BACKUP)"

test: install-dev
	$(PY) -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

# The inner loop: everything not marked slow (reliability processes, fuzzing, long property tests), under a minute.
test-quick: install-dev
	$(PY) -m pytest -m "not slow" -q $(PYTEST_ARGS)

test-postgres: install-dev
	ESTIBENCH_TEST_DATABASE_URL=$(PG_TEST_URL) $(PY) -m pytest -n $(TEST_WORKERS) tests/db tests/api $(PYTEST_ARGS)

# Mutation testing with mutmut (slow: not part of `make test` or CI; docs/testing.md). Runs on a copy of the
# working tree in MUTATION_DIR, scoped by [tool.mutmut] in pyproject.toml; MUTANTS picks mutants by name glob,
# e.g. make mutation MUTANTS='service.stats.tails.*'; it ends with per-module counts (scripts/mutation_summary.py).
# Inspect: cd $(MUTATION_DIR) && mutmut show <name>.
MUTATION_DIR ?= /tmp/estibench-mutation
MUTANTS ?=
MUTATION_JOBS ?= 2
mutation: install-dev
	rm -rf $(MUTATION_DIR) && mkdir -p $(MUTATION_DIR)
	git ls-files -z --cached --others --exclude-standard | tar --null -T - --ignore-failed-read -cf - | tar -xf - -C $(MUTATION_DIR)
	cd $(MUTATION_DIR) && $(abspath $(VENV))/bin/mutmut run --max-children $(MUTATION_JOBS) $(MUTANTS)
	$(PY) scripts/mutation_summary.py $(MUTATION_DIR)

lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install-dev
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

openapi: install-dev
	$(PY) scripts/export_openapi.py docs/openapi.json

# Every paper's reproduction check through the run store of ESTIBENCH_DATABASE_URL; writes docs/reproductions.md.
# REPRODUCE_ARGS='--quick' runs only the fast ones, REPRODUCE_ARGS='unrolling fdslm' only those papers.
REPRODUCE_ARGS ?=
reproduce: install
	$(PY) -m scripts.reproduce $(REPRODUCE_ARGS)

bench: install-dev
	sh scripts/install.sh $(VENV) "dev,bench"
	for b in bench/*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
