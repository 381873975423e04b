/* owb-ops-private.h: the schema tables of each op family, gathered by owb-op-registry.c. Each
 * table ends with a row whose op_type is NULL. */
#pragma once

#include <owb/owb-op.h>

extern const OwbOpSchema _owb_ops_elementwise[];
extern const OwbOpSchema _owb_ops_nn[];
extern const OwbOpSchema _owb_ops_tensor[];
extern const OwbOpSchema _owb_ops_reduce[];
extern const OwbOpSchema _owb_ops_rnn[];
extern const OwbOpSchema _owb_ops_norm[];
extern const OwbOpSchema _owb_ops_fused_transformer[];
extern const OwbOpSchema _owb_ops_fused[];
extern const OwbOpSchema _owb_ops_ml[];
extern const OwbOpSchema _owb_ops_control[];
extern const OwbOpSchema _owb_ops_signal[];
extern const OwbOpSchema _owb_ops_quant[];
extern const OwbOpSchema _owb_ops_misc[];
extern const OwbOpSchema _owb_ops_transformer[];
extern const OwbOpSchema _owb_ops_layout[];
