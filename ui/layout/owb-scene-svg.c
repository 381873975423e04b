/* owb-scene-svg.c: being written. */
