/* owb-atomic-file.c: files written completely or not at all (an anonymous O_TMPFILE linked into
 * place, else a named temporary renamed over the target), and file identities for the checks
 * that keep an output from landing on an input. */
#define _GNU_SOURCE
#include <owb/owb-error.h>
#include <owb/owb-model-io.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "owb-onnx-private.h"

#define TMP_INFIX ".tmp-"
#define TMP_RANDOM_LEN 6

/* Reading untrusted files */

int
_owb_open_regular_file (const char *path, const char *what, struct stat *st, GError **error)
{
  /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. */
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    {
      int err = errno;
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "cannot open %s '%s': %s", what, path, g_strerror (err));
      return -1;
    }
  if (fstat (fd, st) != 0)
    {
      int err = errno;
      close (fd);
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "cannot read %s '%s': %s", what, path, g_strerror (err));
      return -1;
    }
  if (!S_ISREG (st->st_mode))
    {
      close (fd);
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "cannot read %s '%s': %s", what, path,
                   S_ISDIR (st->st_mode) ? "it is a folder" : "not a regular file (a FIFO, socket or device)");
      return -1;
    }
  int flags = fcntl (fd, F_GETFL);
  if (flags >= 0)
    (void) fcntl (fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

gboolean
_owb_pread_exact (int fd, void *buffer, gsize size, guint64 offset, const char *what, const char *path,
                  GError **error)
{
  guint8 *p = buffer;
  while (size > 0)
    {
      ssize_t n = pread (fd, p, MIN (size, (gsize) 1 << 30), (off_t) offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int err = n < 0 ? errno : 0;
          g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "cannot read %s '%s': %s", what, path,
                       err ? g_strerror (err) : "the file ended early (it changed while it was read)");
          return FALSE;
        }
      p += n;
      size -= (gsize) n;
      offset += (guint64) n;
    }
  return TRUE;
}

/* File identities */

gboolean
owb_file_identity_init (OwbFileIdentity *identity, const char *path, GError **error)
{
  memset (identity, 0, sizeof *identity);
  struct stat st;
  if (stat (path, &st) == 0)
    {
      identity->device = st.st_dev;
      identity->inode = st.st_ino;
      return TRUE;
    }
  int err = errno;
  if (err != ENOENT)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "cannot check '%s': %s", path, g_strerror (err));
      return FALSE;
    }
  /* Not there yet (or a dangling link, which a rename would replace): the folder's identity and
   * the name in it say which directory entry a write creates. */
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  if (stat (dir, &st) != 0 || !S_ISDIR (st.st_mode))
    {
      err = errno;
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "cannot write '%s': folder '%s' %s", path, dir,
                   S_ISDIR (st.st_mode) || err != 0 ? g_strerror (err) : "is not a folder");
      return FALSE;
    }
  identity->device = st.st_dev;
  identity->inode = st.st_ino;
  identity->name = g_steal_pointer (&base);
  return TRUE;
}

void
owb_file_identity_clear (OwbFileIdentity *identity)
{
  if (identity)
    g_clear_pointer (&identity->name, g_free);
}

gboolean
owb_file_identity_equal (const OwbFileIdentity *a, const OwbFileIdentity *b)
{
  return a->device == b->device && a->inode == b->inode && g_strcmp0 (a->name, b->name) == 0;
}

const char *
owb_model_find_external_file (const OwbModel *model, const OwbFileIdentity *identity)
{
  if (identity->name != NULL)
    return NULL;
  for (guint i = 0; model->mappings && i < model->mappings->len; i++)
    {
      const OwbMappedFile *mapped = g_ptr_array_index (model->mappings, i);
      if (mapped->device == identity->device && mapped->inode == identity->inode)
        return mapped->path;
    }
  return NULL;
}

/* Temporary names still on disk, for the signal handler. Fixed slots, so that the handler
 * touches no allocator or lock: the one piece of process-wide mutable state in the engine,
 * because a signal is process-wide. A slot is 0 free, 1 being filled, 2 live. */
#define N_SLOTS 32
static struct {
  volatile gint state;
  char path[PATH_MAX];
} pending[N_SLOTS];

/* The slot number plus one; 0 when none is free (the next write beside it still removes it). */
static int
register_pending (const char *path)
{
  if (strlen (path) >= PATH_MAX)
    return 0;
  for (int i = 0; i < N_SLOTS; i++)
    if (g_atomic_int_compare_and_exchange (&pending[i].state, 0, 1))
      {
        strcpy (pending[i].path, path);
        g_atomic_int_set (&pending[i].state, 2);
        return i + 1;
      }
  return 0;
}

