"""Qt-free state of the panels that make decisions (glue's viewer state classes are the model).

Each class holds one panel's choices, validates them and derives its defaults, ranges and the
work to run; the panel (widgets/) only shows that state, forwards the user's edits to it and
submits the work it names to a worker. Nothing here touches Qt or the store on the caller's
thread: work is returned as frozen query objects whose run(store) the worker calls.

    timeline.TimelineState   which request is shown, history (Back), following the cohort
    whatif.WhatIfState       treatment / outcome choices, scenario value range and default,
                             the cases the scenario applies to, what a run / report uses
    replay.ReplayState       the run to replay and the engine settings, validated
"""
