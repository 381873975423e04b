/* owb-optimize-page.c: being written. */
