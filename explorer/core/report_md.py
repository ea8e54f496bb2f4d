"""The report document in Markdown (report.md): one writer per section, render_markdown over
the sections in the registry's order, and scope_lines (what the report covers: evals,
models, engine versions, inputs) that the other formats share. explorer.core.report
re-exports every name."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any


from . import sections
from . import fmt
from .names import condition_text, label, more, plural
from .escape import md, md_code
from .mdtable import _Raw, _table
from .i18n import N_, _, ngettext

log = logging.getLogger(__name__)


def scope_lines(meta: dict, shown: int = 6) -> list[tuple[str, str]]:
    """(title, text) lines naming the evals, models, engine versions and inputs of a report,
    long lists cut as "a, b and N more" (the same lines in Markdown, HTML, PDF, dashboard)."""
    sc = meta.get("scope") or {}
    ev = [e["eval_id"] + (f" ({e['model']})" if e.get("model") and e["model"] not in e["eval_id"] else "")
          for e in sc.get("evals") or []]
    if (meta.get("cohort") or {}).get("eval_id"):
        ev = [_("{x}, the other loaded evals left out").format(x=ev[0])] if ev else ev
    out = [(_("Evals") if len(ev) > 1 else _("Eval"), more(ev, shown) or _("none loaded")), (_("Models"), more(sc.get("models") or [], shown) or _("not named")),
           (_("Engine versions"), more(sc.get("engine_versions") or [], shown) or _("not named")),
           (_("Inputs"), more(sc.get("inputs") or [], shown) or _("none"))]
    eng = meta.get("engine") or {}
    if eng.get("kind") not in (None, "duckdb"):  # a warehouse answered: say which and its cost
        out.append((_("Requests from"), _(
            "{kind} {url}, table {table}: {rows:,} requests, {scanned:,} rows scanned, "
            "{fetched:,} fetched, {seconds:.1f} s in the engine").format(
                kind=eng["kind"], url=eng.get("url"), table=eng.get("table"),
                rows=eng.get("table_rows") or 0, scanned=eng.get("rows_scanned") or 0,
                fetched=eng.get("rows_fetched") or 0, seconds=eng.get("seconds") or 0)))
    return out


# ---- Markdown -------------------------------------------------------------------------------
def _p(v) -> _Raw:
    """A p-value cell ("< 0.001" is our own text: no escaping, no entity)."""
    return _Raw(fmt.pval(v))


def _name(metric: Any) -> str:
    """A metric's display name with its unit ("scheduling delay (ms)"), as the panels write it."""
    return label(str(metric)) if metric is not None else ""


def _missing(sec: Any) -> str | None:
    if isinstance(sec, dict) and sec.get("status") in ("no_data", "error", "cancelled"):
        what = _("No data") if sec["status"] == "no_data" else _("Not computed")
        return f"_{what}: {md(sec.get('reason'))}_"
    return None


def _md_cohort(c: dict) -> str:
    cat = c.get("category")
    cat = ", ".join(cat) if isinstance(cat, list) else (cat or fmt.MISSING)
    lv = c.get("link_levels") or {}
    how = {"same-category": _("same category"), "all-correct": _("every correct case"),
           "outside-cluster": _("every case outside the cluster")}
    c = {**c, "control": how.get(c.get("control"), c.get("control"))}
    rows = [(_("Cluster"), c.get("cluster") or _("every badcase")), (_("Category"), cat),
            (_("Badcases"), fmt.count(c.get("badcases"))),
            (_("Share of all badcases"), fmt.share(c.get("share_of_badcases"))),
            (_("Bound to a trace request"), fmt.ratio(c.get("bound"), c.get("badcases"))),
            (_("Control group"), _("{control}: {control_cases}, "
                              "{control_bound} bound").format(control=c.get('control'), control_cases=plural(c.get('control_cases') or 0, 'case'), control_bound=_count(c.get('control_bound')))),
            (_("Links by level"), _("exact id {get}, fuzzy {get2}, "
                               "weak {get3}").format(get=_count(lv.get('1', 0)), get2=_count(lv.get('2', 0)), get3=_count(lv.get('3', 0))))]
    amb_b, amb_c = c.get("ambiguous_badcases") or 0, c.get("ambiguous_control") or 0
    if amb_b or amb_c:
        rows.append((_("Ambiguous (left unbound)"), _(
            "{bad} badcases, {control} control cases: several requests fit equally well").format(
                bad=amb_b, control=amb_c)))
    out = _table(("", ""), rows)
    if c.get("note"):
        out += f"\n\n> {md(c['note'])}"
    amb = c.get("ambiguous") or []
    if amb:
        from .association import ambiguous_text
        lines = [f"- {md_code(str(a['case_id']))}: {md(ambiguous_text(a))}"
                 + (": " + ", ".join(md_code(str(r)) for r in a.get("requests")[:5])
                    if a.get("requests") else "") for a in amb[:20]]
        more = f"\n- ... {amb_b - 20} more in report.json" if amb_b > 20 else ""
        out += ("\n\nAmbiguous badcases (not bound, never guessed):\n\n" + "\n".join(lines)
                + more)
    return out


