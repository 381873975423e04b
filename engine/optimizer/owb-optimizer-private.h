/* owb-optimizer-private.h: what only the optimizer's own runner sees: the context's lifetime and
 * the engine's list of passes. The pass contract itself is public, in owb/owb-pass.h. */
#pragma once

#include <owb/owb-pass.h>

/* One context serves every pass of an optimization: its indexes stay exact across passes (all
 * edits go through the helpers; inference between passes only reorders nodes and adds types).
 * end_pass frees the nodes the pass removed and drops what inference changes (the value-info
 * index); clear frees everything. */
void _owb_pass_context_end_pass (OwbPassContext *ctx);
void _owb_pass_context_clear (OwbPassContext *ctx);

/* The passes, in the order they run. */
extern const OwbPass *const _owb_passes[];
extern const guint _owb_n_passes;

/* Runs a node whose inputs are all constants alone, on the options' providers (its own kernel, as
 * a session would run it); on success fills values[o] for every non-empty output (new
 * references). Constant folding's evaluator, shared with the passes that fold one op kind. */
gboolean _owb_pass_evaluate_node (OwbPassContext *ctx, const OwbNode *node, OwbTensor **values, GError **error);
