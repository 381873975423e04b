/* owb-histogram.c: being written. */
