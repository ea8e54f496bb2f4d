"""Painters: functions that draw one result dict (../shared/DESIGN.md report JSON) onto a
pyqtgraph item, a QGraphicsScene or into HTML. The app's panels and the reports (issue 7) call
the same functions, so a report image and the app's panel are the same picture.

    header.header_items(cohort, meta, selection) -> list[(title, value, tooltip)]
    header.header_html(cohort, meta) -> str
    comparison.comparison_rows(rows) -> list[list[str]]; to_markdown / to_tsv / comparison_html
    distributions.paint_distribution(plot, bad, control, metric, mode, stats, highlight)
    tree.paint_tree(scene, tree) -> {node_id: QGraphicsItem}
    heatmap.paint_heatmap(plot, heatmap) -> ImageItem (+ colour bar)
    versions.versions_table(versions) -> (headers, rows, flags); versions_html
    sla.paint_sla(plot, sla); sla_rows(sla)
    conclusion.conclusion_html(conclusion) -> str
"""
