/* owb-run-page.c: being written. */
