/* owb-tensor-compare.h: whether a computed value matches an expected one within a tolerance, as
 * `owb check`, the conformance test and the app's Run page decide it, and by how much they differ. */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb-tensor.h>

G_BEGIN_DECLS

typedef struct {
  int64_t n_elements;    /* elements of the tensors compared (sequences: of all their tensors) */
  double max_abs_error;  /* largest |got - expected| over pairs of finite numbers (bools and
                          * integers included) */
  double max_rel_error;  /* largest |got - expected| / |expected| over the same pairs; infinite
                          * where expected is 0 and got is not */
} OwbTensorComparison;

/* Compares two values (tensors, or sequences/optionals/maps of them). Floating point passes when
 * |got - expected| <= atol + rtol * |expected| for every element, NaN equal to NaN, infinities
 * only equal to themselves; integers, bools and strings exactly; element types and shapes must
 * match. FALSE with *message (may be NULL) saying where they first differ ("at index 5 [0,1,1]:
 * expected 0.5, got 0.25 (3 of 60 elements differ, largest difference 0.3, rtol 0.001 atol 1e-05)").
 * result (may be NULL) receives the largest errors of the elements that could be paired, whether
 * or not they pass; all zero when types or shapes differ. got may be NULL (no value). */
OWB_API gboolean owb_tensor_compare (const OwbTensor *expected, const OwbTensor *got, double rtol, double atol,
                             OwbTensorComparison *result, char **message);

G_END_DECLS