def _md_comparison(rows: list) -> str:
    body, notes = [], []
    for r in rows:
        unit = r.get("unit") or ""
        share = r.get("kind") == "categorical"
        m = str(r.get("metric"))
        ci = (fmt.MISSING if r.get("ci_low") is None else
              f"[{fmt.num(r['ci_low'], m, unit='')}, {fmt.num(r['ci_high'], m, unit='')}]")
        eff = fmt.effect_cell(r) + ("" if share else f" / {fmt.signed(r.get('hedges_g'))}")
        rank = "" if share else fmt.rank_cell(r)
        name = label(m, False) + (_(" (share)") if share else f" ({unit})" if unit else "")
        adj = (fmt.MISSING if r.get("adjusted_p_adjusted") is None else
               f"{fmt.pct(r.get('adjusted_diff_pct'))} ({_p(r.get('adjusted_p_adjusted'))})")
        body.append((name, fmt.mean_cell(r, "bad_mean"), fmt.mean_cell(r, "control_mean"),
                     fmt.pct(r.get("diff_pct")), adj, _p(r.get("p_value")),
                     _p(r.get("p_adjusted")), eff, rank, ci, fmt.n_cell(r)))
        if r.get("reason"):
            notes.append(f"- {md(label(r['metric'], False))}: {md(r['reason'])}")
    out = _table((_("Metric"), _("Badcase mean"), _("Control mean"), _("Diff"),
                  _("Diff at equal workload (adjusted p)"), _("p (Mann-Whitney / Fisher)"), _("p adjusted (BH)"),
                  _("Cohen's d / Hedges' g (odds ratio)"), _("Rank-biserial r [95% CI]"),
                  _("95% CI of the difference"), _("n bad / control")), body)
    if notes:
        out += "\n\n" + "\n".join(notes)
    return out


def _md_strata(st: dict) -> str:
    """The strata the cohort pools, the significant rows per stratum and the stratified tests."""
    what = _("engine version") if st.get("by") == "engine_version" else _("eval")
    parts = [_("The cohort pools {n} {what}s: {strata}.").format(
        n=len(st.get("strata") or []), what=what, strata=", ".join(
            _("{stratum} ({bad} bad / {control} control)").format(
                stratum=md(s["stratum"]), bad=s["n_bad"], control=s["n_control"])
            for s in st.get("strata") or []))]
    parts += [f"> {md(w)}" for w in st.get("warnings") or []]
    tests = {t["metric"]: t for t in st.get("tests") or []}
    rows = [(label(r["metric"], False), md(r["stratum"]), fmt.num(r.get("bad_mean")),
             fmt.num(r.get("control_mean")), f"{r['n_bad']} / {r['n_control']}",
             _p(tests.get(r["metric"], {}).get("p_value")),
             _(tests.get(r["metric"], {}).get("test", ""))) for r in st.get("rows") or []]
    if rows:
        parts.append(_table((_("Metric"), what[:1].upper() + what[1:], _("Badcase mean"),
                             _("Control mean"), _("n bad / control"), _("Stratified p"),
                             _("Test")), rows))
    else:
        parts.append(_("_No metric differs significantly, so nothing is broken down by stratum._"))
    return "\n\n".join(parts)


def _md_tree(t: dict) -> str:
    lines = [_("Baseline error rate: {baseline_error_rate} over {n} "
             "bound cases (max depth {max_depth}, min {min_samples_leaf} "
             "per leaf; {dropped_rows} dropped for missing values).").format(baseline_error_rate=fmt.share(t.get('baseline_error_rate')), n=t.get('n'), max_depth=t.get('max_depth'), min_samples_leaf=t.get('min_samples_leaf'), dropped_rows=t.get('dropped_rows')), "",
             _("**Riskiest path:** {sentence}").format(sentence=md(t.get('sentence'))), ""]
    risky = set(t.get("riskiest_path") or ())
    byid = {n["id"]: n for n in t.get("nodes") or ()}
    for n in t.get("nodes") or ():
        par = byid.get(n.get("parent"))
        cond = (condition_text(par["feature"], "<=" if n.get("side") == "le" else ">",
                               float(par["threshold"]), lambda v, m: fmt.num(v, m))
                if par and par.get("feature") and par.get("threshold") is not None
                else n.get("condition") or _("all cases"))
        mark = " ←" if n["id"] in risky and n.get("is_leaf") else ""
        lines.append(_("{depth}- \\[{id}\\] {cond}: error rate "
                     "{error_rate} (n={n}){mark}").format(depth='  ' * n.get('depth', 0), id=md(n['id']), cond=md(cond), error_rate=fmt.share(n.get('error_rate')), n=n.get('n'), mark=mark))
    return "\n".join(lines)


