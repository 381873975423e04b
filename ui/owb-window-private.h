/* owb-window-private.h: the window's innards, shared by owb-window.c, owb-window-actions.c and the
 * window test. */
#pragma once

#include "owb-window.h"
#include "owb-graph-pane.h"
#include "owb-inspector.h"
#include "owb-welcome-page.h"

G_BEGIN_DECLS

struct _OwbWindow {
  AdwApplicationWindow parent_instance;

  /* Template children */
  AdwToastOverlay *toast_overlay;
  AdwHeaderBar *header_bar;
  GtkButton *open_button;
  GtkMenuButton *recent_button;
  GtkLabel *model_label;
  GtkLabel *model_folder_label;
  guint model_label_idle;
  AdwViewSwitcherTitle *switcher_title;
  GtkMenuButton *menu_button;
  GtkToggleButton *find_button;
  GtkDropDown *provider_drop_down;
  GtkDropDown *level_drop_down;
  GtkSpinner *prepare_spinner;
  GtkStack *main_stack;
  OwbWelcomePage *welcome_page;
  GtkLabel *loading_title;
  GtkLabel *loading_phase;
  GtkProgressBar *loading_progress;
  GtkButton *cancel_button;
  AdwStatusPage *error_page;
  AdwViewStack *view_stack;
  GtkPaned *graph_paned;
  OwbGraphPane *graph_pane;
  OwbInspector *inspector;
  AdwViewSwitcherBar *switcher_bar;

  GSettings *settings;
  GMenu *recent_menu;

  /* The model on screen (NULL until one is loaded), and the one being loaded. */
  OwbDocument *document;
  OwbDocument *loading;
  GCancellable *load_cancellable;
  GCancellable *prepare_cancellable;
  guint n_preparing;
  /* Set while the drop-downs are changed from code, so that it does not prepare again. */
  gboolean syncing_drop_downs;
  /* The pages of the page table (owb-window.c), in table order. */
  GPtrArray *pages;
};

/* owb-window-actions.c */
void _owb_window_install_actions (OwbWindow *self);
/* Enables the actions that need a model on screen. */
void _owb_window_update_actions (OwbWindow *self);
/* owb-window.c */
void _owb_window_show_toast (OwbWindow *self, const char *message);
GFile *_owb_window_dup_sample_file (void);
/* The level drop-down's item for a level, and back. */
OwbOptimizeLevel _owb_window_get_level (OwbWindow *self);
/* The provider list chosen ("cuda" or "cpu"; the engine appends cpu). */
const char *_owb_window_get_providers (OwbWindow *self);

G_END_DECLS
