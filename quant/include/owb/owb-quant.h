/* owb-quant.h: libowb-quant, INT8 quantization of ONNX models: calibration data sets, streamed
 * calibration statistics, QDQ insertion (static) and dynamic quantization, and the accuracy
 * comparison of two models tensor by tensor. GTK-free; used by `owb quantize` / `owb compare` and
 * the Quantize page. */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb.h>
#include <owb/owb-pass.h>

G_BEGIN_DECLS

/* Progress of long work: `done` of `total` samples. Called on the working thread. */
typedef void (*OwbQuantProgress) (guint done, guint total, gpointer user_data);

/* ---- Data sets ------------------------------------------------------------------------------ */

/* Samples to feed a model: the subfolders of a folder that hold input_K.pb or input_K.npy files
 * (the ONNX test-data layout: test_data_set_N/ works as is), loaded one at a time; or seeded random
 * values (owb_tensor_new_random). */
typedef struct _OwbQuantDataset OwbQuantDataset;

/* Subfolders in natural order (test_data_set_2 before test_data_set_10). OWB_ERROR_IO when `dir`
 * is not a folder or holds no sample. A folder that is itself one sample (input_0.pb in it) is a
 * data set of one. */
OWB_API OwbQuantDataset *owb_quant_dataset_new_from_dir (const char *dir, GError **error);
/* n_samples of random values for the model's feed inputs (free dims are 1). */
OWB_API OwbQuantDataset *owb_quant_dataset_new_random (guint n_samples, guint32 seed);
/* How image files become a model's input: decoded (PNG, JPEG, BMP, PNM: the engine's ImageDecoder),
 * resized (linear, antialiased), scaled to [0, 1], then (x - mean) / std per channel. */
typedef struct {
  int width, height;   /* 0: the model input's own (its static dims) */
  int layout;          /* 0: from the model input (the axis of size 3 or 1), 1: NCHW, 2: NHWC */
  gboolean bgr;        /* channel order BGR (OpenCV-trained models) instead of RGB */
  float mean[3];       /* per channel, after scaling to [0, 1] (0) */
  float std[3];        /* (1) */
} OwbQuantImageOptions;

OWB_API void owb_quant_image_options_init (OwbQuantImageOptions *options);
/* Every .png, .jpg, .jpeg, .bmp, .ppm, .pgm file of `dir` (natural order) is one sample, for a
 * model with one image input: [N, C, H, W] or [N, H, W, C] with C 3 or 1 (grayscale). */
OWB_API OwbQuantDataset *owb_quant_dataset_new_from_images (const char *dir, const OwbQuantImageOptions *options,
                                                            GError **error);
/* Whether a file name (any case) has one of the extensions owb_quant_dataset_new_from_images reads
 * (.pnm too): what the Quantize page counts before it offers a folder as images. */
OWB_API gboolean owb_quant_is_image_file_name (const char *name);
OWB_API void owb_quant_dataset_free (OwbQuantDataset *dataset);
OWB_API guint owb_quant_dataset_get_n_samples (const OwbQuantDataset *dataset);
/* Keeps only the first n samples (n larger than the count changes nothing). */
OWB_API void owb_quant_dataset_truncate (OwbQuantDataset *dataset, guint n);
/* "random" for a random set; the folder otherwise (borrowed). */
OWB_API const char *owb_quant_dataset_get_source (const OwbQuantDataset *dataset);
/* The folder of sample i, or NULL for random samples (borrowed). */
OWB_API const char *owb_quant_dataset_get_sample_dir (const OwbQuantDataset *dataset, guint i);
/* Sample i for `model`'s feed inputs, in their order: *names (of char *, borrowed from the model)
 * and *tensors (of OwbTensor *, owned). A .pb file's tensor name picks its input when it names one;
 * otherwise input_K feeds the K-th input. Errors name the file and the input. */