def _md_heatmap(h: dict) -> str:
    xe, ye = h.get("x_edges") or [], h.get("y_edges") or []
    head = [f"{_name(h.get('y_metric'))} ↓ / {_name(h.get('x_metric'))} →"] + [
        f"{fmt.num(xe[i])}–{fmt.num(xe[i + 1])}" for i in range(len(xe) - 1)]
    rows = []
    for j in reversed(range(len(ye) - 1)):
        vals = h["values"][j]
        rows.append([f"{fmt.num(ye[j])}–{fmt.num(ye[j + 1])}"] +
                    ["" if v is None else fmt.num(v) for v in vals])
    level = (_("time windows of {window_s} s").format(window_s=fmt.num(h.get('window_s'))) if h.get("level") == "window"
             else "requests")
    return (_("Mean {value_metric} per cell; {n_items} {level}.\n\n").format(value_metric=md(_name(h.get('value_metric'))), n_items=md(h.get('n_items')), level=level)
            + _table(head, rows))


MD_MAX_CHANGES = 15
SLA_GROUPS = (N_("run"), N_("version"), N_("category"), N_("tenant"))  # "By run", translated


def _bench_list(names: list[str]) -> str:
    """Benchmark names joined, a sweep sharing a prefix ("x/0.1", "x/0.5", ...) written once
    as "x/{0.1 … 4.1} (11)"."""
    groups: dict = {}
    for n in names:
        head, sep, tail = n.rpartition("/")
        groups.setdefault(head if sep else n, []).append(tail if sep else None)
    out = []
    for head, tails in groups.items():
        tails = [t for t in tails if t is not None]
        if len(tails) > 2:
            out.append(f"{head}/{{{tails[0]} … {tails[-1]}}} ({len(tails)})")
        else:
            out += [f"{head}/{t}" for t in tails] or [head]
    return ", ".join(out)


def _md_versions(v: dict) -> str:
    """Compact: the per-metric summary over the benchmarks compared, the most significant
    changes (every regression, then the smallest adjusted p, at most MD_MAX_CHANGES rows), one
    line naming the benchmarks seen in one version only, the accuracy; the per-version values
    table only when nothing could be compared."""
    parts = []
    vals = v.get("values") or []
    versions = v.get("versions") or []
    ch = v.get("all_changes") or v.get("changes") or []
    benches = list(dict.fromkeys(r.get("benchmark") for r in vals))
    if ch:
        n_b = len({c.get("benchmark") for c in ch})
        head = (_("Every benchmark pooled per version (no benchmark ran on two versions).")
                if v.get("pooled") else
                _("{n_b} benchmark{x} ran on at least two versions ").format(n_b=n_b, x='s' if n_b != 1 else '')
                + (_("and are compared.") if n_b != 1 else _("and is compared.")))
        parts.append(head)
        summ = v.get("summary") or []
        if summ and n_b > 1:
            parts.append(_("Per metric, over the benchmarks compared:\n\n") + _table(
                (_("Metric"), _("Versions"), _("Benchmarks"), _("Significant"), _("Regressions"),
                 _("Median change"), _("Range"), _("Smallest p adjusted")),
                [(_name(s["metric"]), f"{s['from_version']} → {s['to_version']}", s["benchmarks"],
                  s["significant"], s["regressions"], fmt.pct(s.get("median_change_pct")),
                  f"{fmt.pct(s.get('min_change_pct'))} … {fmt.pct(s.get('max_change_pct'))}",
                  _p(s.get("min_p_adjusted"))) for s in summ]))
        regs = [c for c in ch if c.get("regression")]
        shown = ch[:MD_MAX_CHANGES]
        rows = [(c.get("benchmark") or "", _name(c["metric"]), f"{c['from_version']} → {c['to_version']}",
                 fmt.num(c.get("from_value")), fmt.num(c.get("to_value")), fmt.pct(c.get("change_pct")),
                 _p(c.get("p_value")), _p(c.get("p_adjusted")),
                 _Raw(_("**REGRESSION**")) if c.get("regression") else
                 (_("workload differs") if c.get("workload_differs") else "")) for c in shown]
        title = (_("Changes between consecutive versions, regressions first, then by adjusted p")
                 + (_(" ({n_shown} of {n_ch}, {n_regs} flagged as regressions; every "
                    "change is in report.json)").format(n_shown=len(shown), n_ch=len(ch), n_regs=len(regs)) if len(shown) < len(ch) else "") + ":")
        parts.append(title + "\n\n" + _table(
            (_("Benchmark"), _("Metric"), _("Versions"), _("Old"), _("New"), _("Change"), _("p (Mann-Whitney)"),
             _("p adjusted"), _("Flag")), rows))
    elif vals:
        for b in benches[:12]:
            metrics = list(dict.fromkeys(r["metric"] for r in vals if r.get("benchmark") == b))
            cell = {(r["metric"], r["engine_version"]): r for r in vals if r.get("benchmark") == b}
            vs = [x for x in versions if any(k[1] == x for k in cell)]
            rows = [[_name(m)] + [("" if (m, x) not in cell else
                            f"{fmt.num(cell[(m, x)]['value'])} (n={cell[(m, x)]['n']})") for x in vs]
                    for m in metrics]
            title = f"**{md(b)}**\n\n" if b else (_("**every benchmark pooled**\n\n") if v.get("pooled") else "")
            parts.append(title + _table([_("Metric")] + vs, rows))
        if len(benches) > 12:
            parts.append(_("_({x} more benchmarks in report.json.)_").format(x=len(benches) - 12))
    parts += [md(n) for n in v.get("notes") or []]
    single = v.get("single_version") or []
    if single:
        by_v: dict = {}
        for r in single:
            by_v.setdefault(r["engine_version"], []).append(str(r.get("benchmark") or "unknown"))
        parts.append(_("{n_single} benchmark{x} seen in one "
                     "version only (not compared): ").format(n_single=len(single), x='s' if len(single) != 1 else '')
                     + "; ".join(f"{md(ver)}: {md(_bench_list(bs))}" for ver, bs in by_v.items()) + ".")
    acc = v.get("accuracy") or []
    if acc:
        parts.append(_("Accuracy of the bound eval cases:\n\n") + _table(
            (_("Benchmark"), _("Version"), _("Accuracy"), _("Cases")),
            [(a.get("benchmark") or "", a["engine_version"], fmt.share(a.get("accuracy")),
              a.get("n_cases")) for a in acc]))
        cats = v.get("accuracy_by_category") or []
        if len({a.get("category") for a in cats}) > 1:
            parts.append(_("Accuracy per category:\n\n") + _table(
                (_("Benchmark"), _("Version"), _("Category"), _("Accuracy"), _("Cases")),
                [(a.get("benchmark") or "", a["engine_version"], a.get("category") or fmt.MISSING,
                  fmt.share(a.get("accuracy")), a.get("n_cases")) for a in cats]))
    else:
        parts.append(_("_No eval case is bound to these runs: no accuracy per version._"))
    return "\n\n".join(parts)


