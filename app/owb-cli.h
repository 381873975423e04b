/* owb-cli.h: helpers shared by the owb subcommands: exit codes, one-line errors, option parsing,
 * feeding inputs (files, random), printing tensors and writing JSON. */
#pragma once

#include <owb/owb.h>
#include <owb/owb-output-check.h>
#include <owb/owb-quant.h>

G_BEGIN_DECLS

/* Exit statuses of the owb contract. */
enum {
  OWB_EXIT_OK = 0,
  OWB_EXIT_FAILED = 1,
  OWB_EXIT_USAGE = 2
};

typedef int (*OwbCommandFunc) (int argc, char **argv);

int owb_cmd_inspect (int argc, char **argv);
int owb_cmd_run (int argc, char **argv);
int owb_cmd_check (int argc, char **argv);
int owb_cmd_bench (int argc, char **argv);
int owb_cmd_ops (int argc, char **argv);
int owb_cmd_optimize (int argc, char **argv);
int owb_cmd_profile (int argc, char **argv);
int owb_cmd_runs (int argc, char **argv);
int owb_cmd_quantize (int argc, char **argv);
int owb_cmd_compare (int argc, char **argv);

/* Text from a model (names, doc strings, metadata) made safe for a terminal: control characters,
 * ANSI escape sequences and invalid UTF-8 become \xNN / \uNNNN escapes (caller frees). */
char *owb_cli_escape (const char *text);
/* The same, keeping line breaks: for whole reports (owb inspect). */
char *owb_cli_escape_lines (const char *text);
/* The message with its line breaks replaced by "; " and control characters escaped as by
 * owb_cli_escape (caller frees). */
char *owb_cli_one_line (const char *message);
/* Prints "owb: WHAT: MESSAGE" on stderr as one line (newlines in MESSAGE become "; ").
 * what may be NULL. */
void owb_cli_error (const char *what, const char *format, ...) G_GNUC_PRINTF (2, 3);
/* Same, for a GError. */
void owb_cli_gerror (const char *what, const GError *error);
/* The exit status for an error: OWB_EXIT_USAGE for OWB_ERROR_INVALID_ARGUMENT and option
 * errors, OWB_EXIT_FAILED otherwise. */
int owb_cli_exit_status (const GError *error);

/* Parses the options of `owb COMMAND` (argv[0] is the subcommand name): entries (NULL-terminated)
 * fill the caller's variables; --help shows "owb COMMAND [OPTION…] PARAMETER" (parameter may be
 * NULL) and summary under it. On a bad option prints one line and returns FALSE (the caller exits
 * with OWB_EXIT_USAGE). */
gboolean owb_cli_parse (const char *command, const char *parameter, const char *summary, const GOptionEntry *entries,
                        int *argc, char ***argv);
/* owb_cli_parse for a subcommand that takes one MODEL argument: *path gets it (borrowed from argv);
 * FALSE after one line on stderr when the options are bad or there is not exactly one argument. */
gboolean owb_cli_parse_model (const char *command, const char *summary, const GOptionEntry *entries, int *argc,
                              char ***argv, const char **path);

/* "1000000", "64K", "512M", "2G" (powers of 1024) into bytes; OWB_ERROR_INVALID_ARGUMENT otherwise. */
gboolean owb_cli_parse_size (const char *text, gsize *bytes, GError **error);

/* "disabled", "basic", "extended", "layout", "all" or 0..4. */
gboolean owb_cli_parse_optimize (const char *text, OwbOptimizeLevel *level, GError **error);
const char *owb_cli_optimize_name (OwbOptimizeLevel level);

/* Session options from the common command-line flags. providers may be NULL (CPU only). On
 * success *providers_out holds the provider array (free with g_ptr_array_unref after the
 * session is created). */
gboolean owb_cli_session_options (OwbSessionOptions *options, const char *providers, int n_threads,
                                  const char *optimize, GPtrArray **providers_out, GError **error);

/* Values for symbolic dims given as NAME=VALUE strings. Returns a table name -> int64 (as
 * gint64 *). */
GHashTable *owb_cli_parse_dims (char **dims, GError **error);

