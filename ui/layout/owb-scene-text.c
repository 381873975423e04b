/* owb-scene-text.c: being written. */