def _md_sla(s: dict, runs=None) -> str:
    """Thresholds, attainment, goodput and the tables by grouping (the REPORT_GROUPS largest
    groups each); with `runs` (the runs that served the cohort) the per-run table keeps only
    those, the rest in one sentence (analysis.sla.for_cohort_runs)."""
    from .analysis.sla import REPORT_GROUPS, for_cohort_runs
    s, rest = for_cohort_runs(s, runs)
    thr = ", ".join(f"{md(label(m, False))} ≤ {fmt.num(t, m)}" for m, t in (s.get("thresholds") or {}).items())
    a = s.get("attainment") or {}
    out = [_("Thresholds: {thr}. Attainment {share} ({n_met} of "
           "{n} judged requests; {n_unjudged} lacked a metric); goodput "
           "{goodput_rps} req/s, {goodput_tps} tokens/s.").format(thr=thr, share=fmt.share(a.get('share')), n_met=_count(a.get('n_met')), n=_count(a.get('n')), n_unjudged=_count(a.get('n_unjudged')), goodput_rps=fmt.num(a.get('goodput_rps')), goodput_tps=fmt.num(a.get('goodput_tps')))]
    if rest:
        out.append(md(rest))
    for name, rows in (s.get("by") or {}).items():
        if not rows:
            continue
        top = sorted(rows, key=lambda r: -r["n"])[:REPORT_GROUPS]
        more = (_(" ({shown} largest of {n_rows})").format(shown=REPORT_GROUPS, n_rows=len(rows))
                if len(rows) > REPORT_GROUPS else "")
        out.append(_("By {group}{more}:").format(group=md(_(name)), more=more) + "\n\n" + _table(
            (_(name), _("Attainment"), _("Met / judged"), _("Goodput (req/s)"), _("Goodput (tokens/s)")),
            [(r["key"], fmt.share(r.get("share")), f"{_count(r['n_met'])} / {_count(r['n'])}",
              fmt.num(r.get("goodput_rps")), fmt.num(r.get("goodput_tps"))) for r in top]))
    return "\n\n".join(out)


def _md_sla_diagnosis(d: dict) -> str:
    from .analysis.sla_report import markdown
    return markdown(d)