/* The session's feed inputs, in order, filled from (in this priority): `named` (NAME=FILE
 * strings), DIR/input_K.pb (or .npy) by position, then random values when `random` is TRUE
 * (symbolic dims take their value from `dims`, else 1). Returns a GPtrArray of OwbTensor *
 * (one per feed input) or NULL with an error. An input left without a value is an
 * OWB_ERROR_INVALID_ARGUMENT error that names it. random_limit (0: none; the run's
 * --memory-limit) bounds the bytes of the random values together: past it, OWB_ERROR_NOMEM names
 * the input before anything of it is made. */
GPtrArray *owb_cli_gather_inputs (OwbSession *session, const char *input_dir, char **named, gboolean random,
                                  GHashTable *dims, guint32 seed, gsize random_limit, GError **error);
/* What run, bench and profile prepare before running a model: the session options and --dim
 * values from their flags, then the model, its session, the feed inputs and room for the
 * outputs. Clear with owb_cli_feed_clear (or g_auto). */
typedef struct {
  OwbSessionOptions options;
  GPtrArray *providers;   /* the providers the options point to */
  GHashTable *dims;       /* from owb_cli_parse_dims */
  OwbModel *model;
  OwbSession *session;
  GPtrArray *inputs;      /* of OwbTensor *, one per feed input */
  const char **names;     /* the feed inputs' names, in the order of inputs */
  guint n_outputs;
  OwbTensor **outputs;    /* n_outputs slots for owb_session_run, NULL between runs */
  double load_ms;         /* model load and session creation */
  int threads_used;       /* --threads, or the number of cores for 0 */
} OwbCliFeed;

/* Fills feed->options, providers and dims from the flags; on an error prints "owb: COMMAND: …"
 * and returns FALSE (the caller exits with OWB_EXIT_USAGE). feed starts zeroed. */
gboolean owb_cli_feed_options (OwbCliFeed *feed, const char *command, char **dim_opts, const char *providers,
                               int n_threads, const char *optimize);
/* Loads the model at path, creates its session with feed->options and gathers the inputs (see
 * owb_cli_gather_inputs). Returns OWB_EXIT_OK, or prints "owb: PATH: …" and returns the exit
 * status. */
int owb_cli_feed_open (OwbCliFeed *feed, const char *path, const char *input_dir, char **named, gboolean random,
                       guint32 seed);
/* One timed run of the feed's session on its inputs (options may be NULL), what bench and profile
 * repeat: *ms gets its wall time, stats (may be NULL) its statistics, and its outputs are dropped.
 * FALSE with the run's error. */
gboolean owb_cli_feed_run_once (OwbCliFeed *feed, const OwbRunOptions *options, OwbRunStats *stats, double *ms,
                                GError **error);
/* Frees what feed holds, outputs left from a run included; feed can be cleared again. */
void owb_cli_feed_clear (OwbCliFeed *feed);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (OwbCliFeed, owb_cli_feed_clear)

/* Option entries several commands share, so that their --help says the same; `var` is the
 * variable the option sets. */
#define OWB_CLI_OPTIMIZE_ENTRY(var) \
    { "optimize", 'O', 0, G_OPTION_ARG_STRING, &(var), "Optimization level: disabled, basic, extended, layout or all (default all, as in ONNX Runtime)", "LEVEL" }
#define OWB_CLI_PROVIDERS_ENTRY(var) \
    { "providers", 0, 0, G_OPTION_ARG_STRING, &(var), "Execution providers in priority order (default: cpu)", "cpu,…" }
#define OWB_CLI_THREADS_ENTRY(var) \
    { "threads", 't', 0, G_OPTION_ARG_INT, &(var), "Intra-op threads (default 0: all cores)", "N" }
#define OWB_CLI_DIM_ENTRY(var) \
    { "dim", 0, 0, G_OPTION_ARG_STRING_ARRAY, &(var), "Value of a symbolic dimension for random inputs (default 1); repeatable", "NAME=VALUE" }
#define OWB_CLI_JSON_ENTRY(var) \
    { "json", 0, 0, G_OPTION_ARG_NONE, &(var), "Print one JSON object", NULL }
/* bench and profile: inputs from files, random ones for the rest. */
#define OWB_CLI_INPUT_ENTRIES(input_dir, named) \
    { "input-dir", 0, 0, G_OPTION_ARG_FILENAME, &(input_dir), "Feed DIR/input_K.pb to the graph inputs in order (default: random inputs)", "DIR" }, \
    { "input", 'i', 0, G_OPTION_ARG_FILENAME_ARRAY, &(named), "Feed input NAME from FILE; repeatable", "NAME=FILE" }

