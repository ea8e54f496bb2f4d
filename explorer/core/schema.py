"""The store's canonical schema (../shared/DESIGN.md "The store"), as DuckDB DDL.

Every time column names its unit. Missing in the source means NULL, never 0. Tables beyond the
contract (evals, inputs, cluster_names, settings) are marked "extra".
"""

TABLES: dict[str, str] = {
    "runs": """
        run_id VARCHAR PRIMARY KEY, source_path VARCHAR, source_sha256 VARCHAR, format VARCHAR,
        engine VARCHAR, engine_version VARCHAR, model VARCHAR, label VARCHAR, benchmark VARCHAR,
        started_at TIMESTAMP, config JSON,
        simulated BOOLEAN DEFAULT false,  -- extra: the run was produced by a simulation
        version_source VARCHAR  -- extra: where engine_version came from (file content or path or user)
    """,
    "requests": """
        run_id VARCHAR NOT NULL, request_id VARCHAR NOT NULL, arrival_s DOUBLE,
        prompt_tokens INTEGER, completion_tokens INTEGER, cached_prompt_tokens INTEGER,
        kv_cache_hit_rate DOUBLE, ttft_ms DOUBLE, tpot_ms DOUBLE, e2e_ms DOUBLE, queue_ms DOUBLE,
        prefill_ms DOUBLE, decode_ms DOUBLE, num_preemptions INTEGER, batch_size DOUBLE,
        finish_reason VARCHAR, error VARCHAR, prompt_hash VARCHAR, extra JSON,
        tenant VARCHAR  -- extra: user / tenant id where the trace has one (SLA breakdown)
    """,
    "token_latencies": """
        run_id VARCHAR NOT NULL, request_id VARCHAR NOT NULL, token_index INTEGER, itl_ms DOUBLE
    """,
    "request_events": """
        run_id VARCHAR NOT NULL, request_id VARCHAR NOT NULL, ts_s DOUBLE, kind VARCHAR,
        detail VARCHAR
    """,
    "engine_stats": """
        run_id VARCHAR NOT NULL, ts_s DOUBLE, running DOUBLE, waiting DOUBLE, swapped DOUBLE,
        kv_usage_gpu DOUBLE, kv_usage_cpu DOUBLE, prompt_tps DOUBLE, gen_tps DOUBLE,
        prefix_cache_hit_rate DOUBLE, num_preemptions DOUBLE,
        engine VARCHAR  -- data-parallel rank or engine id where the source names it (NULL otherwise)
    """,
    # aggregates a result file publishes per run (explorer/core/formats/_results.py holds the
    # vocabulary): metric (ttft_ms, tpot_ms, itl_ms, e2e_ms, requests, request_throughput, ...),
    # stat (mean, median, std, p99, ...; completed / failed for requests; value for a scalar)
    "run_metrics": """
        run_id VARCHAR NOT NULL, metric VARCHAR NOT NULL, stat VARCHAR NOT NULL, value DOUBLE,
        unit VARCHAR
    """,
    # extra: one row per eval (a file can hold several, e.g. GSM8K with four models)
    "evals": """
        eval_id VARCHAR PRIMARY KEY, source_path VARCHAR, source_sha256 VARCHAR, format VARCHAR,
        model VARCHAR, benchmark VARCHAR, simulated BOOLEAN DEFAULT false
    """,
    # case_id is unique by construction (eval_id unique per store, local ids deduplicated by
    # the loaders); no PRIMARY KEY: its index cost 2 s per million cases inserted (issue 17)
    "cases": """
        case_id VARCHAR, eval_id VARCHAR, model VARCHAR, benchmark VARCHAR,
        category VARCHAR, prompt VARCHAR, prompt_hash VARCHAR, reference VARCHAR,
        prediction VARCHAR, correct BOOLEAN, cluster VARCHAR, request_id VARCHAR,
        timestamp_s DOUBLE, prompt_tokens INTEGER, completion_tokens INTEGER, extra JSON
    """,
    "case_links": """
        case_id VARCHAR NOT NULL, run_id VARCHAR, request_id VARCHAR, level INTEGER, score DOUBLE
    """,
    # extra: provenance, one row per input file or folder the user loaded
    "inputs": """
        input_id INTEGER PRIMARY KEY, path VARCHAR, sha256 VARCHAR, format VARCHAR, kind VARCHAR,
        rows_loaded BIGINT, rows_skipped BIGINT, skipped_reasons JSON, columns JSON,
        run_ids JSON, eval_ids JSON, error VARCHAR, loaded_at TIMESTAMP
    """,
    # extra: request files read in place (explorer/core/inplace.py): the view requests_src_<view_no>
    # over the file (select_sql, its path written as $te_path), checked on reopen; status NULL
    # when attached, else why not (moved, changed)
    "in_place_files": """
        view_no INTEGER PRIMARY KEY, run_id VARCHAR, path VARCHAR, size_bytes BIGINT,
        mtime_ns BIGINT, select_sql VARCHAR, rows BIGINT, status VARCHAR
    """,
    # extra: user renames of badcase clusters, kept with the session
    "cluster_names": "cluster VARCHAR PRIMARY KEY, display_name VARCHAR",
    # extra: session state (edited causal graph, association tolerances, ...), JSON values
    "settings": "key VARCHAR PRIMARY KEY, value JSON",
}

# Views created with the tables: name -> the query (queries/<name>.sql) they show.
# case_best_link: each case's best link (the one definition the case view, the case table, the
# timeline, the binding rates and the version accuracy read).
VIEWS: tuple[str, ...] = ("case_best_link",)

# Canonical engine metrics of a request, with the unit shown to the user.
REQUEST_METRICS: dict[str, str] = {
    "kv_cache_hit_rate": "",
    "num_preemptions": "",
    "tpot_ms": "ms/token",
    "batch_size": "requests",
    "ttft_ms": "ms",
    "queue_ms": "ms",
    "e2e_ms": "ms",
    "prefill_ms": "ms",
    "decode_ms": "ms",
    "prompt_tokens": "tokens",
    "completion_tokens": "tokens",
    "cached_prompt_tokens": "tokens",
}
# The engine's state over a request's lifetime, from engine logs / scrapes (not columns of
# `requests`: queries/request_engine_context.sql computes them), with the unit shown.
CONTEXT_METRICS: dict[str, str] = {
    "engine_running": "requests",
    "engine_waiting": "requests",
    "engine_kv_usage": "",
    "engine_prefix_hit_rate": "",
}


def column_types(table: str) -> dict[str, str]:
    """Column name -> DuckDB type of a canonical table, in DDL order."""
    ddl = "\n".join(ln.split("--")[0] for ln in TABLES[table].splitlines())  # comments off
    return {w[0]: w[1] for w in (part.split() for part in ddl.split(",")) if w}


def columns(table: str) -> list[str]:
    """Column names of a canonical table, in DDL order."""
    return list(column_types(table))
