/* owb-application.c: the workbench application: one window per model opened, the welcome window
 * otherwise, the app actions (new window, about, quit) and every keyboard shortcut. */
#include "owb-application.h"

#include <glib/gi18n-lib.h>

#include "owb-window.h"

struct _OwbApplication {
  AdwApplication parent_instance;
};

G_DEFINE_FINAL_TYPE (OwbApplication, owb_application, ADW_TYPE_APPLICATION)

static OwbWindow *
new_window (OwbApplication *self)
{
  OwbWindow *window = owb_window_new (GTK_APPLICATION (self));
  gtk_window_present (GTK_WINDOW (window));
  return window;
}

static void
owb_application_activate (GApplication *application)
{
  /* Started again without a file: bring the window forward rather than add one. */
  GtkWindow *active = gtk_application_get_active_window (GTK_APPLICATION (application));
  if (active)
    gtk_window_present (active);
  else
    new_window (OWB_APPLICATION (application));
}

static void
owb_application_open (GApplication *application, GFile **files, int n_files, const char *hint)
{
  /* Each window shows its loading page from its first frame: presented before, it would show
   * the welcome page and fade it out. */
  for (int i = 0; i < n_files; i++)
    {
      OwbWindow *window = owb_window_new (GTK_APPLICATION (application));
      owb_window_open_file (window, files[i]);
      gtk_window_present (GTK_WINDOW (window));
    }
}

static void
new_window_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  new_window (user_data);
}

static void
about_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  GtkApplication *application = user_data;
  static const char *developers[] = { "ONNX Workbench developers", NULL };
  GtkWidget *about = adw_about_window_new ();
  g_object_set (about,
                "application-name", _("ONNX Workbench"),
                "application-icon", OWB_APP_ID,
                "version", OWB_VERSION,
                "developer-name", _("ONNX Workbench developers"),
                "developers", developers,
                "license-type", GTK_LICENSE_GPL_3_0,
                "comments", _("Look inside ONNX models, run them, and see what the optimizer does."),
                /* Translators: put your names here, one per line. */
                "translator-credits", _("translator-credits"),
                NULL);
  GtkWindow *parent = gtk_application_get_active_window (application);
  if (parent)
    gtk_window_set_transient_for (GTK_WINDOW (about), parent);
  gtk_window_present (GTK_WINDOW (about));
}

static void
quit_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  /* Closing each window lets it save its size first. */
  GList *windows = g_list_copy (gtk_application_get_windows (GTK_APPLICATION (user_data)));
  for (GList *l = windows; l; l = l->next)
    gtk_window_close (l->data);
  g_list_free (windows);
  g_application_quit (G_APPLICATION (user_data));
}

static const GActionEntry app_entries[] = {
  { "new-window", new_window_action },
  { "about", about_action },
  { "quit", quit_action },
};

static const struct {
  const char *action;
  const char *accels[3];
} shortcuts[] = {
  { "app.quit", { "<Control>q", NULL } },
  { "app.new-window", { "<Control>n", NULL } },
  { "win.open", { "<Control>o", NULL } },
  { "win.find", { "<Control>f", NULL } },
  { "win.find-next", { "<Control>g", "F3", NULL } },
  { "win.find-previous", { "<Shift><Control>g", "<Shift>F3", NULL } },
  { "win.zoom-in", { "<Control>plus", "<Control>equal", NULL } },
  { "win.zoom-out", { "<Control>minus", NULL } },
  { "win.zoom-fit", { "<Control>0", NULL } },
  { "win.close", { "<Control>w", NULL } },
  { "win.inspector-visible", { "F9", NULL } },
};

/* A build-tree run finds the app icon in the source tree (the installed theme does not have it). */
static void
add_source_icons (void)
{
  GdkDisplay *display = gdk_display_get_default ();
  if (!display)
    return;
  GtkIconTheme *theme = gtk_icon_theme_get_for_display (display);
  if (gtk_icon_theme_has_icon (theme, OWB_APP_ID))
    return;
  g_autofree char *data_dir = g_path_get_dirname (OWB_SOURCE_SAMPLES_DIR);
  g_autofree char *icons = g_build_filename (data_dir, "icons", NULL);
  if (g_file_test (icons, G_FILE_TEST_IS_DIR))
    gtk_icon_theme_add_search_path (theme, icons);
}

static void
owb_application_startup (GApplication *application)
{
  G_APPLICATION_CLASS (owb_application_parent_class)->startup (application);

  g_set_application_name (_("ONNX Workbench"));
  gtk_window_set_default_icon_name (OWB_APP_ID);
  add_source_icons ();

  g_action_map_add_action_entries (G_ACTION_MAP (application), app_entries, G_N_ELEMENTS (app_entries),
                                   application);
  for (guint i = 0; i < G_N_ELEMENTS (shortcuts); i++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (application), shortcuts[i].action,
                                           shortcuts[i].accels);
}

static void
owb_application_class_init (OwbApplicationClass *klass)
{
  GApplicationClass *application_class = G_APPLICATION_CLASS (klass);
  application_class->activate = owb_application_activate;
  application_class->open = owb_application_open;
  application_class->startup = owb_application_startup;
}

static void
owb_application_init (OwbApplication *self)
{
}

void
owb_application_bind_textdomain (void)
{
  bindtextdomain (GETTEXT_PACKAGE, OWB_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
}

void
owb_application_use_build_tree_schema (void)
{
  /* Not by asking the default schema source first: it is built once, on first use, and would
   * not see the variable set after. An installed binary has no ../data/gschemas.compiled. */
  if (g_getenv ("GSETTINGS_SCHEMA_DIR"))
    return;
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  if (!exe)
    return;
  g_autofree char *app_dir = g_path_get_dirname (exe);
  g_autofree char *build_dir = g_path_get_dirname (app_dir);
  g_autofree char *data_dir = g_build_filename (build_dir, "data", NULL);
  g_autofree char *compiled = g_build_filename (data_dir, "gschemas.compiled", NULL);
  if (g_file_test (compiled, G_FILE_TEST_IS_REGULAR))
    g_setenv ("GSETTINGS_SCHEMA_DIR", data_dir, TRUE);
}

OwbApplication *
owb_application_new (void)
{
  /* GtkApplication takes the resource base from the id: gtk/help-overlay.ui and style.css load
   * from /org/onnxworkbench/Workbench. */
  return g_object_new (OWB_TYPE_APPLICATION,
                       "application-id", OWB_APP_ID,
                       "flags", G_APPLICATION_HANDLES_OPEN,
                       NULL);
}
