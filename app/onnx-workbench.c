/* onnx-workbench.c: being written. */
int main (void);
int main (void) { return 1; }
