/* tickgrad._core: the environments (CartPole, the trading market), stepped into arrays shared with Python. */
#include "python/core.h"

PyMethodDef tgpy_env_methods[] = {
    {NULL, NULL, 0, NULL},
};

int tgpy_env_types(PyObject *m) {
  (void)m;
  return 0;
}
