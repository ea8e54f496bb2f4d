"""The SLA diagnosis as every report format shows it: one list of blocks (sentences and tables,
already translated and formatted) that report.md and report.html both render, and the lift of
the `sla_diagnosis` section into report JSON's `sla` (DESIGN: `sla.windows`, `sla.diagnosis`)."""
from __future__ import annotations

from datetime import datetime, timezone

from .. import fmt
from ..names import label
from explorer.core.i18n import _, ngettext

MAX_ROWS = 12


def lift_into_sla(doc: dict) -> None:
    """Move the sla_diagnosis section's windows and diagnosis into doc["sla"] when both were
    computed (otherwise the section stays under its own key, saying why)."""
    d, s = doc.get("sla_diagnosis"), doc.get("sla")
    if isinstance(d, dict) and "windows" in d and isinstance(s, dict) and "status" not in s:
        doc["sla"] = {**s, "windows": d["windows"], "diagnosis": d["diagnosis"]}
        doc.pop("sla_diagnosis")


def sections_view(doc: dict) -> dict:
    """The document with the lifted windows and diagnosis also under `sla_diagnosis` (the
    reports render the SLA over time as a section of its own, of every request)."""
    s = doc.get("sla")
    if isinstance(s, dict) and "windows" in s and "sla_diagnosis" not in doc:
        return {**doc, "sla_diagnosis": {"windows": s["windows"], "diagnosis": s.get("diagnosis") or {}}}
    return doc


def clock(t) -> str:
    """A window edge: UTC time of day for a unix time, else seconds on the run's clock."""
    if t is None:
        return "–"
    t = float(t)
    if t >= 1e9:
        return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return f"{t:,.0f} s"


def _metric(m: str) -> str:
    names = {"preempted": _("share preempted"), "tpot_spread": _("TPOT spread (SD)"),
             "batch_entropy": _("batch-size entropy (bits)"), "request_rate": _("request rate (req/s)"),
             "engine_running": _("running (engine)"), "engine_waiting": _("waiting (engine)"),
             "engine_kv_usage": _("KV usage (engine)"),
             "engine_prefix_hit_rate": _("prefix-cache hit rate (engine)")}
    return names.get(m) or label(m, False)


def verdict_text(v: str) -> str:
    from .sla_diagnosis import VERDICTS
    return _(VERDICTS.get(v, v))


