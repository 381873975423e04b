/* owb-layout.c: being written. */
