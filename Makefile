# Two entry points (see README): `make demo` and `make test`. Both install what is missing first.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml scripts/setup.sh
	bash scripts/setup.sh $(VENV)
	touch $@

# the tests also need the spark extra (Java 17 + pyspark: the warehouse tests); the demo does not
$(VENV)/.installed-spark: $(VENV)/.installed
	bash scripts/setup.sh $(VENV) spark
	touch $@

demo: setup
	bash scripts/demo.sh $(PY)

test: setup $(VENV)/.installed-spark
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest

bench: setup
	for b in bench/*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) demo-out .pytest_cache
