/* owb-application.c: being written. */
