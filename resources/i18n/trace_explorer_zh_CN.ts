<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name></name>
    <message>
        <source>%1: %2 → %3 (%4)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(derived)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>token %1: ITL %2 at %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>above the run&apos;s p99 (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>badcase</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bound, correct</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unbound</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s → %2 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>in flight at its start: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>output</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>batch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>preemptions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KV-cache hit rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>run p99 %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>run %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>source: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>time from arrival (ms)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ITL (ms)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>token time from arrival (ms)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>requests in flight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>time from this request&apos;s arrival (s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>concurrency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>typical control</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>badcase ITL (shaded: its preempted gaps)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>typical control ITL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no per-token latencies in this trace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>preempted gaps shaded</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>CasesPanel</name>
    <message>
        <source>Double-click a case to open its bound request in the Timeline; pick rows and press “Select in every view” to compare them</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select in every view</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Make the picked cases the selection: every view shows them against the rest of the cohort</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 selected (%2): none is bound to a case of this cohort, so no case is listed. The requests are listed under the heatmap; double-click one to open its timeline. Esc clears the selection.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The selection (%1) holds no case of this cohort. Esc clears it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No case in the cohort: load an eval with badcases and choose a cluster.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 selected case(s): %2 (Esc clears, Alt+Left goes back)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 case(s) in the cohort: %2 badcase(s), %3 control</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (the first %1 listed)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cases</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ClustersPanel</name>
    <message>
        <source>Cluster</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bad</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Share</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bound</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>correct cases, same category</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>all correct cases</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Control:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No badcase cluster: load an eval with wrong answers (the cluster is taken from the file, else from the category).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(all badcases)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every badcase against the control group</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bound to a trace request: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>categories: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename cluster…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename cluster</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New name for “%1”:</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ComparisonPanel</name>
    <message>
        <source>Compare the cohort&apos;s badcases with the control, or the selection (a tree node, a heatmap cell, picked cases) with the rest of the cohort or with the control</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compare</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>★ significant: Benjamini-Hochberg adjusted p &lt; 0.05 (Mann-Whitney U, two-sided). d = Cohen&apos;s d, badcase minus control.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy as Markdown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy as TSV</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No comparison for %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2 case(s), %3 badcase(s)) against %4. ★ BH-adjusted p &lt; 0.05; d = Cohen&apos;s d, selected minus %4.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the rest of the cohort</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the control</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No metric to compare: neither group has a value of any engine or case metric (bind cases to trace requests to get TTFT, TPOT, ...).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ConclusionPanel</name>
    <message>
        <source>For %1 (%2 case(s), %3 badcase(s))</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No conclusion for the selection: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>DistributionsPanel</name>
    <message>
        <source>Histogram</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ECDF</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Metric:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Brush a range</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drag the shaded band: the cases whose value lies in it become the selection in every view</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Double-click near a value to open the nearest badcase&apos;s request in the Timeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The cohort has no case: choose a cluster with badcases.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No metric has a value in this cohort: the cases are not bound to trace requests and the eval records no token counts.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>▲ %1 selected case(s) with a value, in the selection colour</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>GraphEditor</name>
    <message>
        <source>Apply graph</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Default graph</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>graph</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>line %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Valid: %1 nodes, %2 edges, acyclic.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>HeaderPanel</name>
    <message>
        <source>No data loaded. Drop eval results and inference traces (files or folders) anywhere on this window.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>HeatmapPanel</name>
    <message>
        <source>colour = mean of</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>colour = badcase share</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Colour each cell by the mean of a metric, or by the share of badcases among the cohort&apos;s cases whose requests fall in it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>x</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>y</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>hover a cell for its n and value; click it to select its requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose metrics the loaded traces record above (e.g. TPOT and TTFT).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose other metrics above.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 · hover a cell for its counts and value; click it to select its requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 selected case(s) here, %2 badcase(s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (first %1 listed)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bound to %1 case(s) of this cohort</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none bound to a case of this cohort</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 request(s) in %2%3, %4 · double-click one to open its timeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: cells it occupies</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>InputsPanel</name>
    <message>
        <source>File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Format</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rows</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Skipped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>label</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>engine version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no version in the file or its path</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Engine version (from: %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No input loaded yet. Drop eval results (lm-eval samples, MMLU-Pro outputs, HELM runs, CSV/JSONL) and traces (vLLM/SGLang bench, AIPerf, LLMPerf, OTLP, aibrix CSV) here, or use File &gt; Open files… (Ctrl+O).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ignored</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ignored: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>error</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>ok, %n skipped</source>
        <translation type="unfinished">
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>ok</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>skipped: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>columns: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Trace Explorer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This panel could not start: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the running load or analysis</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Files loaded into this session; the Inputs panel (Alt+2) says why a file could not be read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 file(s) loaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 could not be read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ignored</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ready</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Open files…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open &amp;folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load &amp;demo workload</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load the simulated demo (two engine versions, Chinese cluster names)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open &amp;Session…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Save Session As…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Export Report…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>C&amp;lear selection</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Back</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Forward</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Re-run analyses</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Go to panel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Reset layout</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;About Trace Explorer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The language changes to %1 at the next start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write the report bundle (PNG, HTML, PDF, Markdown, JSON)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The report writer is not available in this build.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open eval results and traces</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Supported files (*.json *.jsonl *.csv *.parquet *.txt *.log);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trace Explorer session (*.duckdb)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export report to folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Report written to %1 (%2 files)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Writing report</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>About Trace Explorer</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Panel</name>
    <message>
        <source>Nothing loaded yet.
Drop eval and trace files or folders on the window, or use File &gt; Open files… (Ctrl+O).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy as image</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save image…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the selection</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing to show yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not draw this panel: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save image</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PNG image (*.png)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ReplayPanel</name>
    <message>
        <source>Cancelled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>infinite</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> blocks</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(GB)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> B/token</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KV bytes per token (Llama-3.1-8B fp16: 131072)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>block </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>max seqs </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>batched tokens </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add as run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweep capacity</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Predict badcases</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replay the cohort&apos;s time window at the observed settings and under the settings shown, and predict with the what-if&apos;s outcome model how many of its badcases would remain</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>metric</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>observed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>replay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>change %</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KV-cache capacity (blocks, log)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>hit rate (first queries)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>preemptions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load a trace with arrival times and prompt lengths (e.g. a Mooncake trace) to replay it under other KV-cache and scheduler settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replay: runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No run has requests with arrival times and prompt lengths.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading the trace…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replay: reading the trace</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Replaying %n request(s)…</source>
        <translation type="unfinished">
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Replay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not calibrated: the run records no TTFT or TPOT</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2 requests, %3 preemptions, %4 blocks evicted.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 request(s) dropped: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2 requests replayed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replay: adding the run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No cohort to predict for.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replay: badcases</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading the cohort…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replay: reading the cohort</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Badcases: %1 observed, %2 predicted under %3 (95% interval %4 to %5), %6 cases of %7 replayed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replay: settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>label</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No badcase prediction: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>badcases (observed → predicted)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TTFT mean, calibration</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TPOT mean, calibration</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>hit rate: observed settings → scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>preemptions: observed settings → scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Capacity sweep of %1 (%2 requests, %3): the first-query hit rate %4 as the capacity grows%5; preemptions %6 → %7.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>never falls</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>FALLS somewhere</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Sweeping %n capacities…</source>
        <translation type="unfinished">
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Replay sweep</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>prefix-cache hit rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>prefix-cache hit rate %1 → %2; </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweep from %3 to %4 blocks: </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>preemptions %5 → %6; %7 request(s) too large for the smallest cache.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>RunsPanel</name>
    <message>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Engine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Completed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Flags</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mean TTFT</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mean TPOT</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mean ITL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mean E2E</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Output tok/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version from</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Published</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Value</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recomputed from the requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No run loaded yet: drop benchmark results (vLLM / SGLang result JSON, printed result blocks, sweep folders) or traces here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Double-click a run&apos;s name or version to edit it (kept with the session).</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Run level (published aggregates, not tested): %n regression(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
        </translation>
    </message>
</context>
<context>
    <name>SlaPanel</name>
    <message>
        <source>SLA bound on %1: a request meets the SLA when it did not error and every bound holds</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: none of its cases&apos; requests can be judged against the SLA</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2 of its %3 judged request(s) meet the SLA (the whole cohort: %4)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>TimelinePanel</name>
    <message>
        <source>Back</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compare with a typical control request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The control request whose TPOT is nearest the control group&apos;s median TPOT, on the same time scale</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Swimlane window around the request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset zoom</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Neighbours</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hover over the timeline for exact values.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select a case bound to a request (or a request) to see its timeline.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing loaded yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Opening request timeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Case %1 is not bound to a trace request.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 in flight within ± %2 s.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>TreePanel</name>
    <message>
        <source>max depth</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>min cases per leaf</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>click a node to select its cases · drag to pan, Ctrl+wheel to zoom</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No decision tree: too few bound cases with engine metrics in both groups.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>VersionsPanel</name>
    <message>
        <source>▼ regression: the change is significant and in the worse direction</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2 case(s) (%3 badcase(s))</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ran on %2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>WhatIfPanel</name>
    <message>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Treatment: the engine metric the scenario sets</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Outcome: what the scenario predicts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>to</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>effect on</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>SLA if</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>changes by</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Refuter</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New effect</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Verdict</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Why</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No case in the cohort.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No case of the cohort is bound to a trace request with engine metrics, so there is nothing to intervene on.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scenario for the %1 selected cases.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scenario for the cluster&apos;s %1 badcases (select cases elsewhere to change this).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Estimating…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What-if</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(not in this data)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>estimating…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>SLA what-if</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The cohort changed: the what-if reruns on its new cases.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saving the causal graph</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading the causal graph</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The session&apos;s causal graph is not valid; fix it in the editor.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What-if (not run yet): set %1 to %2, effect on %3</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>window</name>
    <message>
        <source>Unexpected error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Something went wrong; the window keeps running.

%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Demo workload not available yet.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
