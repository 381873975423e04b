/* onnx-workbench.c: the desktop app's entry point: locale and translations, then the application. */
#include <locale.h>

#include "owb-application.h"

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  /* bindtextdomain, bind_textdomain_codeset and textdomain, with the domain and folder meson
   * defines for ui/. */
  owb_application_bind_textdomain ();
  /* Run from a build tree, use the schema compiled there (before anything reads GSettings). */
  owb_application_use_build_tree_schema ();

  g_autoptr (OwbApplication) application = owb_application_new ();
  return g_application_run (G_APPLICATION (application), argc, argv);
}
