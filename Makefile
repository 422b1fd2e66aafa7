# estibench: `make serve` and `make test` are the whole set-up on a fresh machine (Python 3.11 + pip).
VENV ?= .venv
PY := $(VENV)/bin/python
export ESTIBENCH_DATABASE_URL ?= sqlite:///./estibench.db
PG_TEST_URL ?= postgresql+psycopg://postgres@127.0.0.1:5432/test
PYTEST_ARGS ?=
# pytest-xdist processes for make test / test-postgres (each has its own template database); 0 runs in-process.
TEST_WORKERS ?= 2
# make test-quick's processes: a third one runs while another's test waits on a server or a job worker (1 min 54 s
# against 2 min 17 s with two on a quiet 2-core machine, 2026-12-03).
QUICK_WORKERS ?= 3

.PHONY: install install-dev lock serve worker migrate test test-browser test-heavy test-processes test-quick test-postgres mutation lint format openapi bench backup reproduce clean

install:
	sh scripts/install.sh $(VENV)

install-dev:
	sh scripts/install.sh $(VENV) dev

# The hashed locks scripts/install.sh installs from, regenerated from pyproject.toml with uv (pinned versions are
# kept unless LOCK_ARGS=--upgrade, or --upgrade-package NAME); runtime and bench take the dev lock's versions.
LOCK_ARGS ?=
UV_COMPILE = $(VENV)/bin/uv pip compile --quiet --generate-hashes --universal --python-version 3.11 $(LOCK_ARGS)
lock: install-dev
	$(UV_COMPILE) requirements/build.in -o requirements/build.lock
	$(UV_COMPILE) pyproject.toml --extra dev --extra local -o requirements/dev.lock
	$(UV_COMPILE) pyproject.toml -c requirements/dev.lock -o requirements/runtime.lock
	$(UV_COMPILE) pyproject.toml --extra dev --extra local --extra bench -c requirements/dev.lock -o requirements/bench.lock

migrate: install
	$(PY) -m db.migrate "$(ESTIBENCH_DATABASE_URL)"

serve: migrate
	sh scripts/serve.sh $(VENV)

# A job worker alone (e.g. on another machine, with ESTIBENCH_DATABASE_URL=postgresql+psycopg://… and
# ESTIBENCH_REDIS_URL=redis://…).
worker: migrate
	$(PY) -m worker

# Consistent copy of the live store: a SQLite file (VACUUM INTO), or for a PostgreSQL URL a pg_dump in custom format
# (restore: python -m scripts.backup restore DUMP EMPTY_DB_URL; docs/deploy.md). make backup BACKUP=backups/x.db
BACKUP ?= backups/estibench-$(shell date +%Y%m%d-%H%M%S).$(if $(filter postgresql%,$(ESTIBENCH_DATABASE_URL)),dump,db)
backup: install
	$(PY) -m scripts.backup snapshot "$(ESTIBENCH_DATABASE_URL)" "$(BACKUP)"

# Every test but the groups CI runs as steps of their own: `processes` (make test-processes), `browser`
# (make test-browser), `heavy` (make test-heavy) and `java`. The fuzz tests run FUZZ_EXAMPLES examples per operation.
FUZZ_EXAMPLES ?= 4
TEST_GROUPS = not java and not processes and not browser and not heavy
test: install-dev
	ESTIBENCH_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -n $(TEST_WORKERS) -m "$(TEST_GROUPS)" $(PYTEST_ARGS)

# The pages in Debian's chromium through Playwright (tests/browser/; no browser is downloaded).
test-browser: install-dev
	$(PY) -m pytest -n $(TEST_WORKERS) -m "browser and not java and not processes" -q $(PYTEST_ARGS)

# Full-size runs (scaling tables, reproduction checks at the papers' sizes) and the fuzz tests at 25 examples.
test-heavy: install-dev
	ESTIBENCH_FUZZ_EXAMPLES=25 $(PY) -m pytest -n $(TEST_WORKERS) -m "(heavy or fuzz) and not java and not processes" \
		-q $(PYTEST_ARGS)

# Real server and worker processes (tests/reliability/, the scale-out test): crashes, supervision, load, memory.
# The idempotency crash test is a CI step of its own (.ci/run, right after this one).
test-processes: install-dev
	$(PY) -m pytest -m "processes and not java" -q --ignore=tests/reliability/test_idempotency_crash.py \
		$(PYTEST_ARGS)

# The inner loop: everything not marked slow or heavy (processes, fuzzing, long property tests, tests of a second or more
# that a faster test of the same behaviour already covers; docs/testing.md), in QUICK_WORKERS processes. The directories whose
# every test is slow are not even imported (the fuzz module builds the app when imported). Bytecode is written even
# where PYTHONDONTWRITEBYTECODE is set: without the cached compiled (and assert-rewritten) modules, every run
# compiles ~300 modules again, which doubles collection.
test-quick: export PYTHONDONTWRITEBYTECODE :=
test-quick: install-dev
	$(PY) -m pytest -n $(QUICK_WORKERS) -p no:schemathesis -m "not slow and not heavy and not java" -q --ignore=tests/contract --ignore=tests/reliability \
		--ignore=tests/browser $(PYTEST_ARGS)

