"""BurstGPT trace CSV (LLM serving workload of an Azure OpenAI GPT service).

Source: HPMLL/BurstGPT (README, data/BurstGPT_*.csv): columns `Timestamp` (seconds since the
start of the trace), `Model` (ChatGPT or GPT-4), `Request tokens`, `Response tokens`,
`Total tokens`, `Log Type` ("Conversation log" / "API log"). The README says the files
without "without_fails" in their name keep the failed requests, whose `Response tokens` are 0.
Arrivals and sizes only (no latencies): arrival_s = Timestamp (trace-relative seconds),
prompt_tokens = Request tokens, completion_tokens = Response tokens, error = "failed (Response
tokens 0)" for a failure; request_id = the data row's number (1 = first row); Model, Log Type
and Total tokens go to extra (Model to runs.model when the file has one model). A row whose
Total tokens differs from Request + Response tokens is kept and counted in the report.
"""
from __future__ import annotations

from pathlib import Path


from ..i18n import _
from .base import Sniff
from ._common import RowError, check_ranges, insert_requests, integer, no_rows, num, read_text_csv, register_run, text

NAME = "burstgpt"
KIND = "trace"
COLUMNS = ("Timestamp", "Model", "Request tokens", "Response tokens", "Total tokens", "Log Type")


def detect(sniff: Sniff) -> float:
    """High when the first line is BurstGPT's header (any order, case-insensitive)."""
    if sniff.is_binary:
        return 0.0
    lines = sniff.first_lines(1)
    if not lines:
        return 0.0
    cols = {c.strip().strip('"').lower() for c in lines[0].split(",")}
    need = {"timestamp", "request tokens", "response tokens"}
    return 0.95 if need <= cols else 0.0


def load(path: Path, store, report) -> None:
    """Load every row of a BurstGPT CSV as one run's requests."""
    df = read_text_csv(path, ("Timestamp", "Request tokens", "Response tokens"))
    rows, models, mismatched = [], set(), 0
    fields = {"arrival_s": "Timestamp", "prompt_tokens": "Request tokens",
              "completion_tokens": "Response tokens"}
    for i, rec in enumerate(df.to_dict("records")):
        line = i + 2
        try:
            row = {"request_id": str(i + 1),
                   "arrival_s": num(rec["Timestamp"], "Timestamp", required=True),
                   "prompt_tokens": integer(rec["Request tokens"], "Request tokens"),
                   "completion_tokens": integer(rec["Response tokens"], "Response tokens")}
            total = integer(rec.get("Total tokens"), "Total tokens")
            check_ranges(row, fields)
        except RowError as e:
            report.skip(e.reason, line=line, field_name=e.field)
            continue
        if row["completion_tokens"] == 0:
            row["error"] = "failed (Response tokens 0)"
        if total is not None and None not in (row["prompt_tokens"], row["completion_tokens"]) \
                and total != row["prompt_tokens"] + row["completion_tokens"]:
            mismatched += 1
        model = text(rec.get("Model"))
        models.add(model)
        row["extra"] = {k: v for k, v in (("model", model), ("log_type", text(rec.get("Log Type"))),
                                          ("total_tokens", total)) if v is not None} or None
        rows.append(row)
    if not rows:
        raise no_rows(path, report)
    models.discard(None)
    run_id = register_run(store, report, path, NAME, f"burstgpt:{path.stem}",
                          model=models.pop() if len(models) == 1 else None, benchmark=path.stem,
                          config={"arrival_clock": "seconds since the trace start",
                                  "total_tokens_mismatch_rows": mismatched})
    insert_requests(store, report, run_id, rows)
    report.columns.update({"Timestamp": _("arrival_s (s since the trace start)"),
                           "Request tokens": "prompt_tokens", "Response tokens": "completion_tokens",
                           "Response tokens = 0": _("error (failed request)"),
                           "Model, Log Type, Total tokens": "extra"})
