/* tickgrad._core: a run's predictor, bar by bar or over a series. */
#include "python/core.h"

PyMethodDef tgpy_predict_methods[] = {
    {NULL, NULL, 0, NULL},
};

int tgpy_predict_types(PyObject *m) {
  (void)m;
  return 0;
}