def _md_whatif(w: dict) -> str:
    out = [_("Effect on {outcome} of moving "
           "{treatment} to the scenario value: "
           "{estimate} (95% CI [{ci_low}, "
           "{ci_high}]); adjusted for "
           "{common_causes}").format(outcome=md(label(str(w.get('outcome')), False)), treatment=md(label(str(w.get('treatment')), False)), estimate=fmt.num(w.get('estimate')), ci_low=fmt.num(w.get('ci_low')), ci_high=fmt.num(w.get('ci_high')), common_causes=md(', '.join(label(c, False) for c in w.get('common_causes') or [])) or _('no common cause'))
           + (f"; {md(w.get('method'))}" if w.get("method") else "") + "."]
    sc = w.get("scenario") or {}
    if sc:
        what = ", ".join(f"{md(label(k, False))} = {fmt.num(v)}" for k, v in (sc.get("set") or {}).items())
        obs = w.get("observed_outcome")
        n = w.get("n_selected")
        if isinstance(n, int):
            what += _(" for the {n:,} case{x} it applies to").format(n=n, x='s' if n != 1 else '')
        out.append(_("What if {what}: predicted {outcome} "
                   "{predicted_outcome} "
                   "(95% CI [{ci_low}, {ci_high}])").format(what=what, outcome=md(label(str(w.get('outcome')), False)), predicted_outcome=fmt.num(sc.get('predicted_outcome')), ci_low=fmt.num(sc.get('ci_low')), ci_high=fmt.num(sc.get('ci_high')))
                   + (_(", observed {obs}").format(obs=fmt.num(obs)) if obs is not None else "") + ".")
    refs = [r for r in (w.get("refutations") or []) if isinstance(r, dict)]
    if refs:
        out.append(_table((_("Refutation"), _("New effect"), "p", _("Verdict")), [
            (r.get("label") or r.get("name"), fmt.num(r.get("new_effect")), _p(r.get("p_value")),
             _(r.get("verdict") or "")) for r in refs]))
    for warn in w.get("warnings") or []:
        out.append(f"> {md(warn)}")
    return "\n\n".join(out)


def _md_conclusion(c: dict) -> str:
    from .analysis.conclusion import module_name
    out = []
    if c.get("modules"):
        out.append(_("**Modules:** ") + md(", ".join(module_name(str(m)) for m in c["modules"])))
    out.append(md(c.get("narrative") or ""))
    sg = c.get("suggestions") or []
    if sg:
        out.append(_table((_("Priority"), _("Suggestion"), _("Flags to try"), _("Module")), [
            (s["priority"], s["text"], _Raw(" ".join(md_code(f) for f in s.get("flags") or []) or "–"),
             module_name(str(s["module"])) if s.get("module") else s.get("module")) for s in sg]))
    return "\n\n".join(out)


MD_MAX_INPUTS = 25


def _md_inputs(rows: list) -> str:
    """One row per file; beyond MD_MAX_INPUTS files, one row per folder and format (files that
    failed stay listed one by one; every file and its SHA-256 is in report.json)."""
    if not rows:
        return _("_No input file was loaded._")
    ignored = [r for r in rows if r.get("ignored")]
    rows = [r for r in rows if not r.get("ignored")]
    note = (ngettext("\n\n{n_ignored} file was ignored: ", "\n\n{n_ignored} files were ignored: ",
                     len(ignored)).format(n_ignored=len(ignored)) + "; ".join(f"{md(Path(r['path']).name)} ({md(r['ignored'])})" for r in ignored[:8])
            + (" ..." if len(ignored) > 8 else "")) if ignored else ""
    return _md_input_rows(rows) + note


def loaded_inputs(rows: list) -> list:
    """The input rows that loaded (neither failed nor ignored): report.md and the HTML / PDF
    group their listing by folder beyond MD_MAX_INPUTS of them."""
    return [r for r in rows if not r.get("error") and not r.get("ignored")]


def listed_inputs(rows: list) -> int:
    """How many files the grouped listing covers (its line above): the loaded ones, grouped,
    and the failed ones, each on its own row; ignored files are noted apart."""
    return sum(1 for r in rows if not r.get("ignored"))


def _md_input_rows(rows: list) -> str:
    if not rows:
        return _("_No trace or eval file was loaded._")
    loaded = loaded_inputs(rows)
    if len(loaded) <= MD_MAX_INPUTS:
        return _table((_("File"), _("Format"), _("Rows loaded"), _("Skipped"), _("SHA-256"), _("Error")), [
            (r["path"], r.get("format") or "?", r.get("rows_loaded"), r.get("rows_skipped"),
             (r.get("sha256") or "")[:16], r.get("error") or "") for r in rows])
    body = [(folder_files(folder, n), fmt, loaded, skipped, "")
            for folder, fmt, n, loaded, skipped in input_groups(rows)]
    body += [(r["path"], r.get("format") or "?", r.get("rows_loaded"), r.get("rows_skipped"),
              r["error"]) for r in rows if r.get("error")]
    return (grouped_files(listed_inputs(rows)) + "\n\n" + _table((_("Files"), _("Format"), _("Rows loaded"), _("Skipped"), _("Error")), body))


