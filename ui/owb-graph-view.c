/* owb-graph-view.c: being written. */