OWB_API gboolean owb_quant_dataset_load_sample (OwbQuantDataset *dataset, guint i, const OwbModel *model, GPtrArray **names,
                                                GPtrArray **tensors, GError **error);
/* Reads a labels file: one line per sample, in the data set's order (blank lines and lines starting
 * with '#' skipped). Returns the lines (of char *), or NULL with an error. */
OWB_API GPtrArray *owb_quant_read_labels (const char *path, GError **error);

/* ---- Calibration ---------------------------------------------------------------------------- */

typedef enum {
  OWB_QUANT_MINMAX = 0,
  OWB_QUANT_ENTROPY,
  OWB_QUANT_PERCENTILE,
  OWB_QUANT_MSE
} OwbQuantMethod;

OWB_API const char *owb_quant_method_to_string (OwbQuantMethod method);
OWB_API gboolean owb_quant_method_from_string (const char *name, OwbQuantMethod *method);

/* Statistics of every calibrated tensor: min, max (and their moving averages over samples) and a
 * histogram streamed sample by sample (never the tensors), so memory does not grow with the number
 * of samples. One calibration serves every method: the range is computed on demand. */
typedef struct _OwbQuantCalibration OwbQuantCalibration;

typedef struct {
  /* Tensors to collect (NULL-terminated; NULL: every float tensor the graph computes or is fed). */
  const char *const *tensors;
  int n_threads;              /* 0: the number of cores */
  double averaging_constant;  /* the moving averages' weight of a new sample (0: 0.01) */
  GCancellable *cancellable;
  OwbQuantProgress progress;
  gpointer user_data;
} OwbQuantCalibrateOptions;

OWB_API void owb_quant_calibrate_options_init (OwbQuantCalibrateOptions *options);

/* Runs `model` (as it is: level disabled, so tensor names are the file's) over every sample. */
OWB_API OwbQuantCalibration *owb_quant_calibrate (OwbModel *model, OwbQuantDataset *dataset,
                                                  const OwbQuantCalibrateOptions *options, GError **error);
OWB_API void owb_quant_calibration_free (OwbQuantCalibration *calibration);
OWB_API guint owb_quant_calibration_get_n_samples (const OwbQuantCalibration *calibration);
OWB_API guint owb_quant_calibration_get_n_tensors (const OwbQuantCalibration *calibration);
/* Bytes the statistics hold (histograms included). */
OWB_API gsize owb_quant_calibration_get_bytes (const OwbQuantCalibration *calibration);
OWB_API gboolean owb_quant_calibration_has_tensor (const OwbQuantCalibration *calibration, const char *name);
/* The tensor's observed min and max. */
OWB_API gboolean owb_quant_calibration_get_minmax (const OwbQuantCalibration *calibration, const char *name, float *min,
                                                   float *max);

typedef struct {
  OwbQuantMethod method;
  gboolean moving_average;     /* minmax: the moving averages of the per-sample min and max instead of
                                * the extremes */
  double percentile;           /* percentile: of |x|, in percent (99.999) */
  int n_quantized_levels;      /* entropy and mse: levels of the target type across the range (256) */
  double entropy_max_clipped;  /* entropy: the largest share of values a threshold may clip (0.0001:
                                * outliers, one value in 10,000; < 0: any, as TensorRT's method has it) */
} OwbQuantRangeOptions;

OWB_API void owb_quant_range_options_init (OwbQuantRangeOptions *options);

/* The clipping range [lo, hi] the method chooses for the tensor; always lo <= 0 <= hi. FALSE with
 * an error when the tensor was not calibrated. */
OWB_API gboolean owb_quant_calibration_compute_range (const OwbQuantCalibration *calibration, const char *name,
                                                      const OwbQuantRangeOptions *options, float *lo, float *hi,
                                                      GError **error);

/* ---- Quantization --------------------------------------------------------------------------- */

/* A tensor's quantization, forced by the user (mixed precision): its type (UINT8, INT8, UINT16,
 * INT16; UNDEFINED: keep it float) and optionally its range. */
