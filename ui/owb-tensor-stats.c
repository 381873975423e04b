/* owb-tensor-stats.c: being written. */
