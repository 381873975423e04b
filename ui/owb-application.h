/* owb-application.h: the workbench application: windows, app actions, shortcuts, about. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define OWB_TYPE_APPLICATION (owb_application_get_type ())
G_DECLARE_FINAL_TYPE (OwbApplication, owb_application, OWB, APPLICATION, AdwApplication)

OwbApplication *owb_application_new (void);

/* For main(), after setlocale: binds the translation domain to OWB_LOCALEDIR. (The definitions it
 * needs are given to ui/ by meson, not to app/.) */
void owb_application_bind_textdomain (void);
/* For main(), first thing: when the running executable is in a build tree that compiled the
 * schema (build/app/onnx-workbench → build/data), points GSETTINGS_SCHEMA_DIR there. */
void owb_application_use_build_tree_schema (void);

G_END_DECLS
