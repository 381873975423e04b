/* owb-window-actions.c: being written. */
