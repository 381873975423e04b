/* owb-graph-pane.c: being written. */