/* Image folders as model inputs (owb quantize --calibration-images, owb compare --images): the
 * folder and the preprocessing options as given. */
typedef struct {
  char *dir;
  char *size;   /* "WxH" */
  char *mean;   /* "R,G,B" or one value */
  char *std;
  char *layout; /* "nchw" or "nhwc" */
  gboolean bgr;
} OwbCliImageArgs;

#define OWB_CLI_IMAGE_ENTRIES(args) \
    { "image-size", 0, 0, G_OPTION_ARG_STRING, &(args).size, "Images: resize to WxH (default: the model input's)", "WxH" }, \
    { "mean", 0, 0, G_OPTION_ARG_STRING, &(args).mean, "Images: per-channel mean after scaling to [0, 1] (0.485,0.456,0.406 for ImageNet)", "R,G,B" }, \
    { "std", 0, 0, G_OPTION_ARG_STRING, &(args).std, "Images: per-channel standard deviation (0.229,0.224,0.225 for ImageNet)", "R,G,B" }, \
    { "layout", 0, 0, G_OPTION_ARG_STRING, &(args).layout, "Images: nchw or nhwc (default: from the model input)", "LAYOUT" }, \
    { "bgr", 0, 0, G_OPTION_ARG_NONE, &(args).bgr, "Images: channels in BGR order", NULL }

/* Checks and converts the image options (an error on stderr and FALSE on bad usage); options
 * given without the folder option `dir_option` are bad usage too. */
gboolean owb_cli_image_options (const OwbCliImageArgs *args, OwbQuantImageOptions *options, const char *command,
                                const char *dir_option);
void owb_cli_image_args_clear (OwbCliImageArgs *args);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (OwbCliImageArgs, owb_cli_image_args_clear)

/* Checks every file a command writes with owb_output_files_check (`what` is the option that named
 * it) against the input model, the files it reads external data from (model may be NULL before
 * loading) and each other; prints the error and returns the exit status, or OWB_EXIT_OK. Clear
 * the identities after (owb_output_files_clear). */
int owb_cli_check_outputs (const char *input, const OwbFileIdentity *input_id, const OwbModel *model,
                           OwbOutputFile *outputs, guint n_outputs);
/* What `owb optimize` and `owb quantize` do before writing: the model at `path` loaded into *model
 * once -o OUTPUT, the report (report_json, may be NULL) and the external data file (`external`,
 * relative to OUTPUT's folder, may be NULL) are known not to be the input, its data or each other,
 * checked before the load (a plain mistake costs no load) and after it (the files the model reads).
 * Prints the error and returns the exit status, or OWB_EXIT_OK. */
int owb_cli_load_for_save (const char *path, const char *output, const char *report_json, const char *external,
                           OwbModel **model);
/* Saves `model` to OUTPUT (through a temporary file), tensors of 1 KiB and more into `external`
 * beside it when that is given; prints the error and returns the exit status, or OWB_EXIT_OK. */
int owb_cli_save_model (OwbModel *model, const char *output, const char *external);

/* "float32[1,3,32,32]" for a tensor, "sequence<float32>(3)" for a sequence; caller frees. */
char *owb_cli_tensor_describe (const OwbTensor *tensor);
/* Appends a short summary of the values: statistics and the first few elements. */
void owb_cli_tensor_summary (GString *out, const OwbTensor *tensor, guint max_values);

/* Milliseconds on a monotonic clock. */
double owb_cli_now_ms (void);
/* Peak resident set size of this process in MiB (VmHWM, or getrusage). */
double owb_cli_peak_rss_mb (void);

/* JSON writing into a GString (over owb-json.h): numbers with OWB_CLI_JSON_DIGITS significant
 * digits, the precision of every owb report. */
#define OWB_CLI_JSON_DIGITS 6
/* The separator, "key": and v. */
void owb_json_member_double (GString *out, const char *key, double v);
/* The value type as {"kind":..,"dtype":..,"shape":[...],"text":..}. */
void owb_json_value_type (GString *out, const OwbValueType *type, gboolean has_type);

G_END_DECLS
