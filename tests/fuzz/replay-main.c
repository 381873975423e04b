/* replay-main.c: in builds without libFuzzer, runs a harness's entry point on every file of the
 * folders (or files) given: the committed reproducers and seeds, so that meson test keeps each
 * fixed crash fixed. */
#include "fuzz-common.h"

#include <glib/gstdio.h>
#include <stdio.h>

static guint
replay_path (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      GDir *dir = g_dir_open (path, 0, NULL);
      if (!dir)
        return 0;
      GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
      const char *name;
      while ((name = g_dir_read_name (dir)))
        if (name[0] != '.')
          g_ptr_array_add (names, g_build_filename (path, name, NULL));
      g_dir_close (dir);
      g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);
      guint n = 0;
      for (guint i = 0; i < names->len; i++)
        n += replay_path (g_ptr_array_index (names, i));
      g_ptr_array_unref (names);
      return n;
    }
  gchar *data = NULL;
  gsize size = 0;
  if (!g_file_get_contents (path, &data, &size, NULL))
    {
      fprintf (stderr, "cannot read %s\n", path);
      return 0;
    }
  printf ("replaying %s (%" G_GSIZE_FORMAT " bytes)\n", path, size);
  fflush (stdout);
  LLVMFuzzerTestOneInput ((const uint8_t *) data, size);
  g_free (data);
  return 1;
}

int
main (int argc, char **argv)
{
  guint n = 0;
  for (int i = 1; i < argc; i++)
    n += replay_path (argv[i]);
  printf ("%u inputs replayed\n", n);
  return n > 0 ? 0 : 1;
}
