"""lm-evaluation-harness run for real against the local endpoint, its files read back.

A local task (a YAML over a JSONL dataset this test writes, two filters as GSM8K has:
strict-match and flexible-extract) is answered by the endpoint's responder with known answers:
a third right in the strict `#### N` form, a third right only in words (strict-match finds no
`####`, so lm-eval's regex filter gives "[invalid]"; flexible-extract finds the number), a third
wrong. The samples file holds each doc once per filter; the product reads it as one eval per
filter (eval_id `lm_eval:<task>:<filter>`), each filter's accuracy equal to lm-eval's own
`exact_match,<filter>` in results_*.json (lm_eval/evaluator.py: the metric's aggregation `mean`
over the filter's per-sample values; api/metrics.py `mean`) and to the known truth.
"""
from __future__ import annotations

import json
import re

import pytest

from explorer.core.store import Store
from tests.openai_endpoint import Endpoint, Timing
from tests.real_tools import run_tool, tool_bin

# one tool run per module: its tests stay on one xdist worker (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("real_tools_lm_eval")

N = 12
TASK = "tiny_sums"
YAML = """task: tiny_sums
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "Question: What is {{{{a}}}} plus {{{{b}}}}?\\nAnswer:"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["\\n\\n"]
  do_sample: false
  max_gen_toks: 16
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
filter_list:
  - name: strict-match
    filter:
      - function: regex
        regex_pattern: "#### (\\\\-?[0-9\\\\.\\\\,]+)"
      - function: take_first
  - name: flexible-extract
    filter:
      - function: regex
        group_select: -1
        regex_pattern: "(-?[$0-9.,]{{2,}})|(-?[0-9]+)"
      - function: take_first
"""


def _answer(prompt: str) -> str:
    """Right in the strict form when a % 3 == 0, right in words when 1, wrong when 2."""
    m = re.search(r"What is (\d+) plus (\d+)\?", prompt)
    if not m:
        return "no idea"
    a, b = int(m.group(1)), int(m.group(2))
    return {0: f"#### {a + b}", 1: f"The sum is {a + b}", 2: f"#### {a + b + 1}"}[a % 3]


@pytest.fixture(scope="module")
def lm_eval_run(tmp_path_factory):
    exe = tool_bin("lm-eval", "lm_eval")
    d = tmp_path_factory.mktemp("lm_eval")
    docs = [{"a": 10 + i, "b": 3 * i + 7, "answer": str(10 + i + 3 * i + 7)} for i in range(N)]
    (d / "sums.jsonl").write_text("".join(json.dumps(x) + "\n" for x in docs))
    (d / "tasks").mkdir()
    (d / "tasks" / f"{TASK}.yaml").write_text(YAML.format(data=d / "sums.jsonl"))
    with Endpoint(responder=_answer, timing=Timing(2, 0, 0)) as ep:
        run_tool([exe, "run", "--model", "local-completions", "--model_args",
                  f"model=tiny-model,base_url={ep.url}/v1/completions,num_concurrent=2,"
                  "max_retries=1,tokenized_requests=False,tokenizer_backend=None",
                  "--tasks", TASK, "--include_path", d / "tasks", "--output_path", d / "out",
                  "--log_samples", "--batch_size", "1"], cwd=d, timeout=600)
        served = len(ep.log)
    samples = sorted((d / "out").rglob(f"samples_{TASK}_*.jsonl"))
    results = sorted((d / "out").rglob("results_*.json"))
    assert samples and results, sorted(p.name for p in (d / "out").rglob("*"))
    return docs, served, samples[0], json.loads(results[0].read_text())


def test_one_eval_per_filter_equals_lm_evals_own_accuracy(lm_eval_run):
    docs, served, samples, results = lm_eval_run
    assert served == N  # one generation per doc; the filters are applied after
    truth = {"strict-match": sum(d["a"] % 3 == 0 for d in docs) / N,
             "flexible-extract": sum(d["a"] % 3 in (0, 1) for d in docs) / N}
    published = results["results"][TASK]
    st = Store()
    st.load_paths([samples])
    evals = st.con.execute(
        "SELECT eval_id, count(*), avg(correct::INT) FROM cases GROUP BY eval_id ORDER BY 1").fetchall()
    assert [e[0] for e in evals] == [f"lm_eval:{TASK}:flexible-extract", f"lm_eval:{TASK}:strict-match"]
    for eval_id, n, acc in evals:
        filt = eval_id.rsplit(":", 1)[1]
        assert n == N
        assert acc == pytest.approx(published[f"exact_match,{filt}"], abs=1e-12)
        assert acc == pytest.approx(truth[filt], abs=1e-12)
    # the strict filter's unparsed answers are kept as lm-eval wrote them
    strict = st.con.execute("SELECT prediction FROM cases WHERE eval_id LIKE '%strict-match' "
                            "AND NOT correct").fetchall()
    assert sum(p == ("[invalid]",) for p in strict) == sum(d["a"] % 3 == 1 for d in docs)
