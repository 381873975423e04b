/* owb-layout-position.c: being written. */