def input_groups(rows: list) -> list[tuple[str, str, int, int, int]]:
    """The loaded input files (report `inputs` rows, failed ones left out) per folder and
    format: (folder, format, files, rows loaded, rows skipped), in the order first seen; the
    listing of report.md and the HTML / PDF provenance beyond MD_MAX_INPUTS files."""
    groups: dict = {}
    for r in rows:
        if r.get("error") or r.get("ignored"):
            continue
        g = groups.setdefault((str(Path(r["path"]).parent), r.get("format") or "?"), [0, 0, 0])
        g[0] += 1
        g[1] += r.get("rows_loaded") or 0
        g[2] += r.get("rows_skipped") or 0
    return [(folder, form, n, loaded, skipped) for (folder, form), (n, loaded, skipped) in groups.items()]


def grouped_files(n: int) -> str:
    """The line above a listing of input files grouped by folder."""
    return _("{n:,} files, grouped by folder (each file and its SHA-256 in report.json):").format(n=n)


def folder_files(folder: str, n: int) -> str:
    """'aibrix/v0.2.1/ (66 files)', '…/mmlu_pro_outputs/ (1 file)'."""
    return _("{folder}/ ({files})").format(folder=folder, files=plural(n, "file"))


def _md_clusters(rows: list) -> str:
    if not rows:
        return _("_No badcase cluster._")
    return _table((_("Cluster"), _("Badcases"), _("Share"), _("Bound"), _("Categories")), [
        (r["cluster"], fmt.count(r["badcases"]), fmt.share(r.get("share")),
         f"{fmt.count(r['bound'])} ({fmt.share(r.get('binding_rate'))})",
         ", ".join(r.get("categories") or []))
        for r in rows])


MD_TIMELINE_PHASES = 40  # phases listed in report.md (every one is in report.json)


def _md_timeline(t: dict) -> str:
    """The worst badcase's request: phases, preemptions and ITL in one paragraph and a table."""
    m = t.get("metrics") or {}
    pre = t.get("preemptions") or []
    lines = [_("Request {request_id} of run {run_id} "
             "({source}): "
             "{pre}, ").format(request_id=md_code(t.get('request_id')), run_id=md_code(t.get('run_id')), source=_('from its events') if t.get('source') == 'events' else _('derived from its metrics'), pre=plural(len(pre), 'preemption'))
             + (_("{gaps_above_p99} above the run's p99 ITL of "
                "{run_p99_itl_ms} ms.").format(gaps_above_p99=plural(t.get('gaps_above_p99') or 0, 'inter-token gap'), run_p99_itl_ms=fmt.num(t.get('run_p99_itl_ms'))) if t.get("run_p99_itl_ms") is not None else
                _("no p99 ITL for the run (no per-token latencies recorded).")), ""]
    phases = t.get("phases") or []
    from .timeline import phase_name
    rows = [[phase_name(str(p.get("kind"))), fmt.num(p.get("start_ms")), fmt.num(p.get("duration_ms"))]
            for p in phases[:MD_TIMELINE_PHASES]]
    if rows:
        lines.append(_table([_("phase"), _("start (ms from arrival)"), _("duration (ms)")], rows))
    if len(phases) > len(rows):
        lines += ["", _("The first {n_rows} of {n_phases} phases; report.json has them all.").format(n_rows=len(rows), n_phases=len(phases))]
    keys = [k for k in ("queue_ms", "ttft_ms", "tpot_ms", "e2e_ms", "kv_cache_hit_rate",
                        "prompt_tokens", "completion_tokens") if m.get(k) is not None]
    if keys:
        lines += ["", _table([_name(k) for k in keys], [[
            _count(m[k]) if k.endswith("_tokens") else fmt.num(m[k]) for k in keys]])]
    return "\n".join(lines)


def _count(x) -> str:
    """A request count as written: whole numbers without decimals ("212"), else fmt.num."""
    return f"{int(x):,}" if isinstance(x, (int, float)) and float(x).is_integer() else fmt.num(x)


