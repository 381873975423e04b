/* owb-welcome-page.c: being written. */