static void
unregister_pending (int slot)
{
  if (slot > 0)
    g_atomic_int_set (&pending[slot - 1].state, 0);
}

void
owb_atomic_files_remove_pending (void)
{
  for (int i = 0; i < N_SLOTS; i++)
    if (g_atomic_int_get (&pending[i].state) == 2)
      (void) unlink (pending[i].path);
}

static void
on_fatal_signal (int sig)
{
  owb_atomic_files_remove_pending ();
  signal (sig, SIG_DFL);
  raise (sig);
}

void
owb_atomic_files_install_signal_cleanup (void)
{
  static const int signals[] = { SIGINT, SIGTERM, SIGHUP };
  for (guint i = 0; i < G_N_ELEMENTS (signals); i++)
    {
      struct sigaction old;
      /* A handler the program set itself (or an ignored signal) stays. */
      if (sigaction (signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL)
        continue;
      struct sigaction sa = { 0 };
      sa.sa_handler = on_fatal_signal;
      sigemptyset (&sa.sa_mask);
      sigaction (signals[i], &sa, NULL);
    }
}

/* Stale temporaries: NAME.tmp-XXXXXX beside the target, owned by us, that no live writer holds
 * locked (every writer keeps an exclusive flock on its temporary until it is renamed). */
static gboolean
is_temporary_name (const char *entry, const char *base)
{
  gsize base_len = strlen (base);
  if (strncmp (entry, base, base_len) != 0 || strncmp (entry + base_len, TMP_INFIX, strlen (TMP_INFIX)) != 0)
    return FALSE;
  const char *rest = entry + base_len + strlen (TMP_INFIX);
  if (strlen (rest) != TMP_RANDOM_LEN)
    return FALSE;
  for (const char *p = rest; *p; p++)
    if (!g_ascii_isalnum (*p))
      return FALSE;
  return TRUE;
}

static void
remove_stale_temporaries (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  int dir_fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0)
    return;
  DIR *d = fdopendir (dir_fd);
  if (d == NULL)
    {
      close (dir_fd);
      return;
    }
  struct dirent *entry;
  while ((entry = readdir (d)) != NULL)
    {
      if (!is_temporary_name (entry->d_name, base))
        continue;
      int fd = openat (dir_fd, entry->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0)
        continue;
      struct stat st, now;
      if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_uid == geteuid ()
          && flock (fd, LOCK_EX | LOCK_NB) == 0
          && fstatat (dir_fd, entry->d_name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_ino == st.st_ino
          && now.st_dev == st.st_dev)
        (void) unlinkat (dir_fd, entry->d_name, 0);
      close (fd);
    }
  closedir (d);
}

static void
random_suffix (char *out)
{
  static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int i = 0; i < TMP_RANDOM_LEN; i++)
    out[i] = chars[g_random_int_range (0, sizeof chars - 1)];
  out[TMP_RANDOM_LEN] = '\0';
}

static gboolean
proc_fd_links_work (void)
{
  return access ("/proc/self/fd", X_OK) == 0;
}

/* An unnamed file in the target's folder (O_TMPFILE): a crash leaves nothing behind. */
static int
open_anonymous (const char *path)
{
#ifdef O_TMPFILE
  /* The named fallback can be forced, so that tests cover it on filesystems with O_TMPFILE. */
  if (!proc_fd_links_work () || g_getenv ("OWB_ATOMIC_NAMED_TEMPORARIES"))
    return -1;
  g_autofree char *dir = g_path_get_dirname (path);
  return open (dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
#else
  (void) path;
  return -1;
#endif
}

gboolean
_owb_atomic_file_open (OwbAtomicFile *af, const char *path, GError **error)
{
  memset (af, 0, sizeof *af);
  af->slot = 0;
  remove_stale_temporaries (path);
  af->path = g_strdup (path);
  int fd = open_anonymous (path);
  if (fd >= 0)
    af->anonymous = TRUE;
  else
    {
      for (int attempt = 0; attempt < 8 && fd < 0; attempt++)
        {
          g_free (af->tmp_path);
          af->tmp_path = g_strdup_printf ("%s" TMP_INFIX "XXXXXX", path);
          fd = g_mkstemp_full (af->tmp_path, O_WRONLY | O_CLOEXEC, 0644);
          if (fd < 0)
            break;
          af->slot = register_pending (af->tmp_path);
          struct stat mine, named;
          /* Locked before a stale-file sweep of another process can take it for ours. */
          if (flock (fd, LOCK_EX) != 0 || fstat (fd, &mine) != 0 || stat (af->tmp_path, &named) != 0
              || mine.st_ino != named.st_ino || mine.st_dev != named.st_dev)
            {
              close (fd);
              fd = -1;
              unregister_pending (af->slot);
              af->slot = 0;
            }
        }
      if (fd < 0)
        {
          int err = errno;
          g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "cannot create a file beside '%s': %s", path,
                       g_strerror (err));
          g_clear_pointer (&af->tmp_path, g_free);
          g_clear_pointer (&af->path, g_free);
          return FALSE;
        }
      /* mkstemp makes the file private; saved files are ordinary files. */
      (void) fchmod (fd, 0644);
    }
  if (af->anonymous)
    (void) flock (fd, LOCK_EX);
  af->file = fdopen (fd, "wb");
  if (af->file == NULL)
    {
      close (fd);
      _owb_atomic_file_abort (af);
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "cannot write '%s'", path);
      return FALSE;
    }
  return TRUE;
}

