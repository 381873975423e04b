/* owb-quant-dataset.c: calibration and evaluation samples, listed up front and loaded one at a time
 * so that a thousand samples cost no more memory than one. */
#include "owb-quant-private.h"

#include <stdlib.h>
#include <string.h>


static gboolean
holds_sample (const char *dir)
{
  g_autofree char *pb = g_build_filename (dir, "input_0.pb", NULL);
  g_autofree char *npy = g_build_filename (dir, "input_0.npy", NULL);
  return g_file_test (pb, G_FILE_TEST_IS_REGULAR) || g_file_test (npy, G_FILE_TEST_IS_REGULAR);
}

/* Natural order: runs of digits compare as numbers, so set_2 comes before set_10. */
static int
natural_compare (const char *a, const char *b)
{
  while (*a && *b)
    {
      if (g_ascii_isdigit (*a) && g_ascii_isdigit (*b))
        {
          char *ea, *eb;
          guint64 na = g_ascii_strtoull (a, &ea, 10), nb = g_ascii_strtoull (b, &eb, 10);
          if (na != nb)
            return na < nb ? -1 : 1;
          a = ea;
          b = eb;
          continue;
        }
      if (*a != *b)
        return (guchar) *a < (guchar) *b ? -1 : 1;
      a++, b++;
    }
  return *a ? 1 : *b ? -1 : 0;
}

int
_owb_quant_compare_paths (gconstpointer a, gconstpointer b)
{
  return natural_compare (*(char *const *) a, *(char *const *) b);
}

OwbQuantDataset *
owb_quant_dataset_new_from_dir (const char *dir, GError **error)
{
  if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "%s: no such folder", dir);
      return NULL;
    }
  g_autoptr (GPtrArray) dirs = g_ptr_array_new_with_free_func (g_free);
  if (holds_sample (dir))
    g_ptr_array_add (dirs, g_strdup (dir));
  else
    {
      g_autoptr (GDir) d = g_dir_open (dir, 0, error);
      if (d == NULL)
        return NULL;
      const char *entry;
      while ((entry = g_dir_read_name (d)) != NULL)
        {
          char *sub = g_build_filename (dir, entry, NULL);
          if (g_file_test (sub, G_FILE_TEST_IS_DIR) && holds_sample (sub))
            g_ptr_array_add (dirs, sub);
          else
            g_free (sub);
        }
      g_ptr_array_sort (dirs, _owb_quant_compare_paths);
    }
  if (dirs->len == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO,
                   "%s: no sample in it (a sample is a folder of input_0.pb or input_0.npy files, such as "
                   "test_data_set_0/)", dir);
      return NULL;
    }
  OwbQuantDataset *ds = g_new0 (OwbQuantDataset, 1);
  ds->source = g_strdup (dir);
  ds->dirs = g_steal_pointer (&dirs);
  return ds;
}

OwbQuantDataset *
owb_quant_dataset_new_random (guint n_samples, guint32 seed)
{
  OwbQuantDataset *ds = g_new0 (OwbQuantDataset, 1);
  ds->source = g_strdup ("random");
  ds->n_random = n_samples;
  ds->seed = seed;
  return ds;
}

void
owb_quant_dataset_free (OwbQuantDataset *dataset)
{
  if (dataset == NULL)
    return;
  g_free (dataset->source);
  if (dataset->dirs)
    g_ptr_array_unref (dataset->dirs);
  if (dataset->images)
    g_ptr_array_unref (dataset->images);
  g_clear_pointer (&dataset->preprocess, owb_session_free);
  g_free (dataset);
}

guint
owb_quant_dataset_get_n_samples (const OwbQuantDataset *dataset)
{
  return dataset->dirs ? dataset->dirs->len : dataset->images ? dataset->images->len : dataset->n_random;
}

void
owb_quant_dataset_truncate (OwbQuantDataset *dataset, guint n)
{
  if (dataset->dirs && n < dataset->dirs->len)
    g_ptr_array_set_size (dataset->dirs, n);
  else if (dataset->images && n < dataset->images->len)
    g_ptr_array_set_size (dataset->images, n);
  else if (!dataset->dirs && !dataset->images && n < dataset->n_random)
    dataset->n_random = n;
}

const char *
owb_quant_dataset_get_source (const OwbQuantDataset *dataset)
{
  return dataset->source;
}

const char *
owb_quant_dataset_get_sample_dir (const OwbQuantDataset *dataset, guint i)
{
  if (dataset->images)
    return i < dataset->images->len ? g_ptr_array_index (dataset->images, i) : NULL;
  return dataset->dirs && i < dataset->dirs->len ? g_ptr_array_index (dataset->dirs, i) : NULL;
}

