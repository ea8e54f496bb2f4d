<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name></name>
    <message>
        <source>queued</source>
        <translation>排队</translation>
    </message>
    <message>
        <source>prefill</source>
        <translation>prefill</translation>
    </message>
    <message>
        <source>decode</source>
        <translation>decode</translation>
    </message>
    <message>
        <source>preempted</source>
        <translation>被抢占</translation>
    </message>
    <message>
        <source>unsplit</source>
        <translation>未拆分</translation>
    </message>
    <message>
        <source>arrived</source>
        <translation>到达</translation>
    </message>
    <message>
        <source>scheduled</source>
        <translation>被调度</translation>
    </message>
    <message>
        <source>first_token</source>
        <translation>首 token</translation>
    </message>
    <message>
        <source>resumed</source>
        <translation>恢复</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>events</source>
        <translation>事件</translation>
    </message>
    <message>
        <source>derived</source>
        <translation>推导</translation>
    </message>
    <message>
        <source>%1: %2 → %3 (%4)</source>
        <translation>%1：%2 → %3（%4）</translation>
    </message>
    <message>
        <source>(derived)</source>
        <translation>（推导）</translation>
    </message>
    <message>
        <source>token %1: ITL %2 at %3</source>
        <translation>token %1：ITL %2，时刻 %3</translation>
    </message>
    <message>
        <source>above the run&apos;s p99 (%1)</source>
        <translation>超过该 run 的 P99（%1）</translation>
    </message>
    <message>
        <source>badcase</source>
        <translation>badcase</translation>
    </message>
    <message>
        <source>bound, correct</source>
        <translation>已绑定，正确</translation>
    </message>
    <message>
        <source>unbound</source>
        <translation>未绑定</translation>
    </message>
    <message>
        <source>%1 s → %2 s</source>
        <translation>%1 s → %2 s</translation>
    </message>
    <message>
        <source>in flight at its start: %1</source>
        <translation>开始时在途：%1</translation>
    </message>
    <message>
        <source>prompt</source>
        <translation>prompt</translation>
    </message>
    <message>
        <source>output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>batch</source>
        <translation>批</translation>
    </message>
    <message>
        <source>preemptions</source>
        <translation>抢占次数</translation>
    </message>
    <message>
        <source>KV-cache hit rate</source>
        <translation>KV cache 命中率</translation>
    </message>
    <message>
        <source>run p99 %1</source>
        <translation>run 的 P99：%1</translation>
    </message>
    <message>
        <source>run %1</source>
        <translation>run %1</translation>
    </message>
    <message>
        <source>source: %1</source>
        <translation>来源：%1</translation>
    </message>
    <message>
        <source>time from arrival (ms)</source>
        <translation>距到达时间 (ms)</translation>
    </message>
    <message>
        <source>ITL (ms)</source>
        <translation>ITL (ms)</translation>
    </message>
    <message>
        <source>token time from arrival (ms)</source>
        <translation>token 距到达时间 (ms)</translation>
    </message>
    <message>
        <source>requests in flight</source>
        <translation>在途请求</translation>
    </message>
    <message>
        <source>time from this request&apos;s arrival (s)</source>
        <translation>距本请求到达时间 (s)</translation>
    </message>
    <message>
        <source>this</source>
        <translation>本请求</translation>
    </message>
    <message>
        <source>this request</source>
        <translation>本请求</translation>
    </message>
    <message>
        <source>concurrency</source>
        <translation>并发数</translation>
    </message>
    <message>
        <source>request</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>typical control</source>
        <translation>典型对照</translation>
    </message>
    <message>
        <source>badcase ITL (shaded: its preempted gaps)</source>
        <translation>badcase ITL（阴影：被抢占的间隔）</translation>
    </message>
    <message>
        <source>typical control ITL</source>
        <translation>典型对照 ITL</translation>
    </message>
    <message>
        <source>no per-token latencies in this trace</source>
        <translation>该 trace 没有逐 token 延迟</translation>
    </message>
    <message>
        <source>preempted gaps shaded</source>
        <translation>被抢占的间隔以阴影标出</translation>
    </message>
    <message>
        <source>first token</source>
        <translation>首 token</translation>
    </message>
</context>
<context>
    <name>CasesModel</name>
    <message>
        <source>not bound</source>
        <translation>未绑定</translation>
    </message>
</context>
<context>
    <name>CasesPanel</name>
    <message>
        <source>Prompt</source>
        <translation>Prompt</translation>
    </message>
    <message>
        <source>Prediction</source>
        <translation>模型回答</translation>
    </message>
    <message>
        <source>Correct</source>
        <translation>正确</translation>
    </message>
    <message>
        <source>Cluster</source>
        <translation>Cluster</translation>
    </message>
    <message>
        <source>Category</source>
        <translation>类目</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Bound request</source>
        <translation>绑定的请求</translation>
    </message>
    <message>
        <source>Level</source>
        <translation>关联精度</translation>
    </message>
    <message>
        <source>1 exact id</source>
        <translation>1 精确请求 ID</translation>
    </message>
    <message>
        <source>2 fuzzy</source>
        <translation>2 模糊匹配</translation>
    </message>
    <message>
        <source>3 weak</source>
        <translation>3 弱匹配</translation>
    </message>
    <message>
        <source>Double-click a case to open its bound request in the Timeline; pick rows and press “Select in every view” to compare them</source>
        <translation>双击 case 在时间线中打开其绑定的请求；选中若干行并点击“在所有视图中选定”以对比它们</translation>
    </message>
    <message>
        <source>Select in every view</source>
        <translation>在所有视图中选定</translation>
    </message>
    <message>
        <source>Make the picked cases the selection: every view shows them against the rest of the cohort</source>
        <translation>将选中的 case 设为当前选择：所有视图都将其与 cohort 的其余部分对比</translation>
    </message>
    <message>
        <source>%1 selected (%2): none is bound to a case of this cohort, so no case is listed. The requests are listed under the heatmap; double-click one to open its timeline. Esc clears the selection.</source>
        <translation>已选定 %1（%2）：均未绑定到该 cohort 的 case，因此不列出 case。请求列在热力图下方；双击可打开其时间线。按 Esc 清除选择。</translation>
    </message>
    <message>
        <source>The selection (%1) holds no case of this cohort. Esc clears it.</source>
        <translation>当前选择（%1）不含该 cohort 的 case。按 Esc 清除。</translation>
    </message>
    <message>
        <source>No case in the cohort: load an eval with badcases and choose a cluster.</source>
        <translation>cohort 中没有 case：请加载含 badcase 的 eval 并选择一个 cluster。</translation>
    </message>
    <message>
        <source>%1 selected: %2 (Esc clears, Alt+Left goes back)</source>
        <translation>已选定 %1：%2（Esc 清除，Alt+← 返回）</translation>
    </message>
    <message>
        <source>%1 in the cohort: %2, %3 control</source>
        <translation>cohort 中 %1：%2，%3 个对照</translation>
    </message>
    <message>
        <source> (the first %1 listed)</source>
        <translation>（列出前 %1 个）</translation>
    </message>
    <message>
        <source>Cases</source>
        <translation>Case</translation>
    </message>