test-postgres: install-dev
	ESTIBENCH_TEST_DATABASE_URL=$(PG_TEST_URL) $(PY) -m pytest -n $(TEST_WORKERS) -m "not processes" tests/db tests/api $(PYTEST_ARGS)

# Mutation testing with mutmut (slow: not part of `make test` or CI; docs/testing.md). Runs on a copy of the
# working tree in MUTATION_DIR, scoped by [tool.mutmut] in pyproject.toml; MUTANTS picks mutants by name glob,
# e.g. make mutation MUTANTS='service.stats.tails.*', or one family at a time: make mutation FAMILY=dynamics
# (the FAMILY_* globs below); it ends with per-module counts (scripts/mutation_summary.py).
# Inspect: cd $(MUTATION_DIR) && mutmut show <name>.
MUTATION_DIR ?= /tmp/estibench-mutation
MUTATION_JOBS ?= 2
FAMILY ?=
FAMILY_stats = service.stats.*
FAMILY_scoring = service.scoring.*
FAMILY_minhash = service.estimators.minhash*
FAMILY_compression = service.estimators.compression*
FAMILY_dynamics = service.estimators.hyperconnections* service.estimators.unrolling* service.estimators.snn* \
	service.estimators.axial_slr* service.estimators.predictive_coding*
FAMILY_internals = service.estimators.layer_patching* service.estimators.steering* service.estimators.sae* \
	service.estimators.fdslm*
FAMILY_ubench = service.estimators.ubench*
FAMILY_moead = service.estimators.moead*
FAMILY_reproductions = service.reproductions.*
FAMILY_core = service.registry.* service.types.* service.errors.* service.plot_text.*
FAMILY_usecases = usecases.*
FAMILY_repositories = db.repositories.*
# For an estimator family, the copy is narrowed to its files (only their mutants are generated) and to its tests
# (each mutant reruns only those): the FAMILY_FILES_* and FAMILY_TESTS_* lists. Every other family, or
# MUTATION_TESTS= set empty, keeps the whole [tool.mutmut] scope; MUTATION_TESTS='tests/x.py ...' overrides.
RESULT_FIELD_TESTS = tests/test_result_fields.py
DYNAMICS = hyperconnections unrolling snn axial_slr predictive_coding
INTERNALS = layer_patching steering sae fdslm
FAMILY_FILES_minhash = service/estimators/minhash*
FAMILY_FILES_compression = service/estimators/compression*
FAMILY_FILES_dynamics = $(foreach m,$(DYNAMICS),service/estimators/$(m)*)
FAMILY_FILES_internals = $(foreach m,$(INTERNALS),service/estimators/$(m)*)
FAMILY_FILES_ubench = service/estimators/ubench*
FAMILY_FILES_moead = service/estimators/moead*
FAMILY_FILES_reproductions = service/reproductions/*
FAMILY_TESTS_minhash = tests/service/test_minhash*.py tests/service/test_estimator_edges.py $(RESULT_FIELD_TESTS)
FAMILY_TESTS_compression = tests/service/test_compression*.py $(RESULT_FIELD_TESTS)
FAMILY_TESTS_dynamics = $(foreach m,$(DYNAMICS),tests/service/test_$(m)*.py) $(RESULT_FIELD_TESTS)
FAMILY_TESTS_internals = $(foreach m,$(INTERNALS),tests/service/test_$(m)*.py) $(RESULT_FIELD_TESTS)
FAMILY_TESTS_ubench = tests/service/test_ubench*.py $(RESULT_FIELD_TESTS)
FAMILY_TESTS_moead = tests/service/test_moead*.py $(RESULT_FIELD_TESTS)
FAMILY_TESTS_reproductions = tests/service/test_reproductions*.py
MUTANTS ?= $(FAMILY_$(FAMILY))
MUTATION_TESTS ?= $(wildcard $(FAMILY_TESTS_$(FAMILY)))
MUTATION_FILES = $(if $(MUTATION_TESTS),$(FAMILY_FILES_$(FAMILY)))
mutation: install-dev
	$(if $(FAMILY),$(if $(FAMILY_$(FAMILY)),,$(error unknown FAMILY=$(FAMILY); see the FAMILY_* globs in the Makefile)))
	rm -rf $(MUTATION_DIR) && mkdir -p $(MUTATION_DIR)
	git ls-files -z --cached --others --exclude-standard | tar --null -T - --ignore-failed-read -cf - | tar -xf - -C $(MUTATION_DIR)
	$(if $(MUTATION_TESTS),$(PY) scripts/mutation_scope.py $(MUTATION_DIR)/pyproject.toml --tests $(MUTATION_TESTS) \
		$(if $(MUTATION_FILES),--mutate $(foreach f,$(MUTATION_FILES),'$(f)')))
	cd $(MUTATION_DIR) && $(abspath $(VENV))/bin/mutmut run --max-children $(MUTATION_JOBS) $(foreach m,$(MUTANTS),'$(m)')
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
