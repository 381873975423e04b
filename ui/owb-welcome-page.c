/* owb-welcome-page.c: the page of a window without a model: open one, the sample, or a recent one. */
#include "owb-welcome-page.h"

#include <adwaita.h>
#include <glib/gi18n-lib.h>

struct _OwbWelcomePage {
  GtkWidget parent_instance;

  AdwStatusPage *status_page;
  GtkWidget *recent_box;
  GtkListBox *recent_list;
};

G_DEFINE_FINAL_TYPE (OwbWelcomePage, owb_welcome_page, GTK_TYPE_WIDGET)

static gboolean
is_onnx_model (GtkRecentInfo *info)
{
  g_autofree char *uri = g_ascii_strdown (gtk_recent_info_get_uri (info), -1);
  return g_str_has_suffix (uri, ".onnx") && gtk_recent_info_exists (info);
}

static int
compare_newest_first (gconstpointer a, gconstpointer b)
{
  GtkRecentInfo *info_a = *(GtkRecentInfo **) a;
  GtkRecentInfo *info_b = *(GtkRecentInfo **) b;
  return g_date_time_compare (gtk_recent_info_get_modified (info_b), gtk_recent_info_get_modified (info_a));
}

GPtrArray *
owb_welcome_page_dup_recent_models (guint max)
{
  GPtrArray *models = g_ptr_array_new_with_free_func ((GDestroyNotify) gtk_recent_info_unref);
  GList *items = gtk_recent_manager_get_items (gtk_recent_manager_get_default ());
  for (GList *l = items; l; l = l->next)
    if (is_onnx_model (l->data))
      g_ptr_array_add (models, gtk_recent_info_ref (l->data));
  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);
  g_ptr_array_sort (models, compare_newest_first);
  if (models->len > max)
    g_ptr_array_set_size (models, max);
  return models;
}

static void
on_row_activated (OwbWelcomePage *self, GtkListBoxRow *row)
{
  const char *uri = g_object_get_data (G_OBJECT (row), "owb-uri");
  if (uri)
    gtk_widget_activate_action (GTK_WIDGET (self), "win.open-recent", "s", uri);
}

static GtkWidget *
new_recent_row (GtkRecentInfo *info)
{
  const char *name = gtk_recent_info_get_display_name (info);
  GtkWidget *row = adw_action_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), name);
  /* Titles are file names, not markup. */
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  g_autofree char *location = gtk_recent_info_get_uri_display (info);
  if (location)
    {
      g_autofree char *folder = g_path_get_dirname (location);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), folder);
    }
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), gtk_image_new_from_icon_name ("go-next-symbolic"));
  /* The row's accessible name is its title, the file's display name (AdwActionRow labels itself
   * by its title). */
  g_object_set_data_full (G_OBJECT (row), "owb-uri", g_strdup (gtk_recent_info_get_uri (info)), g_free);
  return row;
}

static void
rebuild_recent_list (OwbWelcomePage *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->recent_list))))
    gtk_list_box_remove (self->recent_list, child);

  g_autoptr (GPtrArray) models = owb_welcome_page_dup_recent_models (10);
  for (guint i = 0; i < models->len; i++)
    gtk_list_box_append (self->recent_list, new_recent_row (g_ptr_array_index (models, i)));
  gtk_widget_set_visible (self->recent_box, models->len > 0);
}

static void
owb_welcome_page_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), OWB_TYPE_WELCOME_PAGE);
  G_OBJECT_CLASS (owb_welcome_page_parent_class)->dispose (object);
}

static void
owb_welcome_page_class_init (OwbWelcomePageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = owb_welcome_page_dispose;

  gtk_widget_class_set_template_from_resource (widget_class, "/org/onnxworkbench/Workbench/owb-welcome-page.ui");
  gtk_widget_class_bind_template_child (widget_class, OwbWelcomePage, status_page);
  gtk_widget_class_bind_template_child (widget_class, OwbWelcomePage, recent_box);
  gtk_widget_class_bind_template_child (widget_class, OwbWelcomePage, recent_list);
  gtk_widget_class_bind_template_callback (widget_class, on_row_activated);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
owb_welcome_page_init (OwbWelcomePage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  g_signal_connect_object (gtk_recent_manager_get_default (), "changed", G_CALLBACK (rebuild_recent_list), self,
                           G_CONNECT_SWAPPED);
  rebuild_recent_list (self);
}

GtkWidget *
owb_welcome_page_new (void)
{
  return g_object_new (OWB_TYPE_WELCOME_PAGE, NULL);
}
