/* owb-qdq-display.h: what the graph view shows of a QDQ model with its QuantizeLinear /
 * DequantizeLinear pairs collapsed (GTK-free): a display copy of the model in which every node reads
 * the float tensor a pair wrapped (and a weight stored quantized directly), with a badge per node
 * saying what it reads and writes quantized ("u8, s8 ← / → u8"). The model itself is not edited. */
#pragma once

#include <owb/owb.h>

G_BEGIN_DECLS

/* The string attribute a display copy puts on a node for the scene to show as the first line of
 * its box (owb-scene-text.c), so that the box is laid out wide enough for it: the badge. */
#define OWB_SCENE_NOTE_ATTRIBUTE "owb:display-note"

typedef struct _OwbQdqDisplay OwbQdqDisplay;

/* A display copy of `model` (borrowed for the call; initializers are shared, not copied). */
OwbQdqDisplay *owb_qdq_display_new (const OwbModel *model);
OwbQdqDisplay *owb_qdq_display_ref (OwbQdqDisplay *display);
void owb_qdq_display_unref (OwbQdqDisplay *display);
/* The copy with the pairs taken out (borrowed; lives as long as the display). */
OwbModel *owb_qdq_display_get_model (OwbQdqDisplay *display);
/* The badge of a node of the copy: "u8 ←" (reads u8-quantized inputs), "→ u8" (its output is
 * quantized to u8), both joined by " / ", or NULL when no pair touched it. Borrowed. The copy's
 * node also carries it as its OWB_SCENE_NOTE_ATTRIBUTE. */
const char *owb_qdq_display_get_badge (OwbQdqDisplay *display, const OwbNode *node);
/* QuantizeLinear and DequantizeLinear nodes taken out. */
guint owb_qdq_display_get_n_hidden (OwbQdqDisplay *display);

/* A quantized type as badges and the Quantize page write it: "u8", "s8", "u16", "s16", "s32", else
 * the type's own name. Static. */
const char *owb_qdq_display_short_type (OwbDataType type);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbQdqDisplay, owb_qdq_display_unref)

G_END_DECLS