typedef struct {
  OwbDataType type;
  gboolean has_range;
  float lo, hi;
} OwbQuantOverride;

/* Reads overrides from a JSON file: {"tensor": {"type": "u16", "range": [lo, hi]}, ...}; type is u8,
 * s8, u16, s16 or "float" (kept in float), default_type where absent; range optional. Returns name
 * -> OwbQuantOverride * (owned), or NULL with an error giving the line. */
OWB_API GHashTable *owb_quant_overrides_load (const char *path, OwbDataType default_type, GError **error);

typedef struct {
  OwbQuantRangeOptions range;
  OwbDataType activation_type;    /* UINT8 (default), INT8, UINT16, INT16 */
  OwbDataType weight_type;        /* INT8 (default) or UINT8 */
  gboolean per_channel;           /* weights per output channel (default TRUE) */
  gboolean symmetric_activations; /* default FALSE */
  gboolean symmetric_weights;     /* default TRUE */
  const char *const *exclude_nodes; /* node names kept in float (NULL-terminated; may be NULL) */
  const char *const *exclude_ops;   /* op types kept in float */
  GHashTable *overrides;          /* tensor name -> OwbQuantOverride * (borrowed); may be NULL */
  GPtrArray *providers;           /* for pre-processing (constant folding); NULL: the CPU provider */
} OwbQuantOptions;

OWB_API void owb_quant_options_init (OwbQuantOptions *options);

/* Pre-processing, done by the quantizer before calibration and quantization so that tensors keep
 * their names: converts the default domain to opset 13 when it is older (per-channel
 * DequantizeLinear needs it), infers shapes, folds constants and BatchNormalization into the Conv
 * before it (standard ops only). Returns a new model. */
OWB_API OwbModel *owb_quant_prepare (OwbModel *model, const OwbQuantOptions *options, OwbOptimizeReport **report,
                                     GError **error);

/* The float activations static quantization of `model` (prepared) will quantize with these
 * options: what calibration must collect. NULL-terminated; free with g_strfreev. */
OWB_API char **owb_quant_plan_tensors (OwbModel *model, const OwbQuantOptions *options, GError **error);

/* Static quantization in the QDQ format (standard QuantizeLinear / DequantizeLinear only, so ONNX
 * Runtime loads the result): activations quantized with the ranges `calibration` gives, weights
 * with their own ranges, biases to int32 at scale s_x * s_w. A new model; the report lists, pass by
 * pass, each node inserted and the tensor it quantizes (its provenance). */
OWB_API OwbModel *owb_quant_quantize_static (OwbModel *model, const OwbQuantCalibration *calibration,
                                             const OwbQuantOptions *options, OwbOptimizeReport **report, GError **error);

/* Dynamic quantization: MatMul and Gemm weights to int8 with their activations quantized at run
 * time (DynamicQuantizeLinear + MatMulInteger), LSTM/GRU weights and Gather tables stored in int8
 * behind DequantizeLinear. No calibration set. */
OWB_API OwbModel *owb_quant_quantize_dynamic (OwbModel *model, const OwbQuantOptions *options, OwbOptimizeReport **report,
                                              GError **error);

/* ---- Accuracy comparison -------------------------------------------------------------------- */

typedef struct {
  char *name;
  guint64 count;          /* elements compared, over all samples */
  double sqnr_db;         /* 20 log10(|x| / |x - y|) over all samples; +inf when equal */
  double cosine;
  double max_abs;
  double mean_abs;
  /* Classifier-like outputs (float, last axis >= 2): argmax agreement per position. */
  gboolean classifier;
  double top1_agreement;  /* 0..1 */
  /* With labels: accuracy of A and of B (exact match of every position of a sample). */
  gboolean has_accuracy;
  double accuracy_a, accuracy_b;
  guint64 n_nonfinite;    /* element pairs left out of the sums because one was NaN or infinite */
  guint n_skipped;        /* samples left out because the shapes of A and B differed */
} OwbQuantOutputDiff;

