/* owb-layout-order.c: being written. */
