/* owb-document.c: being written. */
