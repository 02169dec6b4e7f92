# The two commands of the README:
#   make demo   set up everything, then answer a question on the embedded demo VKG
#   make test   set up everything, then run the whole test suite (real PostgreSQL + Ontop)
#
# `make setup` and `make demo` install the lean set (no torch). `make test` and `make bench`
# add the `st` extra (sentence-transformers on torch): the suite and the start-up bench
# compare the numpy encoder with it (NAVQA_EXTRAS, see scripts/bootstrap.sh).
#
# Dataset files are never committed. NPD/Bgee/ATKIS come from their upstream, or from a
# local mirror: NAVQA_DATASETS_MIRROR defaults to ../shared/datasets when that exists.
NAVQA_DATASETS_MIRROR ?= $(abspath $(wildcard ../shared/datasets))
export NAVQA_DATASETS_MIRROR
export HF_HUB_OFFLINE = 1
export TRANSFORMERS_OFFLINE = 1

QUESTION ?= Which company currently operates the Aster Coast Line?

.PHONY: setup demo test bench lint

setup:
	@./scripts/bootstrap.sh

demo: setup
	.venv/bin/navqa ask --vkg demo --explain "$(QUESTION)"

test:
	@NAVQA_EXTRAS=st ./scripts/bootstrap.sh
	.venv/bin/python -m pytest

bench:
	@NAVQA_EXTRAS=st ./scripts/bootstrap.sh
	.venv/bin/python bench/bench_runtime.py --vkg npd
	.venv/bin/python bench/bench_index.py --vkg npd
	.venv/bin/python bench/bench_large_ontology.py
	.venv/bin/python bench/bench_online.py --vkg npd --llm-vkg demo
	.venv/bin/python bench/bench_datasets.py
	.venv/bin/python bench/bench_startup.py --vkg demo --compare-st

lint:
	.venv/bin/ruff check navqa tests
	.venv/bin/mypy