static int
find_input (GPtrArray *feeds, const char *name)
{
  for (guint k = 0; name && *name && k < feeds->len; k++)
    if (strcmp (((OwbValueInfo *) g_ptr_array_index (feeds, k))->name, name) == 0)
      return (int) k;
  return -1;
}

/* The shape of a random input: declared dims, 1 for free ones. */
static OwbTensor *
random_input (const OwbValueInfo *info, GRand *rand, GError **error)
{
  if (!info->has_type || info->type.kind != OWB_VALUE_TENSOR || info->type.rank < 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "input '%s' has no declared tensor shape, so no random value can be made for it; give a "
                   "calibration folder", info->name);
      return NULL;
    }
  int64_t dims[OWB_MAX_RANK];
  for (int d = 0; d < info->type.rank; d++)
    dims[d] = owb_dim_is_known (info->type.dims[d]) ? info->type.dims[d].value : 1;
  OwbTensor *t = owb_tensor_new_random (info->type.dtype, info->type.rank, dims, rand, error);
  if (t == NULL)
    g_prefix_error (error, "input '%s': ", info->name);
  return t;
}

gboolean
owb_quant_dataset_load_sample (OwbQuantDataset *dataset, guint i, const OwbModel *model, GPtrArray **names,
                               GPtrArray **tensors, GError **error)
{
  g_return_val_if_fail (i < owb_quant_dataset_get_n_samples (dataset), FALSE);
  if (dataset->images)
    return _owb_quant_images_load (dataset, i, model, names, tensors, error);
  g_autoptr (GPtrArray) feeds = owb_graph_dup_feed_inputs (model->graph);
  g_autoptr (GPtrArray) values = g_ptr_array_new_full (feeds->len, (GDestroyNotify) owb_tensor_unref);
  g_ptr_array_set_size (values, feeds->len);

  if (dataset->dirs == NULL)
    {
      /* Each sample has a seed of its own, so sample i is the same whatever was loaded before. */
      g_autoptr (GRand) rand = g_rand_new_with_seed (dataset->seed + i * 7919u);
      for (guint k = 0; k < feeds->len; k++)
        if ((values->pdata[k] = random_input (g_ptr_array_index (feeds, k), rand, error)) == NULL)
          return FALSE;
    }
  else
    {
      const char *dir = g_ptr_array_index (dataset->dirs, i);
      for (guint k = 0;; k++)
        {
          g_autofree char *pb = g_strdup_printf ("%s/input_%u.pb", dir, k);
          g_autofree char *npy = g_strdup_printf ("%s/input_%u.npy", dir, k);
          const char *path = g_file_test (pb, G_FILE_TEST_IS_REGULAR)    ? pb
                             : g_file_test (npy, G_FILE_TEST_IS_REGULAR) ? npy
                                                                         : NULL;
          if (path == NULL)
            break;
          g_autofree char *name = NULL;
          OwbTensor *t = owb_tensor_load_file (path, &name, error);
          if (t == NULL)
            return FALSE;
          int slot = find_input (feeds, name);
          if (slot < 0)
            slot = (int) k;
          if ((guint) slot >= feeds->len)
            {
              owb_tensor_unref (t);
              g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s: the model has only %u input%s to feed",
                           path, feeds->len, feeds->len == 1 ? "" : "s");
              return FALSE;
            }
          if (values->pdata[slot] != NULL)
            {
              owb_tensor_unref (t);
              g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s: input '%s' is given twice in %s", path,
                           ((OwbValueInfo *) feeds->pdata[slot])->name, dir);
              return FALSE;
            }
          values->pdata[slot] = t;
        }
      for (guint k = 0; k < feeds->len; k++)
        if (values->pdata[k] == NULL)
          {
            g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s: no value for input '%s' (input_%u.pb)", dir,
                         ((OwbValueInfo *) feeds->pdata[k])->name, k);
            return FALSE;
          }
    }
  GPtrArray *out_names = g_ptr_array_new ();
  for (guint k = 0; k < feeds->len; k++)
    g_ptr_array_add (out_names, ((OwbValueInfo *) feeds->pdata[k])->name);
  *names = out_names;
  *tensors = g_steal_pointer (&values);
  return TRUE;
}

GPtrArray *
owb_quant_read_labels (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, error))
    return NULL;
  GPtrArray *labels = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l; l++)
    {
      char *line = g_strstrip (*l);
      if (*line == '\0' || *line == '#')
        continue;
      g_ptr_array_add (labels, g_strdup (line));
    }
  return labels;
}
