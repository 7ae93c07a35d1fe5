/* Comparing a model with its PyTorch twin's reference file: tensors by name, config integers, relative errors. */
#ifndef TG_TEST_REFERENCE_H
#define TG_TEST_REFERENCE_H

#include <stdint.h>
#include "base/json.h"
#include "tickgrad/tickgrad.h"

/* The tensor called name in f; a failed check (and NULL) when it is missing. */
const tg_tensor *tg_test_ref_need(const tg_safetensors *f, const char *name);
/* The integer o[key]; a failed check (and 0) when it is missing or not an integer. */
int64_t tg_test_json_int(const tg_json *o, const char *key);
/* max |got - want| / max |want| over the tensor (0 when both are all zero; a NaN difference is infinite). */
double tg_test_rel_err(const float *got, const tg_tensor *want);
/* A failed check naming what when tg_test_rel_err(got, want) exceeds tol; the error (infinite when got or want is NULL). */
double tg_test_ref_check(const char *what, const float *got, const tg_tensor *want, double tol);
/* Every parameter gradient of s against f's "grad.<name>" within tol; the worst relative error (its parameter's name into
 * worst_name[n] when not NULL). */
double tg_test_ref_check_grads(tg_store *s, const tg_safetensors *f, double tol, char *worst_name, size_t n);
/* Copies every "init.<name>" of f into s's parameter values; 1 when each parameter had one of the same shape (a
 * failed check names each that differs). */
int tg_test_ref_load_params(tg_store *s, const tg_safetensors *f);
/* Parameter values in the store (its flat buffer also holds alignment padding). */
long long tg_test_param_count(const tg_store *s);

#endif
