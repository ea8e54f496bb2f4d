# Two entry points (see README): `make demo` and `make test`. Both install what is missing first.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test bench clean translations catalogues lock tools

setup: $(VENV)/.installed translations

# Languages (README "Languages"): one committed catalogue, explorer.po (the core's and the
# widgets' strings, all through explorer.core.i18n's _() / ngettext / pgettext), compiled to .mo at
# install; `make catalogues` re-extracts the strings with Babel.
I18N := resources/i18n
PO := $(I18N)/zh_CN/LC_MESSAGES/explorer.po

translations: $(PO:.po=.mo)

# translations / catalogues need a venv, not a fresh install: they depend on its python only, so
# `make translations VENV=<a shared venv>` never reinstalls the package there (.installed would,
# whenever pyproject.toml or the lock is newer than it)
$(PY):
	[ -x $@ ] || { bash scripts/setup.sh $(VENV) && touch $(VENV)/.installed; }

$(I18N)/%/LC_MESSAGES/explorer.mo: $(I18N)/%/LC_MESSAGES/explorer.po | $(PY)
	$(PY) -c 'import sys; from explorer.core.i18n import compile_catalogue as c; print(c(sys.argv[1]))' $*

catalogues: | $(PY)
	$(VENV)/bin/pybabel extract -F babel.cfg -k N_ -k NP_:1c,2 -k ngettext:1,2 --no-location \
	  --sort-output -o $(I18N)/explorer.pot explorer widgets
	$(VENV)/bin/pybabel update -D explorer -i $(I18N)/explorer.pot -d $(I18N) -l zh_CN \
	  --no-fuzzy-matching --ignore-obsolete --width 100

$(VENV)/.installed: pyproject.toml scripts/setup.sh requirements.lock
	bash scripts/setup.sh $(VENV)
	touch $@

# after a change of pyproject.toml's dependencies: resolve them into the venv, then write the locks
lock:
	$(PY) -m pip install -q -e ".[test,spark]"
	$(PY) scripts/lock.py

# the tests also need the spark extra (Java 17 + pyspark: the warehouse tests); the demo does not
$(VENV)/.installed-spark: $(VENV)/.installed requirements-spark.lock
	bash scripts/setup.sh $(VENV) spark
	touch $@

demo: setup
	bash scripts/demo.sh $(PY)

# the real benchmark / eval tools (aiperf, guidellm, inference-perf, lm-eval, evalscope, genai-perf), each in its own
# venv under .venv-tools/ (pinned in requirements-tools/); their tests skip when one is missing
tools:
	bash scripts/setup-tools.sh .venv-tools || echo "setup-tools: some tools did not install; their tests skip"

test: setup $(VENV)/.installed-spark tools
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -n auto --dist loadgroup

bench: setup
	for b in bench/*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .venv-tools demo-out .pytest_cache