</context>
<context>
    <name>ClustersPanel</name>
    <message>
        <source>Cluster</source>
        <translation>Cluster</translation>
    </message>
    <message>
        <source>Bad</source>
        <translation>Badcase</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>占比</translation>
    </message>
    <message>
        <source>Bound</source>
        <translation>已绑定</translation>
    </message>
    <message>
        <source>correct cases, same category</source>
        <translation>正确 case，同类目</translation>
    </message>
    <message>
        <source>all correct cases</source>
        <translation>全部正确 case</translation>
    </message>
    <message>
        <source>every case outside the cluster</source>
        <translation>该 cluster 之外的全部 case</translation>
    </message>
    <message>
        <source>The cases of the badcases&apos; categories outside the cluster: correct ones and other clusters&apos; badcases (a noise cluster beside one tied to the engine is then not compared with correct cases only)</source>
        <translation>badcase 所属类目中该 cluster 之外的 case：正确 case 与其他 cluster 的 badcase（与引擎相关的 cluster 旁边的噪声 cluster 就不会只与正确 case 对比）</translation>
    </message>
    <message>
        <source>Control:</source>
        <translation>对照组：</translation>
    </message>
    <message>
        <source>Analyse the cases of one eval (one model) only, or of every loaded eval pooled</source>
        <translation>只分析一个 eval（一个模型）的 case，或合并分析全部已加载的 eval</translation>
    </message>
    <message>
        <source>Eval:</source>
        <translation>Eval：</translation>
    </message>
    <message>
        <source>every eval (%1)</source>
        <translation>全部 eval（%1 个）</translation>
    </message>
    <message>
        <source>No badcase cluster: load an eval with wrong answers (the cluster is taken from the file, else from the category).</source>
        <translation>没有 badcase cluster：请加载含错误回答的 eval（cluster 取自文件，否则取自类目）。</translation>
    </message>
    <message>
        <source>(all badcases)</source>
        <translation>（全部 badcase）</translation>
    </message>
    <message>
        <source>Every badcase against the control group</source>
        <translation>全部 badcase 与对照组对比</translation>
    </message>
    <message>
        <source>bound to a trace request: %1</source>
        <translation>已绑定到 trace 请求：%1</translation>
    </message>
    <message>
        <source>categories: %1</source>
        <translation>类目：%1</translation>
    </message>
    <message>
        <source>Rename cluster…</source>
        <translation>重命名 cluster…</translation>
    </message>
    <message>
        <source>Rename cluster</source>
        <translation>重命名 cluster</translation>
    </message>
    <message>
        <source>New name for “%1”:</source>
        <translation>“%1”的新名称：</translation>
    </message>
</context>
<context>
    <name>ComparePanel</name>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>Select flipped items</source>
        <translation>选中翻转的题目</translation>
    </message>
    <message>
        <source>Select, in the Cases table and every view, the items one side answered right and the other wrong (each on the side that lost it), of the first pair that answered the same items</source>
        <translation>在 Case 表及所有视图中选中一方答对、另一方答错的题目（取答错一方的 Case），取第一组回答了相同题目的对比</translation>
    </message>
    <message>
        <source>A</source>
        <translation>A</translation>
    </message>
    <message>
        <source>B</source>
        <translation>B</translation>
    </message>
    <message>
        <source>Nothing to compare: load two runs of one workload, or two evals that answered the same items.</source>
        <translation>没有可对比的内容：请加载同一负载的两个 run，或回答了相同题目的两个 eval。</translation>
    </message>
    <message>
        <source>every other run</source>
        <translation>其他所有 run</translation>
    </message>
    <message>
        <source>Comparing runs</source>
        <translation>正在对比 run</translation>
    </message>
</context>
<context>
    <name>ComparisonPanel</name>
    <message>
        <source>Badcases vs control</source>
        <translation>Badcase 组 vs 对照组</translation>
    </message>
    <message>
        <source>Selection vs rest of the cohort</source>
        <translation>选定 vs cohort 其余部分</translation>
    </message>
    <message>
        <source>Selected badcases vs control</source>
        <translation>选定的 badcase vs 对照组</translation>
    </message>
    <message>
        <source>Compare the cohort&apos;s badcases with the control, or the selection (a tree node, a heatmap cell, picked cases) with the rest of the cohort or with the control</source>
        <translation>将 cohort 的 badcase 与对照组对比，或将当前选择（决策树节点、热力图单元格、选中的 case）与 cohort 其余部分或对照组对比</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>★ significant: Benjamini-Hochberg adjusted p &lt; 0.05 (Mann-Whitney U, two-sided). d = Cohen&apos;s d, badcase minus control.</source>
        <translation>★ 显著：Benjamini-Hochberg 校正后 p &lt; 0.05（Mann-Whitney U 双侧检验）。d = Cohen&apos;s d，badcase 减对照组。</translation>
    </message>
    <message>
        <source>Copy as Markdown</source>
        <translation>复制为 Markdown</translation>
    </message>
    <message>
        <source>Copy as TSV</source>
        <translation>复制为 TSV</translation>
    </message>
    <message>
        <source>No comparison for %1: %2</source>
        <translation>%1 无指标对比：%2</translation>
    </message>
    <message>
        <source>%1 (%2, %3) against %4. ★ BH-adjusted p &lt; 0.05; d = Cohen&apos;s d, selected minus %4.</source>
        <translation>%1（%2，%3）对比%4。★ BH 校正后 p &lt; 0.05；d = Cohen&apos;s d，选定减%4。</translation>
    </message>
    <message>
        <source>the rest of the cohort</source>
        <translation> cohort 其余部分</translation>
    </message>
    <message>
        <source>the control</source>
        <translation>对照组</translation>
    </message>
    <message>
        <source>No metric to compare: neither group has a value of any engine or case metric (bind cases to trace requests to get TTFT, TPOT, ...).</source>
        <translation>没有可对比的指标：两组都没有任何引擎或 case 指标的值（将 case 绑定到 trace 请求以获得 TTFT、TPOT 等）。</translation>
    </message>
</context>
<context>
    <name>ConclusionPanel</name>
    <message>
        <source>For %1 (%2, %3)</source>
        <translation>针对 %1（%2，%3）</translation>
    </message>
    <message>
        <source>No conclusion for the selection: %1</source>
        <translation>当前选择无结论：%1</translation>
    </message>
    <message>
        <source>For the whole cohort</source>
        <translation>针对整个 cohort</translation>
    </message>
