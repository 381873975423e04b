/* owb-op-host-data.c: which op inputs carry shapes, indices, axes or counts rather than data.
 * Their values decide output shapes and loop bounds, so whoever runs the op reads them on the host:
 * a device provider gets them in host memory (the session never moves them to the device), and
 * shape inference at run time can read them. One table for every provider, like the kinds in
 * owb-infer-helpers.c. */
#include <owb/owb-op.h>

#include <string.h>

typedef struct {
  const char *op_type;
  guint32 inputs; /* bit i: input i */
} HostInputs;

#define IN(i) (1u << (i))

/* Standard (ai.onnx) ops, by name. */
static const HostInputs host_inputs[] = {
  { "AffineGrid", IN (1) },
  { "BlackmanWindow", IN (0) },
  { "CenterCropPad", IN (1) },
  { "Col2Im", IN (1) | IN (2) },
  { "ConstantOfShape", IN (0) },
  { "CumSum", IN (1) },
  { "DFT", IN (1) | IN (2) },
  { "Dropout", IN (1) | IN (2) },
  { "Expand", IN (1) },
  { "HammingWindow", IN (0) },
  { "HannWindow", IN (0) },
  { "If", IN (0) },
  { "Loop", IN (0) | IN (1) },
  { "MaxUnpool", IN (2) },
  { "MelWeightMatrix", IN (0) | IN (1) | IN (2) | IN (3) | IN (4) },
  { "NonMaxSuppression", IN (2) | IN (3) | IN (4) },
  { "OneHot", IN (1) },
  { "Pad", IN (1) | IN (2) | IN (3) },
  { "Range", IN (0) | IN (1) | IN (2) },
  { "ReduceL1", IN (1) },
  { "ReduceL2", IN (1) },
  { "ReduceLogSum", IN (1) },
  { "ReduceLogSumExp", IN (1) },
  { "ReduceMax", IN (1) },
  { "ReduceMean", IN (1) },
  { "ReduceMin", IN (1) },
  { "ReduceProd", IN (1) },
  { "ReduceSum", IN (1) },
  { "ReduceSumSquare", IN (1) },
  { "Reshape", IN (1) },
  { "Resize", IN (1) | IN (2) | IN (3) },
  { "STFT", IN (1) | IN (3) },
  { "Slice", IN (1) | IN (2) | IN (3) | IN (4) },
  { "Split", IN (1) },
  { "Squeeze", IN (1) },
  { "Tile", IN (1) },
  { "TopK", IN (1) },
  { "Trilu", IN (1) },
  { "Unsqueeze", IN (1) },
  { "Upsample", IN (1) },
};

gboolean
owb_op_input_is_host_data (const char *domain, const char *op_type, int input)
{
  if (input < 0 || input >= 32 || op_type == NULL)
    return FALSE;
  if (domain != NULL && domain[0] != '\0' && strcmp (domain, "ai.onnx") != 0)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (host_inputs); i++)
    if (strcmp (host_inputs[i].op_type, op_type) == 0)
      return (host_inputs[i].inputs & IN (input)) != 0;
  return FALSE;
}
