/* owb-window.c: being written. */