typedef struct {
  char *name;             /* the tensor in A */
  char *matched;          /* its counterpart in B (the same name, or the DequantizeLinear output of
                           * the QDQ pair on it) */
  char *node;             /* the node of A that computes it ("" for a graph input) */
  char *op_type;
  guint64 count;
  double sqnr_db;
  double cosine;
  double max_abs;
  guint64 n_nonfinite;    /* as in OwbQuantOutputDiff */
  guint n_skipped;
  /* Over every compared element of every sample: the float value (A) and the quantized one (B, as
   * its readers see it, dequantized). NaN when nothing was compared. */
  double min_a, max_a, mean_a, std_a;
  double min_b, max_b, mean_b, std_b;
  /* The error B - A as a histogram: n_error_bins equal bins over [error_lo, error_hi], streamed
   * (bounded memory; the range is the error's own, to within one doubling, cut to the bins that
   * hold a value). n_error_bins 0 when nothing was compared. */
  guint n_error_bins;
  guint64 *error_bins;
  double error_lo, error_hi;
} OwbQuantTensorDiff;

typedef struct {
  guint n_samples;
  GPtrArray *outputs;     /* of OwbQuantOutputDiff *, in A's output order */
  GPtrArray *tensors;     /* of OwbQuantTensorDiff *, worst SQNR first */
} OwbQuantComparison;

typedef struct {
  gboolean per_tensor;    /* match and compare every float tensor (default TRUE) */
  GPtrArray *labels;      /* of char *, one per sample (owb_quant_read_labels); may be NULL */
  int n_threads;
  GCancellable *cancellable;
  OwbQuantProgress progress;
  gpointer user_data;
} OwbQuantCompareOptions;

OWB_API void owb_quant_compare_options_init (OwbQuantCompareOptions *options);

/* Runs A and B (as they are, level disabled) on every sample and compares outputs (by position)
 * and, with per_tensor, every float tensor of A that B has a counterpart for. */
OWB_API OwbQuantComparison *owb_quant_compare (OwbModel *a, OwbModel *b, OwbQuantDataset *dataset,
                                               const OwbQuantCompareOptions *options, GError **error);
OWB_API void owb_quant_comparison_free (OwbQuantComparison *comparison);
/* The quantization a QDQ model applies to one tensor: the QuantizeLinear that quantizes a float
 * activation (or, for a weight stored quantized, its DequantizeLinear), its integer type and its
 * scales and zero points (one of each per tensor, or one per channel along `axis`). */
typedef struct {
  char *quantize_node;    /* the QuantizeLinear's name; NULL for a constant stored quantized */
  char *dequantize_node;  /* the DequantizeLinear's name; NULL when `tensor` names the float input
                           * of a QuantizeLinear with no DequantizeLinear after it */
  OwbDataType type;       /* UINT8, INT8, UINT16, INT16, INT32 (biases) */
  int axis;               /* per channel: the axis (normalised, >= 0); -1 per tensor */
  guint n_scales;         /* 1 per tensor, else the channel count */
  double scale_min, scale_max;
  int64_t zero_point_min, zero_point_max;
} OwbQuantQdqParams;

/* The parameters `quantized` uses for `tensor`: the output of a DequantizeLinear (an
 * OwbQuantTensorDiff's `matched`, or what a node of the quantized graph reads), or a float tensor a
 * QuantizeLinear reads. FALSE with an OWB_ERROR_INVALID_ARGUMENT error naming the tensor when no
 * QDQ pair quantizes it, or when its scale or zero point is not a constant. Clear with
 * owb_quant_qdq_params_clear. */
OWB_API gboolean owb_quant_find_qdq_params (const OwbModel *quantized, const char *tensor, OwbQuantQdqParams *params,
                                            GError **error);
OWB_API void owb_quant_qdq_params_clear (OwbQuantQdqParams *params);