</context>
<context>
    <name>DistributionsPanel</name>
    <message>
        <source>Histogram</source>
        <translation>直方图</translation>
    </message>
    <message>
        <source>ECDF</source>
        <translation>ECDF</translation>
    </message>
    <message>
        <source>Metric:</source>
        <translation>指标：</translation>
    </message>
    <message>
        <source>Brush a range</source>
        <translation>框选范围</translation>
    </message>
    <message>
        <source>Drag the shaded band: the cases whose value lies in it become the selection in every view</source>
        <translation>拖动阴影带：取值落在其中的 case 将成为所有视图中的选择</translation>
    </message>
    <message>
        <source>Double-click near a value to open the nearest badcase&apos;s request in the Timeline</source>
        <translation>在某个值附近双击，在时间线中打开最近的 badcase 的请求</translation>
    </message>
    <message>
        <source>The cohort has no case: choose a cluster with badcases.</source>
        <translation>cohort 没有 case：请选择含 badcase 的 cluster。</translation>
    </message>
    <message>
        <source>No metric has a value in this cohort: the cases are not bound to trace requests and the eval records no token counts.</source>
        <translation>该 cohort 中没有指标有值：case 未绑定到 trace 请求，且 eval 未记录 token 数。</translation>
    </message>
    <message>
        <source>▲ selected, with a value: %1, in the selection colour</source>
        <translation>▲ 有值的选定：%1，以选择颜色显示</translation>
    </message>
</context>
<context>
    <name>GraphEditor</name>
    <message>
        <source>Apply graph</source>
        <translation>应用因果图</translation>
    </message>
    <message>
        <source>Default graph</source>
        <translation>默认因果图</translation>
    </message>
    <message>
        <source>graph</source>
        <translation>因果图</translation>
    </message>
    <message>
        <source>line %1: %2</source>
        <translation>第 %1 行：%2</translation>
    </message>
    <message>
        <source>Valid: %1 nodes, %2 edges, acyclic.</source>
        <translation>有效：%1 个节点，%2 条边，无环。</translation>
    </message>
</context>
<context>
    <name>HeaderPanel</name>
    <message>
        <source>No data loaded. Drop eval results and inference traces (files or folders) anywhere on this window.</source>
        <translation>未加载数据。将 eval 结果与推理 trace（文件或文件夹）拖放到本窗口任意位置。</translation>
    </message>
</context>
<context>
    <name>HeatmapPanel</name>
    <message>
        <source>run</source>
        <translation>run</translation>
    </message>
    <message>
        <source>request</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>scheduling delay</source>
        <translation>调度延迟</translation>
    </message>
    <message>
        <source>preemptions</source>
        <translation>抢占次数</translation>
    </message>
    <message>
        <source>KV-cache hit rate</source>
        <translation>KV cache 命中率</translation>
    </message>
    <message>
        <source>colour = mean of</source>
        <translation>颜色 = 均值：</translation>
    </message>
    <message>
        <source>colour = badcase share</source>
        <translation>颜色 = badcase 占比</translation>
    </message>
    <message>
        <source>Colour each cell by the mean of a metric, or by the share of badcases among the cohort&apos;s cases whose requests fall in it</source>
        <translation>按某指标的均值为每个单元格着色，或按请求落入其中的 cohort case 中 badcase 的占比着色</translation>
    </message>
    <message>
        <source>x</source>
        <translation>x</translation>
    </message>
    <message>
        <source>y</source>
        <translation>y</translation>
    </message>
    <message>
        <source>hover a cell for its n and value; click it to select its requests</source>
        <translation>悬停单元格查看其 n 与数值；单击选定其请求</translation>
    </message>
    <message>
        <source>Choose metrics the loaded traces record above (e.g. TPOT and TTFT).</source>
        <translation>请在上方选择已加载 trace 记录了的指标（如 TPOT 和 TTFT）。</translation>
    </message>
    <message>
        <source>Choose other metrics above.</source>
        <translation>请在上方选择其他指标。</translation>
    </message>
    <message numerus="yes">
        <source>restricted to %n violation period(s)</source>
        <translation>
            <numerusform>仅限 %n 个违约时段</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 · hover a cell for its counts and value; click it to select its requests</source>
        <translation>%1 · 悬停单元格查看其计数与数值；单击选定其请求</translation>
    </message>
    <message>
        <source>%1 level, n = %2</source>
        <translation>%1 级，n = %2</translation>
    </message>
    <message>
        <source>window</source>
        <translation>时间窗口</translation>
    </message>
    <message>
        <source>Selected here: %1, %2</source>
        <translation>此处选定：%1，%2</translation>
    </message>
    <message>
        <source> (first %1 listed)</source>
        <translation>（列出前 %1 个）</translation>
    </message>
    <message>
        <source>bound to %1 of this cohort</source>
        <translation>绑定到该 cohort 的 %1</translation>
    </message>
    <message>
        <source>none bound to a case of this cohort</source>
        <translation>均未绑定到该 cohort 的 case</translation>
    </message>
    <message>
        <source>%1 in %2%3, %4 · double-click one to open its timeline</source>
        <translation>%2%3 中 %1，%4 · 双击可打开其时间线</translation>
    </message>
    <message>
        <source>%1: cells it occupies</source>
        <translation>%1：其所在的单元格</translation>
    </message>