def blocks(s: dict) -> list[tuple]:
    """('p', text) and ('table', headers, rows) blocks of the SLA over time (s: report JSON's
    sla with windows and diagnosis, or the sla_diagnosis section)."""
    from .sla_diagnosis import FEATURES  # noqa: F401 - the features' steps
    d = s.get("diagnosis") or {}
    pr = d.get("params") or {}
    wins = s.get("windows") or []
    out: list[tuple] = []
    out.append(("p", _("{n_windows:,} windows of {w:g} s; a window meets the SLA when the P{pct:g} "
                       "of {metrics} is within its threshold and at most {budget} of its requests "
                       "errored. {met} of {judged:,} judged windows met it; {failed:,} failed, "
                       "{in_periods:,} of them in violation periods of {min_w} windows or more.").format(
        n_windows=len(wins), w=float(pr.get("window_s") or 0), pct=float(pr.get("percentile") or 95),
        metrics=", ".join(f"{label(m, False)} ≤ {fmt.num(t, m)}" for m, t in (pr.get("thresholds") or {}).items()),
        budget=f"{100 * float(pr.get('error_budget') or 0):g}%", met=fmt.share(d.get("window_attainment")),
        judged=d.get("windows_judged") or 0, failed=d.get("windows_failed") or 0,
        in_periods=d.get("windows_in_periods") or 0, min_w=pr.get("min_period_windows") or 1)))
    per = [p for p in d.get("violations") or [] if not p.get("isolated")]
    if per:
        out.append(("table", (_("Run"), _("From"), _("To"), _("Windows"), _("Requests"), _("Attainment")),
                    [(p["run_id"], clock(p["start_s"]), clock(p["end_s"]), p["windows"],
                      f"{p['n']:,}", fmt.share(p.get("attainment"))) for p in per[:MAX_ROWS]]))
        if len(per) > MAX_ROWS:
            out.append(("p", _("{n:,} more violation periods in report.json.").format(n=len(per) - MAX_ROWS)))
    else:
        out.append(("p", _("No violation period: no run of failing windows.")))
    cps = d.get("change_points") or []
    if cps:
        out.append(("p", _("Level shifts of attainment (change points): {points}.").format(points="; ".join(
            _("{run} at {at}: {before} -> {after}").format(run=c["run_id"], at=clock(c["at_s"]),
                                                          before=fmt.share(c["before"]), after=fmt.share(c["after"]))
            for c in cps[:MAX_ROWS]))))
    causes = d.get("causes") or []
    if causes:
        out.append(("h", _("What differed in the violation periods")))
        out.append(("table", (_("Metric"), _("Violation windows"), _("Met windows"), _("Adjusted p"),
                              "Hedges' g", "n", _("Survives")),
                    [(_metric(r["metric"]) + (" " + _("(workload)") if r["kind"] == "workload" else "")
                      + (" " + _("(an SLA bound)") if r.get("is_bound") else ""),
                      fmt.num(r.get("violated")), fmt.num(r.get("met")), fmt.pval(r.get("p_adjusted")),
                      fmt.num(r.get("effect")), f"{r['n_violated']} / {r['n_met']}",
                      _("yes") if r["survives"] else _("no")) for r in causes]))
        out.append(("p", _("One value per window; Mann-Whitney U (a permutation p below 20 windows a "
                           "group), Benjamini-Hochberg over every row; a row survives with adjusted "
                           "p < 0.05, |Hedges' g| >= 0.2 in the direction bad for the SLA and at "
                           "least 3 windows a group.")))
    if d.get("workload_changed"):
        out.append(("p", _("The workload changed in the violation periods ({what}): a change of "
                           "what was asked, not of the engine.").format(
            what=", ".join(_metric(m) for m in d["workload_changed"]))))
    ten = d.get("tenants") or []
    if ten:
        out.append(("h", _("Tenants")))
        out.append(("table", (_("Tenant"), _("Share in violation periods"), _("Share in met windows"),
                              _("Attainment in violation periods"), _("Attainment in met windows")),
                    [(t["tenant"], fmt.share(t.get("share_violated")), fmt.share(t.get("share_met")),
                      fmt.share(t.get("attainment_violated")), fmt.share(t.get("attainment_met")))
                     for t in ten[:MAX_ROWS]]))
    rules = d.get("rules") or []
    if rules and not any(r.get("survives") for r in rules):  # a page of "no" said in a sentence
        out.append(("p", ngettext(
            "No association rule survives: the {n:,} rule tested (FP-growth on tenants and long "
            "prompts -> violation, Fisher's exact test, Benjamini-Hochberg) has no adjusted p < 0.05 "
            "with lift >= 1.5 and at least 10 requests.",
            "No association rule survives: none of the {n:,} rules tested (FP-growth on tenants and "
            "long prompts -> violation, Fisher's exact test, Benjamini-Hochberg) has adjusted p < 0.05 "
            "with lift >= 1.5 and at least 10 requests.", len(rules)).format(n=len(rules))))
    elif rules:
        lp = d.get("long_prompt_tokens")
        out.append(("table", (_("Rule"), _("Support"), _("Confidence"), _("Lift"), _("Adjusted p"), _("Survives")),
                    [(" & ".join(_("long prompt") if a == "long_prompt" else a for a in r["antecedent"])
                      + " -> " + _("violation"), fmt.share(r["support"]), fmt.share(r["confidence"]),
                      fmt.num(r["lift"]), fmt.pval(r.get("p_adjusted")), _("yes") if r.get("survives") else _("no"))
                     for r in rules[:MAX_ROWS]]))
        out.append(("p", _("Association rules (FP-growth): long prompt = above {lp} tokens (the 75th "
                           "percentile); each rule tested with Fisher's exact test, "
                           "Benjamini-Hochberg over the rules; it survives with adjusted p < 0.05, "
                           "lift >= 1.5 and at least 10 requests.").format(lp=fmt.num(lp))))
    wi = d.get("whatif") or {}
    if "estimate" in wi:
        (tr, target), = (wi.get("set") or {"?": None}).items()
        refs = ", ".join(f"{r['label']}: {_(r['verdict'])}" for r in wi.get("refutations") or [])
        out.append(("h", _("What-if on the violation periods")))
        out.append(("p", _("If the {treatment} in the violation periods had been the met windows' median "
                           "({target}, observed {observed_hit}), their attainment would have been "
                           "{pred} (95% interval {lo} to {hi}) instead of {obs}. DoWhy, backdoor linear "
                           "regression on {n} windows; refuters: {refs}.").format(
            treatment=_metric(tr), target=fmt.share(target), observed_hit=fmt.share(wi.get("observed_hit")),
            pred=fmt.share(wi.get("predicted")), lo=fmt.share(wi.get("predicted_low")),
            hi=fmt.share(wi.get("predicted_high")), obs=fmt.share(wi.get("observed")), n=wi.get("windows"),
            refs=refs or "–")))
    elif wi.get("reason"):
        out.append(("p", _("What-if on the violation periods: not computed ({reason}).").format(reason=wi["reason"])))
    rp = d.get("replay") or {}
    if rp.get("status") == "ok":
        out.append(("h", _("Replay of the worst violation period")))
        out.append(("p", rp["sentence"]))
        val = (rp.get("calibration") or {}).get("validation") or {}
        if val.get("text"):
            out.append(("p", _("Replay error under other settings: {text}{why}.").format(
                text=val["text"], why=f" ({val['reason']})" if val.get("reason") else "")))
        if rp.get("reasons"):
            out.append(("p", _("Why the replay cannot say: {why}.").format(why="; ".join(rp["reasons"]))))
    elif rp.get("reason"):
        out.append(("p", _("Replay of the worst violation period: not computed ({reason}).").format(
            reason=rp["reason"])))
    steps = d.get("checklist") or []
    if steps:
        out.append(("h", _("Checklist")))
        rows = []
        for i, st in enumerate(steps, 1):
            rows.append((f"{i}. {st['title']}", verdict_text(st["verdict"]), evidence_text(st),
                         ", ".join(st.get("flags") or []) or "–"))
        out.append(("table", (_("Step"), _("Verdict"), _("Evidence"), _("Flags to try")), rows))
    return out


