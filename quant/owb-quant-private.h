/* owb-quant-private.h: what the quantizer's files share: histograms, scale and zero-point
 * arithmetic, and weight quantization. Reached by the tests too. */
#pragma once

#include <owb/owb-quant.h>

struct _OwbQuantDataset {
  char *source;          /* the folder, or "random" */
  GPtrArray *dirs;       /* of char *: sample folders; NULL for random samples and images */
  GPtrArray *images;     /* of char *: image files (owb_quant_dataset_new_from_images) */
  OwbQuantImageOptions image_options;
  OwbSession *preprocess; /* decodes, resizes and normalises an image, made on first use */
  int64_t preprocess_dims[4];
  guint n_random;
  guint32 seed;
};

/* Natural order of paths: runs of digits compare as numbers (set_2 before set_10). */
int _owb_quant_compare_paths (gconstpointer a, gconstpointer b);
/* Sample i of an image data set: the model's one feed input. */
gboolean _owb_quant_images_load (OwbQuantDataset *dataset, guint i, const OwbModel *model, GPtrArray **names,
                                 GPtrArray **tensors, GError **error);

/* A histogram of one tensor's values over [-range, range], n_bins bins (even; half on each side of
 * 0), streamed: the range starts at the first sample's largest |x| and doubles (merging pairs of
 * bins, which is exact since the edges nest) whenever a later sample passes it. */
typedef struct {
  double *counts;
  guint n_bins;
  double range;   /* 0 until a non-zero value is seen */
  double total;   /* values counted (finite ones) */
} OwbQuantHistogram;

#define OWB_QUANT_HISTOGRAM_BINS 4096

void _owb_quant_histogram_init (OwbQuantHistogram *h, guint n_bins);
void _owb_quant_histogram_clear (OwbQuantHistogram *h);
/* absmax: the largest finite |x| of the data (the caller has it from its min/max sweep). */
void _owb_quant_histogram_add (OwbQuantHistogram *h, const float *data, gsize n, double absmax);
/* Thresholds T on |x| (clip to [-T, T]): */
double _owb_quant_histogram_percentile (const OwbQuantHistogram *h, double percentile);
/* The TensorRT method: the T whose clipped distribution, quantized to `levels` bins, is closest
 * (Kullback-Leibler) to the original one, among the thresholds that clip at most a `max_clipped`
 * share of the values (< 0: any). */
double _owb_quant_histogram_entropy (const OwbQuantHistogram *h, int levels, double max_clipped);
/* The T that minimises the expected squared error of quantizing to `levels` levels across
 * [max(min, -T), min(max, T)] (rounding error step^2/12 inside, clipping error outside). */
double _owb_quant_histogram_mse (const OwbQuantHistogram *h, double min, double max, int levels);

/* The integer range of a quantized type: UINT8 [0, 255], INT8 [-128, 127], 16-bit likewise.
 * symmetric signed types drop the lowest value ([-127, 127]) so that 0 is the middle. */
gboolean _owb_quant_type_range (OwbDataType type, gboolean symmetric, int *qmin, int *qmax);
/* Scale and zero point for [lo, hi] (widened to hold 0). Symmetric: zero point 0 (signed) or the
 * middle (unsigned) and scale max(|lo|, |hi|) / half the levels. An empty range gives scale 1. */
void _owb_quant_compute_params (double lo, double hi, OwbDataType type, gboolean symmetric, float *scale,
                                int *zero_point);

/* Quantizes a float weight: per channel along `axis` (-1: per tensor). Returns the quantized tensor
 * (of `type`) and the scale (float) and zero-point (of `type`) tensors: 1-D of the channel count, or
 * scalars per tensor. */
gboolean _owb_quant_quantize_weight (const OwbTensor *w, int axis, OwbDataType type, gboolean symmetric,
                                     OwbTensor **q, OwbTensor **scale, OwbTensor **zero_point, GError **error);
/* Quantizes a float bias to int32 at scale input_scale * weight_scale[c] (c along the bias' only
 * axis; weight_scale has 1 or bias-length entries), zero point 0. */
gboolean _owb_quant_quantize_bias (const OwbTensor *bias, float input_scale, const OwbTensor *weight_scale,
                                   OwbTensor **q, OwbTensor **scale, OwbTensor **zero_point, GError **error);

/* The default-domain opset the QDQ model needs: 21 for 16-bit QuantizeLinear (options or
 * overrides), 13 for per-channel DequantizeLinear, 10 otherwise. */
int64_t _owb_quant_required_opset (const OwbQuantOptions *options);

/* A scalar tensor of a quantized type holding v. */
OwbTensor *_owb_quant_scalar (OwbDataType type, int v);

/* Whether a value type is a float32 tensor. */
gboolean _owb_quant_is_float_tensor (const OwbValueType *type);

/* JSON numbers in the quantizer's reports: 10 significant digits keep a cosine of 0.9999999 from
 * reading 1. */
#define _owb_quant_json_member_number(out, key, v) owb_json_append_member_number ((out), (key), (v), 10)

/* The providers to prepare and fold constants with: the options', else the CPU provider (a new
 * reference either way). */
GPtrArray *_owb_quant_dup_providers (const OwbQuantOptions *options, GError **error);
/* A CPU session over `model` as it is (level disabled: the file's tensor names). */
OwbSession *_owb_quant_session_new (OwbModel *model, int n_threads, GError **error);
/* Runs the quantizer's passes over a copy of `model` (standard ops only) and validates the result. */
OwbModel *_owb_quant_run_passes (OwbModel *model, const OwbPass *const *passes, guint n_passes,
                                 const OwbQuantOptions *options, OwbOptimizeReport **report, GError **error);