</context>
<context>
    <name>InputsPanel</name>
    <message>
        <source>run %1, version %2 (edit in the Runs panel)</source>
        <translation>run %1，版本 %2（在 Run 面板中编辑）</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Format</source>
        <translation>格式</translation>
    </message>
    <message>
        <source>Rows</source>
        <translation>行数</translation>
    </message>
    <message>
        <source>Skipped</source>
        <translation>已跳过</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>label</source>
        <translation>标签</translation>
    </message>
    <message>
        <source>engine version</source>
        <translation>引擎版本</translation>
    </message>
    <message>
        <source>no version in the file or its path</source>
        <translation>文件内容或路径中没有版本</translation>
    </message>
    <message>
        <source>Engine version (from: %1)</source>
        <translation>引擎版本（来自：%1）</translation>
    </message>
    <message>
        <source>run</source>
        <translation>run</translation>
    </message>
    <message>
        <source>version</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>No input loaded yet. Drop eval results (lm-eval samples, MMLU-Pro outputs, HELM runs, CSV/JSONL) and traces (vLLM/SGLang bench, AIPerf, LLMPerf, OTLP, aibrix CSV) here, or use File &gt; Open files… (Ctrl+O).</source>
        <translation>尚未加载输入。将 eval 结果（lm-eval samples、MMLU-Pro 输出、HELM run、CSV/JSONL）与 trace（vLLM/SGLang bench、AIPerf、LLMPerf、OTLP、aibrix CSV）拖放到此处，或使用“文件 &gt; 打开文件…”（Ctrl+O）。</translation>
    </message>
    <message>
        <source>ignored</source>
        <translation>已忽略</translation>
    </message>
    <message>
        <source>ignored: %1</source>
        <translation>已忽略：%1</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message numerus="yes">
        <source>ok, %n skipped</source>
        <translation>
            <numerusform>成功，跳过 %n 行</numerusform>
        </translation>
    </message>
    <message>
        <source>ok</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>skipped: %1</source>
        <translation>已跳过：%1</translation>
    </message>
    <message>
        <source>columns: %1</source>
        <translation>列：%1</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Trace Explorer</source>
        <translation>Trace Explorer</translation>
    </message>
    <message>
        <source>This panel could not start: %1</source>
        <translation>此面板无法启动：%1</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stop the running jobs: loading, analyses, what-if and replay</source>
        <translation>停止正在运行的任务：加载、分析、反事实推演（what-if）与回放</translation>
    </message>
    <message>
        <source>Files loaded into this session; the Inputs panel (Alt+2) says why a file could not be read</source>
        <translation>已加载到本会话的文件；输入文件面板（Alt+2）说明文件无法读取的原因</translation>
    </message>
    <message>
        <source>%1 loaded</source>
        <translation>已加载 %1</translation>
    </message>
    <message>
        <source>%1 could not be read</source>
        <translation>%1 个无法读取</translation>
    </message>
    <message>
        <source>%1 ignored</source>
        <translation>%1 个已忽略</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Open files…</source>
        <translation>打开文件(&amp;O)…</translation>
    </message>
    <message>
        <source>Open &amp;folder…</source>
        <translation>打开文件夹(&amp;F)…</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>Load &amp;demo workload</source>
        <translation>加载演示负载(&amp;D)</translation>
    </message>
    <message>
        <source>Load the simulated demo (two engine versions, Chinese cluster names)</source>
        <translation>加载模拟演示（两个引擎版本，中文 cluster 名）</translation>
    </message>
    <message>
        <source>Connect to &amp;warehouse…</source>
        <translation>连接数据仓库(&amp;W)…</translation>
    </message>
    <message>
        <source>Take the requests from a Spark Connect server (Spark, Databricks, EMR) or a local one; the eval cases stay here</source>
        <translation>从 Spark Connect 服务器（Spark、Databricks、EMR）或本地服务器获取请求；eval case 保留在本机</translation>
    </message>
    <message>
        <source>Open &amp;Session…</source>
        <translation>打开会话(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Save Session As…</source>
        <translation>会话另存为(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Export Report…</source>
        <translation>导出报告(&amp;E)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Copy</source>
        <translation>复制(&amp;C)</translation>
    </message>
    <message>
        <source>C&amp;lear selection</source>
        <translation>清除选择(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Back</source>
        <translation>后退(&amp;B)</translation>
    </message>
    <message>
        <source>&amp;Forward</source>
        <translation>前进(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Re-run analyses</source>
        <translation>重新运行分析(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Go to panel</source>
        <translation>转到面板(&amp;G)</translation>
    </message>
    <message>
        <source>&amp;Reset layout</source>
        <translation>重置布局(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About Trace Explorer</source>
        <translation>关于 Trace Explorer(&amp;A)</translation>
    </message>
    <message>
        <source>The language changes to %1 at the next start.</source>
        <translation>下次启动时语言将切换为%1。</translation>
    </message>
    <message>
        <source>Write the report bundle (PNG, HTML, PDF, Markdown, JSON)</source>
        <translation>写出报告包（PNG、HTML、PDF、Markdown、JSON）</translation>
    </message>
    <message>
        <source>Open eval results and traces</source>
        <translation>打开 eval 结果与 trace</translation>
    </message>
    <message>
        <source>Supported files (*.json *.jsonl *.csv *.parquet *.txt *.log);;All files (*)</source>
        <translation>支持的文件 (*.json *.jsonl *.csv *.parquet *.txt *.log);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Open a folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <source>Open session</source>
        <translation>打开会话</translation>
    </message>
    <message>
        <source>Trace Explorer session (*.duckdb)</source>
        <translation>Trace Explorer 会话 (*.duckdb)</translation>
    </message>
    <message>
        <source>Save session</source>
        <translation>保存会话</translation>
    </message>
    <message>
        <source>Export report to folder</source>
        <translation>将报告导出到文件夹</translation>
    </message>
    <message>
        <source>Report written to %1 (%2 files)</source>
        <translation>报告已写入 %1（%2 个文件）</translation>
    </message>
    <message>
        <source>Export failed</source>
        <translation>导出失败</translation>
    </message>
    <message>
        <source>Writing report</source>
        <translation>正在写出报告</translation>
    </message>
    <message>
        <source>About Trace Explorer</source>
        <translation>关于 Trace Explorer</translation>
    </message>
    <message>
        <source>Applies at the next start</source>
        <translation>下次启动时生效</translation>
    </message>
</context>
<context>
    <name>Panel</name>
    <message>
        <source>Nothing loaded yet.
Drop eval and trace files or folders on the window, or use File &gt; Open files… (Ctrl+O).</source>
        <translation>尚未加载任何内容。
将 eval 与 trace 文件或文件夹拖放到窗口上，或使用“文件 &gt; 打开文件…”（Ctrl+O）。</translation>
    </message>
    <message>
        <source>Copy as image</source>
        <translation>复制为图片</translation>
    </message>
    <message>
        <source>Save image…</source>
        <translation>保存图片…</translation>
    </message>
    <message>
        <source>the selection</source>
        <translation>当前选择</translation>
    </message>
    <message>
        <source>Analysing…</source>
        <translation>正在分析…</translation>
    </message>
    <message>
        <source>Nothing to show yet.</source>
        <translation>暂无可显示的内容。</translation>
    </message>
    <message>
        <source>Could not draw this panel: %1</source>
        <translation>无法绘制此面板：%1</translation>
    </message>
    <message>
        <source>Save image</source>
        <translation>保存图片</translation>
    </message>
    <message>
        <source>PNG image (*.png)</source>
        <translation>PNG 图片 (*.png)</translation>
    </message>
</context>
<context>
    <name>ReplayPanel</name>
    <message>
        <source>Run replays the chosen trace under the settings above and compares it with the observed run; Sweep capacity charts the prefix-cache hit rate and the preemptions against the KV-cache capacity; Predict badcases says how many of the cohort&apos;s badcases would remain.</source>
        <translation>“运行”在上方设置下回放所选 trace，并与实测 run 对比；“扫描容量”绘出 prefix cache 命中率和抢占次数随 KV cache 容量的变化；“预测 badcase”给出 cohort 的 badcase 还会剩下多少。</translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message>
        <source>infinite</source>
        <translation>无限</translation>
    </message>
    <message>
        <source> blocks</source>
        <translation> 块</translation>
    </message>
    <message>
        <source>(GB)</source>
        <translation>(GB)</translation>
    </message>
    <message>
        <source> B/token</source>
        <translation> B/token</translation>
    </message>
    <message>
        <source>KV bytes per token (Llama-3.1-8B fp16: 131072)</source>
        <translation>每 token KV 字节数（Llama-3.1-8B fp16：131072）</translation>
    </message>
    <message>
        <source>block </source>
        <translation>块大小 </translation>
    </message>
    <message>
        <source>max seqs </source>
        <translation>最大序列数 </translation>
    </message>
    <message>
        <source>batched tokens </source>
        <translation>批 token 数 </translation>
    </message>
    <message>
        <source>Add as run</source>
        <translation>添加为 run</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Sweep capacity</source>
        <translation>扫描容量</translation>
    </message>
    <message>
        <source>Predict badcases</source>
        <translation>预测 badcase</translation>
    </message>
    <message>
        <source>Replay the cohort&apos;s time window at the observed settings and under the settings shown, and predict with the what-if&apos;s outcome model how many of its badcases would remain</source>
        <translation>在实测设置与所示设置下回放 cohort 的时间窗口，并用 what-if 的结果模型预测其 badcase 还会剩下多少</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Trace</source>
        <translation>Trace</translation>
    </message>
    <message>
        <source>metric</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>observed</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>replay</source>
        <translation>回放</translation>
    </message>
    <message>
        <source>change %</source>
        <translation>变化 %</translation>
    </message>
    <message>
        <source>replicas </source>
        <translation>副本 </translation>
    </message>
    <message>
        <source>replicas: auto</source>
        <translation>副本：自动</translation>
    </message>
    <message>
        <source>Engine replicas behind the trace: auto takes the deployment&apos;s published count (aibrix ps-experiment: 8 pods), else fits it where the run shows it</source>
        <translation>该 trace 背后的引擎副本数：自动时采用部署公开的数量（aibrix ps-experiment：8 个 Pod），否则在运行能体现时拟合</translation>
    </message>
    <message>
        <source>routing: auto</source>
        <translation>路由：自动</translation>
    </message>
    <message>
        <source>round-robin</source>
        <translation>轮询</translation>
    </message>
    <message>
        <source>random per request</source>
        <translation>逐请求随机</translation>
    </message>
    <message>
        <source>per connection (Kubernetes Service)</source>
        <translation>按连接（Kubernetes 服务）</translation>
    </message>
    <message>
        <source>Validate</source>
        <translation>验证</translation>
    </message>
    <message>
        <source>Fit on the lowest setting of the chosen run&apos;s ladder of runs (request rates, concurrencies) and predict each higher one: the replay&apos;s out-of-sample error</source>
        <translation>在所选 run 所属阶梯（请求速率、并发数）的最低设置上拟合，并预测每个更高的设置：回放的样本外误差</translation>
    </message>
    <message>
        <source>KV-cache capacity (blocks, log)</source>
        <translation>KV cache 容量（块，对数）</translation>
    </message>
    <message>
        <source>hit rate (first queries)</source>
        <translation>命中率（首次查询）</translation>
    </message>
    <message>
        <source>preemptions</source>
        <translation>抢占次数</translation>
    </message>
    <message>
        <source>Load a trace with arrival times and prompt lengths (e.g. a Mooncake trace) to replay it under other KV-cache and scheduler settings.</source>
        <translation>加载带到达时间和 prompt 长度的 trace（如 Mooncake trace），以在其他 KV cache 与调度器设置下回放。</translation>
    </message>
    <message>
        <source>Reading the trace…</source>
        <translation>正在读取 trace…</translation>
    </message>
    <message>
        <source>Replay: reading the trace</source>
        <translation>回放：读取 trace</translation>
    </message>
    <message numerus="yes">
        <source>Replaying %n request(s)…</source>
        <translation>
            <numerusform>正在回放 %n 个请求…</numerusform>
        </translation>
    </message>
    <message>
        <source>Replay</source>
        <translation>回放</translation>
    </message>
    <message>
        <source>Not calibrated: the run records no TTFT or TPOT, so the replay&apos;s absolute latencies (TTFT, TPOT, E2E) are the engine model&apos;s defaults, not this engine&apos;s; read the changes between settings, not the values.</source>
        <translation>未校准：该 run 未记录 TTFT 或 TPOT，回放的绝对延迟（TTFT、TPOT、E2E）取自引擎模型的默认值，而非该引擎；请读取不同设置之间的变化，而非数值本身。</translation>
    </message>
    <message>
        <source>Not validated: no prediction of this run at other settings was checked</source>
        <translation>未验证：没有检验过该 run 在其他设置下的预测</translation>
    </message>
    <message>
        <source>not calibrated: the run records no TTFT or TPOT</source>
        <translation>未校准：该 run 没有记录 TTFT 或 TPOT</translation>
    </message>
    <message>
        <source>Calibrated once for %1, at the settings it recorded, on its whole trace (%2 requests): every scenario of this run shows this verdict. Predict badcases calibrates on the cohort&apos;s time window instead.</source>
        <translation>已为 %1 校准一次：按其记录的设置、在完整 trace（%2 个请求）上校准；该 run 的每个场景都显示这一结论。「预测 badcase」则在 cohort 的时间窗上校准。</translation>
    </message>
    <message>
        <source>%1: %2 requests, %3 preemptions, %4 blocks evicted.</source>
        <translation>%1：%2 个请求，%3 次抢占，逐出 %4 个块。</translation>
    </message>
    <message>
        <source>%1 request(s) dropped: %2</source>
        <translation>丢弃了 %1 个请求：%2</translation>
    </message>
    <message>
        <source>Error that applies to these figures: %1</source>
        <translation>这些数值适用的误差：%1</translation>
    </message>
    <message>
        <source>%1 of %2 requests replayed</source>
        <translation>%2 个请求中回放了 %1 个</translation>
    </message>
    <message>
        <source>Replay: adding the run</source>
        <translation>回放：添加 run</translation>
    </message>
    <message>
        <source>Not calibrated: the engine model&apos;s default step time</source>
        <translation>未校准：引擎模型的默认步长时间</translation>
    </message>
    <message>
        <source>No cohort to predict for.</source>
        <translation>没有可预测的 cohort。</translation>
    </message>
    <message>
        <source>Replay: badcases</source>
        <translation>回放：badcase</translation>
    </message>
    <message>
        <source>Reading the cohort…</source>
        <translation>正在读取 cohort…</translation>
    </message>
    <message>
        <source>Replay: reading the cohort</source>
        <translation>回放：读取 cohort</translation>
    </message>
    <message>
        <source>Badcases: %1 observed, %2 predicted under %3 (95% interval %4 to %5), %6 cases of %7 replayed.</source>
        <translation>Badcase：实测 %1 个，在 %3 下预测 %2 个（95% 区间 %4 至 %5），%7 个 case 中回放了 %6 个。</translation>
    </message>
    <message>
        <source>Predict badcases replays the cohort&apos;s window of %1 (%2 s to %3 s, %4 requests) and calibrates on it; Run replays the whole trace. Preemptions and calibration errors of the two differ as their load differs.</source>
        <translation>「预测 badcase」回放 %1 中 cohort 的时间窗（%2 s 至 %3 s，%4 个请求）并在其上校准；「运行」回放完整 trace。两者负载不同，因此抢占次数与校准误差也不同。</translation>
    </message>
    <message>
        <source>Here: %1 preemptions over the whole trace, %2 in the window.</source>
        <translation>此处：完整 trace 共 %1 次抢占，时间窗内 %2 次。</translation>
    </message>
    <message>
        <source>Replay: settings</source>
        <translation>回放：设置</translation>
    </message>
    <message>
        <source>No badcase prediction: %1</source>
        <translation>无 badcase 预测：%1</translation>
    </message>
    <message>
        <source>badcases (observed → predicted)</source>
        <translation>badcase（实测 → 预测）</translation>
    </message>
    <message>
        <source>TTFT mean, calibration</source>
        <translation>TTFT 均值，校准</translation>
    </message>
    <message>
        <source>TPOT mean, calibration</source>
        <translation>TPOT 均值，校准</translation>
    </message>
    <message>
        <source>hit rate: observed settings → scenario</source>
        <translation>命中率：实测设置 → 情景</translation>
    </message>
    <message>
        <source>preemptions: observed settings → scenario</source>
        <translation>抢占次数：实测设置 → 情景</translation>
    </message>
    <message>
        <source>Error that applies to the scenario: %1</source>
        <translation>该场景适用的误差：%1</translation>
    </message>
    <message>
        <source>Partial: %1</source>
        <translation>不完整：%1</translation>
    </message>
    <message>
        <source>hit rate</source>
        <translation>命中率</translation>
    </message>
    <message>
        <source>Capacity sweep of %1: %2</source>
        <translation>%1 的容量扫描：%2</translation>
    </message>
    <message>
        <source>the first-query hit rate %1 as the capacity grows%2</source>
        <translation>随容量增大，首次查询命中率%1%2</translation>
    </message>
    <message>
        <source>Capacity sweep of %1 (%2 requests, %3): %4; preemptions %5 → %6.</source>
        <translation>%1 的容量扫描（%2 个请求，%3）：%4；抢占次数 %5 → %6。</translation>
    </message>
    <message>
        <source>Validating the replay on the run&apos;s ladder…</source>
        <translation>正在该 run 的阶梯上验证回放…</translation>
    </message>
    <message>
        <source>Replay: validating</source>
        <translation>回放：验证中</translation>
    </message>
    <message>
        <source>Not validated: %1</source>
        <translation>未验证：%1</translation>
    </message>
    <message>
        <source>Not identified: %1</source>
        <translation>无法识别：%1</translation>
    </message>
    <message>
        <source>never falls</source>
        <translation>从不下降</translation>
    </message>
    <message>
        <source>FALLS somewhere</source>
        <translation>在某处下降</translation>
    </message>
    <message numerus="yes">
        <source>Sweeping %n capacities…</source>
        <translation>
            <numerusform>正在扫描 %n 个容量…</numerusform>
        </translation>
    </message>
    <message>
        <source>the first %1 of %2</source>
        <translation>共 %2 个中的前 %1 个</translation>
    </message>
    <message>
        <source>Replay sweep</source>
        <translation>回放扫描</translation>
    </message>
    <message>
        <source>prefix-cache hit rate</source>
        <translation>前缀缓存命中率</translation>
    </message>
    <message>
        <source>prefix-cache hit rate %1 → %2; </source>
        <translation>前缀缓存命中率 %1 → %2；</translation>
    </message>
    <message>
        <source>Sweep from %3 to %4 blocks: </source>
        <translation>从 %3 块扫描到 %4 块：</translation>
    </message>
    <message>
        <source>preemptions %5 → %6; %7 request(s) too large for the smallest cache.</source>
        <translation>抢占次数 %5 → %6；%7 个请求对最小缓存来说过大。</translation>
    </message>
</context>
<context>
    <name>RunsPanel</name>
    <message>
        <source>Run</source>
        <translation>Run</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>引擎</translation>
    </message>
    <message>
        <source>Version</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>Completed</source>
        <translation>完成数</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败数</translation>
    </message>
    <message>
        <source>Flags</source>
        <translation>标记</translation>
    </message>
    <message>
        <source>Mean TTFT</source>
        <translation>TTFT 均值</translation>
    </message>
    <message>
        <source>Median TTFT</source>
        <translation>TTFT 中位数</translation>
    </message>
    <message>
        <source>Mean TPOT</source>
        <translation>TPOT 均值</translation>
    </message>
    <message>
        <source>P99 TTFT</source>
        <translation>P99 TTFT</translation>
    </message>
    <message>
        <source>Mean ITL</source>
        <translation>ITL 均值</translation>
    </message>
    <message>
        <source>Mean E2E</source>
        <translation>E2E 均值</translation>
    </message>
    <message>
        <source>Output tok/s</source>
        <translation>输出 tok/s</translation>
    </message>
    <message>
        <source>Workload</source>
        <translation>负载</translation>
    </message>
    <message>
        <source>Version from</source>
        <translation>版本来源</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Published</source>
        <translation>发布值</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>数值</translation>
    </message>
    <message>
        <source>Recomputed from the requests</source>
        <translation>由请求重算</translation>
    </message>
    <message>
        <source>Export table…</source>
        <translation>导出表格…</translation>
    </message>
    <message>
        <source>Write every run with its published and recomputed statistics to CSV or Parquet</source>
        <translation>将每个 run 及其发布值与重算值写入 CSV 或 Parquet</translation>
    </message>
    <message>
        <source>No run loaded yet: drop benchmark results (vLLM / SGLang result JSON, printed result blocks, sweep folders) or traces here.</source>
        <translation>尚未加载 run：将 benchmark 结果（vLLM / SGLang 结果 JSON、打印的结果块、sweep 文件夹）或 trace 拖放到此处。</translation>
    </message>
    <message>
        <source>Export the runs table</source>
        <translation>导出 Run 表格</translation>
    </message>
    <message>
        <source>CSV (*.csv);;Parquet (*.parquet)</source>
        <translation>CSV (*.csv);;Parquet (*.parquet)</translation>
    </message>
    <message>
        <source>Double-click a run&apos;s name, engine, version or workload to edit it (kept with the session; runs given one workload name are compared with each other).</source>
        <translation>双击 run 的名称、引擎、版本或负载即可编辑（随会话保存；负载名相同的 run 相互对比）。</translation>
    </message>
    <message numerus="yes">
        <source>Run level (published aggregates, not tested): %n regression(s)</source>
        <translation>
            <numerusform>Run 级（发布的汇总指标，未做检验）：%n 项退化</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Session</name>
    <message>
        <source>Binding cases to the warehouse requests</source>
        <translation>正在将 case 关联到数据仓库中的请求</translation>
    </message>
    <message>
        <source>Loading the demo workload</source>
        <translation>正在加载演示负载</translation>
    </message>
    <message>
        <source>Opening session</source>
        <translation>正在打开会话</translation>
    </message>
    <message>
        <source>Starting a local Spark Connect server</source>
        <translation>正在启动本地 Spark Connect 服务器</translation>
    </message>
    <message>
        <source>Connecting to the warehouse</source>
        <translation>正在连接数据仓库</translation>
    </message>
    <message>
        <source>Reading the session</source>
        <translation>正在读取会话</translation>
    </message>
    <message>
        <source>Saving session</source>
        <translation>正在保存会话</translation>
    </message>
    <message>
        <source>Setting engine versions</source>
        <translation>正在设置引擎版本</translation>
    </message>
    <message>
        <source>Listing clusters</source>
        <translation>正在列出 cluster</translation>
    </message>
    <message>
        <source>Analysing cohort</source>
        <translation>正在分析 cohort</translation>
    </message>
    <message>
        <source>Renaming cluster</source>
        <translation>正在重命名 cluster</translation>
    </message>
    <message>
        <source>Selecting</source>
        <translation>正在选择</translation>
    </message>
    <message>
        <source>This case is not bound to a trace request: no timeline to open.</source>
        <translation>该 case 未关联到 trace 中的请求：没有可打开的时间线。</translation>
    </message>
    <message>
        <source>Binding cases to requests</source>
        <translation>正在将 case 关联到请求</translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation>错误：%1</translation>
    </message>
    <message>
        <source>Listing cases</source>
        <translation>正在列出 case</translation>
    </message>
    <message>
        <source>Distributions: %1</source>
        <translation>关键指标分布：%1</translation>
    </message>
    <message>
        <source>Loading %1</source>
        <translation>正在加载 %1</translation>
    </message>
    <message>
        <source>Updating run %1</source>
        <translation>正在更新 run %1</translation>
    </message>
    <message>
        <source>Loading cancelled; the files loaded before stay.</source>
        <translation>加载已取消；之前加载的文件保留。</translation>
    </message>
    <message>
        <source>%1: %2 picked</source>
        <translation>%1：选取了 %2</translation>
    </message>
    <message>
        <source>Session saved to %1</source>
        <translation>会话已保存到 %1</translation>
    </message>
    <message>
        <source>%1 could not be read: %2</source>
        <translation>%1无法读取：%2</translation>
    </message>
    <message>
        <source>Loading cancelled: %1 was rolled back; the files loaded before it stay.</source>
        <translation>加载已取消：%1 已回滚；在它之前加载的文件保留。</translation>
    </message>
    <message>
        <source>Demo: %1</source>
        <translation>演示：%1</translation>
    </message>
    <message>
        <source>Connected to %1: %2 requests in %3</source>
        <translation>已连接 %1：%3 中有 %2 个请求</translation>
    </message>
    <message>
        <source>Decision tree: %1</source>
        <translation>决策树：%1</translation>
    </message>
    <message>
        <source>Heatmap: %1</source>
        <translation>热力图：%1</translation>
    </message>
</context>
<context>
    <name>SlaPanel</name>
    <message>
        <source>SLA bound on %1: a request meets the SLA when it did not error and every bound holds</source>
        <translation>%1 的 SLA 界限：请求未出错且满足所有界限时即为达标</translation>
    </message>
    <message>
        <source>SLA: violation period of %1 (%2 windows)</source>
        <translation>SLA：%1 的违约时段（%2 个窗口）</translation>
    </message>
    <message>
        <source>%1: none of its cases&apos; requests can be judged against the SLA</source>
        <translation>%1：其 case 的请求都无法按 SLA 评判</translation>
    </message>
    <message>
        <source>%1: %2 of %3 judged meet the SLA (the whole cohort: %4)</source>
        <translation>%1：参与评判的 %3 中 %2 达标（整个 cohort：%4）</translation>
    </message>
</context>
<context>
    <name>TimelinePanel</name>
    <message>
        <source>Back</source>
        <translation>返回</translation>
    </message>
    <message>
        <source>Compare with a typical control request</source>
        <translation>与典型对照请求对比</translation>
    </message>
    <message>
        <source>The control request whose TPOT is nearest the control group&apos;s median TPOT, on the same time scale</source>
        <translation>TPOT 最接近对照组 TPOT 中位数的对照请求，使用相同时间刻度</translation>
    </message>
    <message>
        <source> s</source>
        <translation> s</translation>
    </message>
    <message>
        <source>Swimlane window around the request</source>
        <translation>请求周围的泳道时间窗</translation>
    </message>
    <message>
        <source>Reset zoom</source>
        <translation>重置缩放</translation>
    </message>
    <message>
        <source>Neighbours</source>
        <translation>邻近请求</translation>
    </message>
    <message>
        <source>Hover over the timeline for exact values.</source>
        <translation>将鼠标悬停在时间线上查看精确数值。</translation>
    </message>
    <message>
        <source>Select a case bound to a request (or a request) to see its timeline.</source>
        <translation>选择一个已绑定请求的 case（或一个请求）以查看其时间线。</translation>
    </message>
    <message>
        <source>Nothing loaded yet.</source>
        <translation>尚未加载任何内容。</translation>
    </message>
    <message>
        <source>Opening request timeline</source>
        <translation>正在打开请求时间线</translation>
    </message>
    <message>
        <source>Case %1 is not bound to a trace request.</source>
        <translation>Case %1 未绑定到 trace 请求。</translation>
    </message>
    <message>
        <source>%1 neighbour in flight within ± %2 s.</source>
        <translation>± %2 s 内有 %1 个在途的相邻请求。</translation>
    </message>
    <message>
        <source>%1 neighbours in flight within ± %2 s.</source>
        <translation>± %2 s 内有 %1 个在途的相邻请求。</translation>
    </message>
</context>
<context>
    <name>TreePanel</name>
    <message>
        <source>max depth</source>
        <translation>最大深度</translation>
    </message>
    <message>
        <source>min cases per leaf</source>
        <translation>每叶最少 case 数</translation>
    </message>
    <message>
        <source>click a node to select its cases · drag to pan, Ctrl+wheel to zoom</source>
        <translation>单击节点选定其 case · 拖动平移，Ctrl+滚轮缩放</translation>
    </message>
    <message>
        <source>No decision tree: too few bound cases with engine metrics in both groups.</source>
        <translation>无决策树：两组中带引擎指标的已绑定 case 太少。</translation>
    </message>
</context>
<context>
    <name>ValidationView</name>
    <message>
        <source>fit on low, predict high</source>
        <translation>低设置拟合、预测高设置</translation>
    </message>
    <message>
        <source>leave one out</source>
        <translation>留一法</translation>
    </message>
    <message>
        <source>both</source>
        <translation>两者</translation>
    </message>
    <message>
        <source>What Validate runs: fit on the ladder&apos;s lowest setting and predict each higher one, or hold each setting out in turn and predict it from the other settings&apos; fits, or both</source>
        <translation>“验证”运行的内容：在阶梯的最低设置上拟合并预测每个更高的设置；或依次留出每个设置，用其余设置的拟合预测它；或两者都运行</translation>
    </message>
    <message>
        <source>Held-out errors, %1: not validated (%2)</source>
        <translation>留出设置的误差，%1：未验证（%2）</translation>
    </message>
    <message>
        <source>Held-out errors, %1: %2</source>
        <translation>留出设置的误差，%1：%2</translation>
    </message>
    <message>
        <source>Out-of-sample error above 25%: read the replay&apos;s absolute latencies at other settings with that error in mind.</source>
        <translation>样本外误差超过 25%：阅读回放在其他设置下的绝对延迟时请考虑这一误差。</translation>
    </message>
    <message>
        <source>%1: each of %2 settings predicted from the other settings&apos; fits; median |error| of mean TTFT %3, of mean TPOT %4.</source>
        <translation>%1：%2 个设置中的每一个都由其余设置的拟合预测；平均 TTFT 的 |误差| 中位数 %3，平均 TPOT 的 %4。</translation>
    </message>
    <message>
        <source>%1: fitted at %2 = %3, %4 higher settings predicted; median |error| of mean TTFT %5, of mean TPOT %6.</source>
        <translation>%1：在 %2 = %3 处拟合，预测了 %4 个更高的设置；平均 TTFT 的 |误差| 中位数 %5，平均 TPOT 的 %6。</translation>
    </message>
    <message>
        <source>held-out setting</source>
        <translation>留出的设置</translation>
    </message>
    <message>
        <source>observed</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>replay</source>
        <translation>回放</translation>
    </message>
    <message>
        <source>error of mean</source>
        <translation>均值误差</translation>
    </message>
    <message>
        <source>error of P90</source>
        <translation>P90 误差</translation>
    </message>
    <message>
        <source>throughput</source>
        <translation>吞吐量</translation>
    </message>
</context>
<context>
    <name>VersionsPanel</name>
    <message>
        <source>▼ regression: the change is significant and in the worse direction</source>
        <translation>▼ 退化：变化显著且方向变差</translation>
    </message>
    <message>
        <source>%1: %2 (%3)</source>
        <translation>%1：%2（%3）</translation>
    </message>
    <message>
        <source>%1 ran on %2</source>
        <translation>%1 运行于 %2</translation>
    </message>
</context>
<context>
    <name>WarehouseDialog</name>
    <message>
        <source>Connect to warehouse</source>
        <translation>连接数据仓库</translation>
    </message>
    <message>
        <source>sc://host:15002 or spark:local</source>
        <translation>sc://host:15002 或 spark:local</translation>
    </message>
    <message>
        <source>catalog.schema.requests or parquet:/path/to/requests/</source>
        <translation>catalog.schema.requests 或 parquet:/path/to/requests/</translation>
    </message>
    <message>
        <source>optional: run_id=replica,ttft_ms=ttft</source>
        <translation>可选：run_id=replica,ttft_ms=ttft</translation>
    </message>
    <message>
        <source>Spark Connect URL</source>
        <translation>Spark Connect URL</translation>
    </message>
    <message>
        <source>Requests table</source>
        <translation>请求表</translation>
    </message>
    <message>
        <source>Column mapping</source>
        <translation>列映射</translation>
    </message>
    <message>
        <source>The loaded eval cases stay here and are bound to the table&apos;s requests in the warehouse; only the cohort&apos;s rows and aggregates come back. A token in the URL (;token=…) is not saved.</source>
        <translation>已加载的 eval case 保留在本机，并在数据仓库中与表内的请求绑定；只有 cohort 的数据行与汇总结果会返回。URL 中的 token（;token=…）不会被保存。</translation>
    </message>
    <message>
        <source>Connect</source>
        <translation>连接</translation>
    </message>
</context>
<context>
    <name>WhatIfPanel</name>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Treatment: the engine metric the scenario sets</source>
        <translation>干预：情景所设定的引擎指标</translation>
    </message>
    <message>
        <source>Outcome: what the scenario predicts</source>
        <translation>结果：情景所预测的量</translation>
    </message>
    <message>
        <source>Set</source>
        <translation>设定</translation>
    </message>
    <message>
        <source>to</source>
        <translation>为</translation>
    </message>
    <message>
        <source>effect on</source>
        <translation>对其影响</translation>
    </message>
    <message>
        <source>SLA if</source>
        <translation>SLA 假如</translation>
    </message>
    <message>
        <source>changes by</source>
        <translation>变化</translation>
    </message>
    <message>
        <source>Refuter</source>
        <translation>反驳检验</translation>
    </message>
    <message>
        <source>New effect</source>
        <translation>新效应</translation>
    </message>
    <message>
        <source>Verdict</source>
        <translation>结论</translation>
    </message>
    <message>
        <source>Why</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>No case in the cohort.</source>
        <translation>cohort 中没有 case。</translation>
    </message>
    <message>
        <source>No case of the cohort is bound to a trace request with engine metrics, so there is nothing to intervene on.</source>
        <translation>cohort 中没有 case 绑定到带引擎指标的 trace 请求，因此没有可干预的对象。</translation>
    </message>
    <message>
        <source>Scenario for the %1 selected cases.</source>
        <translation>针对 %1 个选定 case 的情景。</translation>
    </message>
    <message>
        <source>Scenario for the cluster&apos;s %1 badcases (select cases elsewhere to change this).</source>
        <translation>针对该 cluster 的 %1 个 badcase 的情景（在其他视图选择 case 可更改）。</translation>
    </message>
    <message>
        <source>Estimating…</source>
        <translation>正在估计…</translation>
    </message>
    <message>
        <source>What-if</source>
        <translation>反事实推演</translation>
    </message>
    <message>
        <source>(not in this data)</source>
        <translation>（数据中没有）</translation>
    </message>
    <message>
        <source>estimating…</source>
        <translation>正在估计…</translation>
    </message>
    <message>
        <source>SLA what-if</source>
        <translation>SLA 反事实推演</translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message>
        <source>The cohort changed: the what-if reruns on its new cases.</source>
        <translation>cohort 已变化：what-if 将在新的 case 上重新运行。</translation>
    </message>
    <message>
        <source>These numbers assume:</source>
        <translation>这些数字基于以下假设：</translation>
    </message>
    <message>
        <source>Saving the causal graph</source>
        <translation>正在保存因果图</translation>
    </message>
    <message>
        <source>Reading the causal graph</source>
        <translation>正在读取因果图</translation>
    </message>
    <message>
        <source>The session&apos;s causal graph is not valid; fix it in the editor.</source>
        <translation>会话中的因果图无效；请在编辑器中修正。</translation>
    </message>
    <message>
        <source>What-if (not run yet): set %1 to %2, effect on %3</source>
        <translation>What-if（尚未运行）：将 %1 设为 %2，对 %3 的影响</translation>
    </message>
    <message>
        <source>%1 dropped</source>
        <translation>丢弃 %1 行</translation>
    </message>
    <message>
        <source>badcase (error rate)</source>
        <translation>badcase（错误率）</translation>
    </message>
    <message>
        <source>SLA met</source>
        <translation>SLA 达标</translation>
    </message>
</context>
<context>
    <name>window</name>
    <message>
        <source>Unexpected error</source>
        <translation>意外错误</translation>
    </message>
    <message>
        <source>Something went wrong; the window keeps running.

%1</source>
        <translation>出现问题；窗口仍在运行。

%1</translation>
    </message>
</context>
</TS>
