/* owb-page.c: the document pages' base: the document they follow, their work in flight and
 * "busy", their error label, and the signals the window wires for every page. */
#include "owb-page.h"

typedef struct
{
  OwbDocument *document;
  gulong prepared_handler;
  GCancellable *cancellable; /* the work in flight; NULL: idle */
  gboolean disposed;
  GtkLabel *error_label;     /* borrowed: a child of the page (a weak pointer: NULL once it goes) */
  char *error;
} OwbPagePrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (OwbPage, owb_page, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_DOCUMENT,
  PROP_BUSY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum {
  SIGNAL_NODE_ACTIVATED,
  SIGNAL_SHOW_LAYER,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
prepared_cb (OwbPage *self)
{
  OwbPageClass *klass = OWB_PAGE_GET_CLASS (self);
  if (klass->prepared_changed != NULL)
    klass->prepared_changed (self);
}

/* Lets go of the document (and its handler) and takes document, without telling the page. */
static gboolean
hold_document (OwbPage *self, OwbDocument *document)
{
  OwbPagePrivate *priv = owb_page_get_instance_private (self);
  if (priv->document == document)
    return FALSE;
  if (priv->document != NULL)
    {
      g_clear_signal_handler (&priv->prepared_handler, priv->document);
      g_clear_object (&priv->document);
    }
  if (document != NULL)
    {
      priv->document = g_object_ref (document);
      priv->prepared_handler = g_signal_connect_swapped (document, "notify::prepared", G_CALLBACK (prepared_cb), self);
    }
  return TRUE;
}

OwbDocument *
owb_page_get_document (OwbPage *self)
{
  g_return_val_if_fail (OWB_IS_PAGE (self), NULL);
  OwbPagePrivate *priv = owb_page_get_instance_private (self);
  return priv->document;
}

void
owb_page_set_document (OwbPage *self, OwbDocument *document)
{
  g_return_if_fail (OWB_IS_PAGE (self));
  g_return_if_fail (document == NULL || OWB_IS_DOCUMENT (document));
  OwbPagePrivate *priv = owb_page_get_instance_private (self);
  if (priv->disposed || !hold_document (self, document))
    return;
  OwbPageClass *klass = OWB_PAGE_GET_CLASS (self);
  if (klass->document_changed != NULL)
    klass->document_changed (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DOCUMENT]);
}

gboolean
owb_page_get_busy (OwbPage *self)
{
  g_return_val_if_fail (OWB_IS_PAGE (self), FALSE);
  return OWB_PAGE_GET_CLASS (self)->get_busy (self);
}

GCancellable *
owb_page_get_cancellable (OwbPage *self)
{
  g_return_val_if_fail (OWB_IS_PAGE (self), NULL);
  OwbPagePrivate *priv = owb_page_get_instance_private (self);
  return priv->cancellable;
}

void
owb_page_update (OwbPage *self)
{
  g_return_if_fail (OWB_IS_PAGE (self));
  OwbPagePrivate *priv = owb_page_get_instance_private (self);
  /* a page being disposed has no controls left to update and nobody to tell */
  if (priv->disposed)
    return;
  OwbPageClass *klass = OWB_PAGE_GET_CLASS (self);
  if (klass->update != NULL)
    klass->update (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

void
owb_page_set_busy (OwbPage *self, GCancellable *cancellable)
{
  g_return_if_fail (OWB_IS_PAGE (self));
  OwbPagePrivate *priv = owb_page_get_instance_private (self);
  g_clear_object (&priv->cancellable);
  priv->cancellable = cancellable;
  owb_page_update (self);
}

void
owb_page_cancel (OwbPage *self)
{
  g_return_if_fail (OWB_IS_PAGE (self));
  OwbPagePrivate *priv = owb_page_get_instance_private (self);
  if (priv->cancellable != NULL)
    g_cancellable_cancel (priv->cancellable);
}

gboolean
owb_page_get_disposed (OwbPage *self)
{
  g_return_val_if_fail (OWB_IS_PAGE (self), TRUE);
  OwbPagePrivate *priv = owb_page_get_instance_private (self);
  return priv->disposed;
}

void
owb_page_set_error_label (OwbPage *self, GtkLabel *label)
{
  g_return_if_fail (OWB_IS_PAGE (self));
  OwbPagePrivate *priv = owb_page_get_instance_private (self);
  if (priv->error_label != NULL)
    g_object_remove_weak_pointer (G_OBJECT (priv->error_label), (gpointer *) &priv->error_label);
  priv->error_label = label;
  if (label != NULL)
    g_object_add_weak_pointer (G_OBJECT (label), (gpointer *) &priv->error_label);
  owb_page_show_error (self, priv->error);
}

void
owb_page_show_error (OwbPage *self, const char *message)
{
  g_return_if_fail (OWB_IS_PAGE (self));
  OwbPagePrivate *priv = owb_page_get_instance_private (self);
  if (priv->error != message)
    {
      g_free (priv->error);
      priv->error = g_strdup (message);
    }
  if (priv->error_label == NULL || priv->disposed)
    return;
  gtk_label_set_text (priv->error_label, message ? message : "");
  gtk_widget_set_visible (GTK_WIDGET (priv->error_label), message != NULL);
}

const char *
owb_page_get_error (OwbPage *self)
{
  g_return_val_if_fail (OWB_IS_PAGE (self), NULL);
  OwbPagePrivate *priv = owb_page_get_instance_private (self);
  return priv->error;
}

void
owb_page_activate_node (OwbPage *self, const char *name, gboolean reveal)
{
  g_return_if_fail (OWB_IS_PAGE (self));
  g_signal_emit (self, signals[SIGNAL_NODE_ACTIVATED], 0, name, reveal);
}

void
owb_page_show_layer (OwbPage *self, gpointer layer)
{
  g_return_if_fail (OWB_IS_PAGE (self));
  g_signal_emit (self, signals[SIGNAL_SHOW_LAYER], 0, layer);
}

/* ---- GObject ---- */

static gboolean
owb_page_real_get_busy (OwbPage *self)
{
  OwbPagePrivate *priv = owb_page_get_instance_private (self);
  return priv->cancellable != NULL;
}

static void
owb_page_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  OwbPage *self = OWB_PAGE (object);
  switch (prop_id)
    {
    case PROP_DOCUMENT:
      g_value_set_object (value, owb_page_get_document (self));
      break;
    case PROP_BUSY:
      g_value_set_boolean (value, owb_page_get_busy (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
owb_page_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  OwbPage *self = OWB_PAGE (object);
  switch (prop_id)
    {
    case PROP_DOCUMENT:
      owb_page_set_document (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* Runs when a page chains up, after it let go of what is its own: from here on a job's callback
 * finds the page disposed, and the work in flight is cancelled (its callback still comes, so the
 * cancellable stays until finalize). */
static void
owb_page_dispose (GObject *object)
{
  OwbPage *self = OWB_PAGE (object);
  OwbPagePrivate *priv = owb_page_get_instance_private (self);
  priv->disposed = TRUE;
  owb_page_set_error_label (self, NULL);
  owb_page_cancel (self);
  hold_document (self, NULL);
  G_OBJECT_CLASS (owb_page_parent_class)->dispose (object);
}

static void
owb_page_finalize (GObject *object)
{
  OwbPagePrivate *priv = owb_page_get_instance_private (OWB_PAGE (object));
  g_clear_object (&priv->cancellable);
  g_free (priv->error);
  G_OBJECT_CLASS (owb_page_parent_class)->finalize (object);
}

static void
owb_page_class_init (OwbPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = owb_page_get_property;
  object_class->set_property = owb_page_set_property;
  object_class->dispose = owb_page_dispose;
  object_class->finalize = owb_page_finalize;
  klass->get_busy = owb_page_real_get_busy;

  properties[PROP_DOCUMENT] = g_param_spec_object ("document", NULL, NULL, OWB_TYPE_DOCUMENT,
                                                   G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* TRUE while the page works (optimizing, running, loading an input, profiling, quantizing, saving). */
  properties[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                                                G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* "node-activated" (const char *name, gboolean reveal): see owb_page_activate_node. */
  signals[SIGNAL_NODE_ACTIVATED] = g_signal_new ("node-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                                 NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_BOOLEAN);
  /* "show-layer" (OwbGraphLayer *layer, or NULL): see owb_page_show_layer. */
  signals[SIGNAL_SHOW_LAYER] = g_signal_new ("show-layer", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                             NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
owb_page_init (OwbPage *self)
{
}