def evidence_text(st: dict) -> str:
    """One line of a checklist step's evidence."""
    from .conclusion import module_name
    ev = st.get("evidence") or []
    if st["step"] == "conclusion":
        e = ev[0] if ev else {}
        mods = e.get("modules") or []
        parts = [(_("modules: {m}").format(m=", ".join(module_name(m) for m in mods)) if mods
                  else _("no engine module is named: no step's evidence survives the tests"))]
        if e.get("workload_changed"):
            parts.append(_("the workload changed ({what}): the engine's differences may follow "
                           "from the load").format(
                what=", ".join(_metric(m) for m in e["workload_changed"])))
        return "; ".join(parts)
    if st["step"] == "tenants":
        return "; ".join(_("{rule}: lift {lift}, confidence {conf}, adjusted p {p}").format(
            rule=" & ".join(_("long prompt") if a == "long_prompt" else a for a in e["rule"]),
            lift=fmt.num(e["lift"]), conf=fmt.share(e["confidence"]), p=fmt.pval(e.get("p_adjusted")))
            for e in ev) or "–"
    return "; ".join(_("{metric} {bad} vs {ok} (adjusted p {p}, g {g})").format(
        metric=_metric(e["metric"]), bad=fmt.num(e.get("violated")), ok=fmt.num(e.get("met")),
        p=fmt.pval(e.get("p_adjusted")), g=fmt.num(e.get("effect"))) for e in ev) or "–"


def markdown(s: dict) -> str:
    """The blocks as Markdown."""
    from ..escape import md
    out = []
    for b in blocks(s):
        if b[0] == "h":
            out.append(f"### {md(b[1])}")
        elif b[0] == "p":
            out.append(md(b[1]))
        else:
            heads, rows = b[1], b[2]
            lines = ["| " + " | ".join(md(str(h)) for h in heads) + " |",
                     "|" + "---|" * len(heads)]
            lines += ["| " + " | ".join(md(str(c)) for c in r) + " |" for r in rows]
            out.append("\n".join(lines))
    return "\n\n".join(out)


def html(s: dict) -> str:
    """The blocks as HTML."""
    from ..escape import html_text
    out = []
    for b in blocks(s):
        if b[0] == "h":
            out.append(f"<h3>{html_text(b[1])}</h3>")
        elif b[0] == "p":
            out.append(f"<p>{html_text(b[1])}</p>")
        else:
            heads = "".join(f"<th>{html_text(str(h))}</th>" for h in b[1])
            body = "".join("<tr>" + "".join(f"<td>{html_text(str(c))}</td>" for c in r) + "</tr>" for r in b[2])
            out.append(f"<table class='sla'><tr>{heads}</tr>{body}</table>")
    return "".join(out)
