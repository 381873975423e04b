/* owb-graph-scene.c: being written. */