def _md_engine(e: dict) -> str:
    """Per stats run: its clock and the server-wide peak, then one row per engine."""
    lines = []
    unknown = _("engine ?")
    for run in e.get("runs") or []:
        clock = _(run["clock"]) if run.get("clock") else _("unknown clock")
        if run.get("first_stat_line_time"):
            clock += f" (0 s = {run['first_stat_line_time']})"
        lines += [f"**{md(run.get('run_id'))}** ({md(run.get('format'))}, "
                  f"{md(run.get('engine_kind') or unknown)}"
                  + (f", {md(run['model'])}" if run.get("model") else "") + _("); time: {clock}.").format(clock=md(clock)), ""]
        if run.get("settings"):
            lines += [_("Engine settings (vllm:cache_config_info): ") + ", ".join(
                f"{md(k)} = {md(v)}" for k, v in run["settings"].items()) + ".", ""]
        sv = run.get("server") or {}
        if sv.get("engines", 0) > 1 and sv.get("peak_running") is not None:
            at = f" at {fmt.num(sv['peak_running_ts_s'])} s" if sv.get("peak_running_ts_s") is not None else ""
            lines += [_("Server-wide (summed over {engines} engines): peak {peak_running} "
                      "running{at}, {waiting_at_peak} waiting then.").format(engines=sv['engines'], peak_running=_count(sv['peak_running']), at=at, waiting_at_peak=_count(sv.get('waiting_at_peak'))), ""]
        rows = []
        for g in run.get("engines") or []:
            span = (f"{fmt.num(g['ts_last'] - g['ts_first'])} s"
                    if g.get("ts_first") is not None and g.get("ts_last") is not None else "–")
            rows.append([g.get("engine") or "–", g.get("samples"), span,
                         f"{fmt.num(g.get('running_mean'))} / {_count(g.get('running_max'))}",
                         f"{fmt.num(g.get('waiting_mean'))} / {_count(g.get('waiting_max'))}",
                         f"{fmt.share(g.get('kv_usage_gpu_mean'))} / {fmt.share(g.get('kv_usage_gpu_max'))}",
                         fmt.share(g.get("prefix_cache_hit_rate_mean")),
                         fmt.num(g.get("gen_tps_mean")), _count(g.get("num_preemptions_sum"))])
        lines += [_table([_("engine"), _("samples"), _("span"), _("running mean / max"), _("waiting mean / max"),
                          _("KV usage mean / max"), _("prefix hit mean"), _("gen tok/s mean"),
                          _("preemptions")], rows), ""]
    ctx = e.get("request_context") or {}
    if ctx.get("bound_requests"):
        lines.append(_("{with_context:,} of {bound_requests:,} bound requests have the engine's "
                     "state over their lifetime (engine_running, engine_waiting, engine_kv_usage, "
                     "engine_prefix_hit_rate in the comparison).").format(with_context=ctx.get('with_context', 0), bound_requests=ctx['bound_requests']))
    return "\n".join(lines).rstrip()


def _md_replay(r: dict) -> str:
    """The replay section: the badcases under the scenario, the calibration, the sweep."""
    from .replay.compare import calibration_lines
    lines = []
    cal = r.get("calibration")
    if cal and cal.get("warning"):
        lines += [f"**{md(cal['warning'])}**", ""]
    if r.get("predicted_badcases") is None:
        lines.append(_("No badcase prediction: {reason}.").format(reason=md((r.get('reason') or _('not computed')).rstrip('.'))))
    else:
        lines.append(md(r.get("sentence") or ""))
        lines += ["", _table([_("setting"), _("observed badcases"), _("predicted badcases"), _("95% interval")],
                             [[r["setting"]["label"], str(r["observed_badcases"]),
                               f"{r['predicted_badcases']:.1f}",
                               _("{lo} to {hi}").format(lo=f"{r['ci_low']:.0f}", hi=f"{r['ci_high']:.0f}")]])]
        if r.get("model"):
            lines += ["", _("Outcome model: {model}; each case's KV-cache hit rate and "
                      "preemptions move by the replay's difference between the scenario and the "
                      "observed settings. The interval covers the model's uncertainty and chance, "
                      "not the engine model's own error (see the calibration).").format(model=r['model'])]
        for w in r.get("warnings") or []:
            if not (cal and w == cal.get("warning")):
                lines.append(f"- {md(w)}")
    if cal:
        lines += [""] + [f"- {md(x)}" for x in calibration_lines(cal)]
        if cal.get("dropped"):
            lines += [_("- dropped {x}: {why}").format(x=k, why=md(why)) for why, k in cal["dropped"].items()]
    sweeps = r.get("sweeps") or ([r["sweep"]] if (r.get("sweep") or {}).get("rows") else [])
    for sw in sweeps:
        lines += ["", _md_sweep(sw)]
    if r.get("sweeps_left_out"):
        lines += ["", ngettext("{n} more replayable run not swept.",
                               "{n} more replayable runs not swept.",
                               r["sweeps_left_out"]).format(n=r["sweeps_left_out"])]
    b = r.get("budget") or {}
    if b.get("seconds") is not None:  # the section's bound, stated whether or not it was hit
        lines += ["", (_("Bounded to {s:g} s of wall time; it ran out ({e:.0f} s used), so this "
                         "section is partial: {why}.").format(s=b["seconds"], e=b["elapsed_s"],
                                                               why=md(b["stopped"]))
                       if b.get("stopped") else
                       _("Bounded to {s:g} s of wall time; {e:.0f} s used, nothing left "
                         "out.").format(s=b["seconds"], e=b["elapsed_s"]))]
    return "\n".join(lines)