/* {"samples": N, "outputs": [{"name", "sqnr_db", "cosine", "max_abs", "mean_abs", "top1_agreement"?,
 * "accuracy_a"?, "accuracy_b"?}], "tensors": [{"name", "matched", "node", "op", "sqnr_db", "cosine",
 * "max_abs"}]}; an infinite SQNR is written as null. Caller frees. */
OWB_API char *owb_quant_comparison_to_json (const OwbQuantComparison *comparison);

/* ---- Accuracy-aware fallback --------------------------------------------------------------- */

/* How much quantizing one node costs on its own: the lowest SQNR (dB) of what it reads quantized,
 * each input against its float value quantized and dequantized alone (no error from upstream), on
 * the float model's tensors. The lower, the more harmful. */
typedef struct {
  char *node;
  char *op_type;
  char *tensor;          /* the input that sets it */
  double local_sqnr_db;
} OwbQuantSensitivity;

typedef struct {
  guint n_kept_float;    /* the most harmful nodes kept in float in this trial */
  double sqnr_db;        /* the worst output's SQNR against the float model */
  gboolean has_accuracy;
  double accuracy;       /* with labels: the quantized model's accuracy */
} OwbQuantTrial;

typedef struct {
  double target_sqnr_db;    /* each output's SQNR against float must reach this (0: not a target) */
  double max_accuracy_drop; /* with labels: float accuracy minus quantized accuracy at most this (< 0:
                             * not a target) */
  GPtrArray *labels;        /* of char *, for max_accuracy_drop; may be NULL */
  OwbQuantDataset *eval;    /* the evaluation samples (borrowed) */
  guint max_trials;         /* re-quantizations at most (0: 8) */
  guint sensitivity_samples;/* samples for the ranking (0: 8) */
  int n_threads;
  GCancellable *cancellable;
  OwbQuantProgress progress; /* trial k of max_trials */
  gpointer user_data;
} OwbQuantFallbackOptions;

typedef struct {
  GPtrArray *ranking;     /* of OwbQuantSensitivity *, most harmful first */
  GPtrArray *kept_float;  /* of char *: the nodes the chosen model keeps in float */
  GArray *trials;         /* of OwbQuantTrial, in the order run (the first: nothing kept float) */
  double float_accuracy;  /* with labels */
  gboolean target_met;
  guint chosen_trial;     /* index in trials of the returned model */
} OwbQuantFallbackResult;

OWB_API void owb_quant_fallback_options_init (OwbQuantFallbackOptions *options);
OWB_API void owb_quant_fallback_result_free (OwbQuantFallbackResult *result);

/* Static quantization that keeps the most harmful nodes in float until the target holds on
 * options->eval, reusing `calibration` (no recalibration per trial): nodes ranked by sensitivity,
 * then the number kept float doubled until the target holds and narrowed by bisection, within
 * max_trials. Returns the smallest model found that meets the target, or, when none does, the one
 * closest to it (result->target_met FALSE). */
OWB_API OwbModel *owb_quant_quantize_with_fallback (OwbModel *model, const OwbQuantCalibration *calibration,
                                                    const OwbQuantOptions *options, const OwbQuantFallbackOptions *fallback,
                                                    OwbQuantFallbackResult **result, GError **error);
/* {"target_met", "float_accuracy"?, "kept_float": [...], "trials": [{"kept_float", "sqnr_db", "accuracy"?}],
 * "ranking": [{"node", "op", "tensor", "local_sqnr_db"}]} (ranking cut at `max_ranking`). */
OWB_API char *owb_quant_fallback_result_to_json (const OwbQuantFallbackResult *result, guint max_ranking);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbQuantDataset, owb_quant_dataset_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbQuantCalibration, owb_quant_calibration_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbQuantComparison, owb_quant_comparison_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbQuantFallbackResult, owb_quant_fallback_result_free)

G_END_DECLS