gboolean
_owb_atomic_file_close (OwbAtomicFile *af, GError **error)
{
  if (af->file == NULL || af->flushed)
    return TRUE;
  errno = 0;
  gboolean ok = !ferror (af->file) && fflush (af->file) == 0 && fsync (fileno (af->file)) == 0;
  int err = errno;
  if (!ok)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "cannot write '%s': %s", af->path, g_strerror (err ? err : EIO));
      _owb_atomic_file_abort (af);
      return FALSE;
    }
  /* Still open: an anonymous file needs its descriptor to be linked, and the lock marks it live. */
  af->flushed = TRUE;
  return TRUE;
}

/* Gives the anonymous file a temporary name beside the target, to be renamed over it. */
static gboolean
link_anonymous (OwbAtomicFile *af, GError **error)
{
  g_autofree char *proc = g_strdup_printf ("/proc/self/fd/%d", fileno (af->file));
  for (int attempt = 0; attempt < 16; attempt++)
    {
      char suffix[TMP_RANDOM_LEN + 1];
      random_suffix (suffix);
      g_free (af->tmp_path);
      af->tmp_path = g_strconcat (af->path, TMP_INFIX, suffix, NULL);
      af->slot = register_pending (af->tmp_path);
      if (linkat (AT_FDCWD, proc, AT_FDCWD, af->tmp_path, AT_SYMLINK_FOLLOW) == 0)
        return TRUE;
      int err = errno;
      unregister_pending (af->slot);
      af->slot = 0;
      g_clear_pointer (&af->tmp_path, g_free);
      if (err != EEXIST)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "cannot create '%s': %s", af->path, g_strerror (err));
          return FALSE;
        }
    }
  g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "cannot create '%s': no free temporary name", af->path);
  return FALSE;
}

gboolean
_owb_atomic_file_commit (OwbAtomicFile *af, GError **error)
{
  if (!_owb_atomic_file_close (af, error))
    return FALSE;
  if (af->anonymous && !link_anonymous (af, error))
    {
      _owb_atomic_file_abort (af);
      return FALSE;
    }
  if (g_rename (af->tmp_path, af->path) != 0)
    {
      int err = errno;
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "cannot replace '%s': %s", af->path, g_strerror (err));
      _owb_atomic_file_abort (af);
      return FALSE;
    }
  unregister_pending (af->slot);
  af->slot = 0;
  g_clear_pointer (&af->tmp_path, g_free);
  fclose (af->file);
  af->file = NULL;
  g_clear_pointer (&af->path, g_free);
  return TRUE;
}

void
_owb_atomic_file_abort (OwbAtomicFile *af)
{
  if (af->tmp_path)
    g_unlink (af->tmp_path);
  unregister_pending (af->slot);
  af->slot = 0;
  if (af->file)
    fclose (af->file);
  af->file = NULL;
  g_clear_pointer (&af->tmp_path, g_free);
  g_clear_pointer (&af->path, g_free);
}

gboolean
owb_file_set_contents_atomic (const char *path, const void *data, gsize size, GError **error)
{
  OwbAtomicFile file;
  if (!_owb_atomic_file_open (&file, path, error))
    return FALSE;
  if (size)
    (void) fwrite (data, 1, size, file.file);
  gboolean ok = _owb_atomic_file_commit (&file, error);
  _owb_atomic_file_abort (&file);
  return ok;
}