def _md_sweep(sw: dict) -> str:
    """One capacity sweep of the replay section: a sentence and its table."""
    from .replay.compare import NO_PREFIX
    if not sw.get("rows"):
        return _("Capacity sweep of {run_id}: {why}").format(
            run_id=md(sw.get("run_id")), why=md(sw.get("reason") or _("no data")))
    mono = sw.get("monotone")
    verdict = (_("no hit rate, {why}").format(why=_(NO_PREFIX)) if mono is None else
               _("the first-query hit rate never falls as the capacity grows") if mono else
               _("the first-query hit rate FALLS somewhere as the capacity grows"))
    n, total = sw.get("requests", 0), sw.get("requests_total")
    of = (_("the first {n:,} of {total:,}").format(n=n, total=total) if total and total > n
          else f"{n:,}")
    head = _("Capacity sweep of {run_id} ({of} requests, {eviction}, {block_size}-token blocks): "
             "{verdict}.").format(run_id=md(sw.get("run_id")), of=of,
                                  eviction=str(sw.get("eviction", "")).upper(),
                                  block_size=sw.get("block_size"), verdict=verdict)
    if sw.get("stopped"):  # the replay's time budget ran out: the points that fitted
        head += " " + _("Stopped: {why}.").format(why=md(sw["stopped"]))
    return head + "\n\n" + _table(
        [_("KV blocks"), _("hit rate"), _("preemptions"), _("rejected")],
        [[f"{x['num_gpu_blocks']:,}", "-" if x["hit_rate"] is None else f"{x['hit_rate']:.3f}",
          f"{x['preemptions']:,}", f"{x['rejected']:,}"] for x in sw["rows"]])


def _md_runs(v):
    from .report_runs import md_runs
    return md_runs(v)


def _md_run_versions(v):
    from .report_runs import md_run_versions
    return md_run_versions(v)


def _md_compare(v):
    from .report_compare import md_compare
    return md_compare(v)


# The writer of each section; render_markdown writes them in the registry's reading order
# (sections.DOCUMENT) under the sections' titles.
WRITERS = {
    "clusters": _md_clusters, "cohort": _md_cohort, "comparison": _md_comparison,
    "strata": _md_strata, "tree": _md_tree, "heatmap": _md_heatmap, "runs": _md_runs,
    "versions": _md_versions, "run_versions": _md_run_versions, "compare": _md_compare,
    "sla": _md_sla, "whatif": _md_whatif, "replay": _md_replay, "timeline": _md_timeline,
    "sla_diagnosis": _md_sla_diagnosis, "conclusion": _md_conclusion, "engine": _md_engine,
    "inputs": _md_inputs,
}
NOT_WRITTEN = {"distributions": "a picture of the cohort frame (the HTML and PDF show it)"}
SECTIONS_MD = tuple((k, WRITERS[k]) for k in sections.DOCUMENT if k not in NOT_WRITTEN)


def render_markdown(doc: dict) -> str:
    """The report as postmortem-ready Markdown: one section per report key, tables for the
    numbers, p-values as "< 0.001", a section without data saying why."""
    meta = doc.get("meta") or {}
    coh = (doc.get("cohort") or {}) if not _missing(doc.get("cohort")) else {}
    title = coh.get("cluster") or (meta.get("cohort") or {}).get("cluster") or _("every badcase")
    out = [_("# Trace Explorer report: {title}").format(title=md(title)), "",
           _("Generated {generated_at} by Trace Explorer {app_version}.").format(generated_at=md(meta.get('generated_at', '')), app_version=md(meta.get('app_version', '')))]
    out += [""] + [f"- {t}: {md(v)}" for t, v in scope_lines(meta)]
    if meta.get("simulated"):
        out += ["", _("> **Simulated data.** {demo_note}").format(demo_note=md(meta.get('demo_note') or '')).rstrip()]
    from .analysis.sla_report import sections_view
    doc = sections_view(doc)  # sla.windows / sla.diagnosis under their section's key
    for key, fn in SECTIONS_MD:
        if key not in doc:
            continue
        sec = doc[key]
        out += ["", f"## {_(sections.TITLES[key])}", ""]
        miss = _missing(sec)
        if miss:
            out.append(miss)
            continue
        try:
            out.append(fn(sec, (meta.get("scope") or {}).get("cohort_runs")) if key == "sla" else fn(sec))
        except Exception as e:  # noqa: BLE001 - a malformed section must not lose the report
            log.exception("markdown of %s failed", key)
            out.append(_("_Could not render this section: {x}: {x2}_").format(x=type(e).__name__, x2=md(e)))
    return "\n".join(out) + "\n"
