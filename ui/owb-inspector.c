/* owb-inspector.c: being written. */
