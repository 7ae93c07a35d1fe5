/* tickgrad._core: training runs (forecasters and agents) with the GIL released. */
#include "python/core.h"

PyMethodDef tgpy_train_methods[] = {
    {NULL, NULL, 0, NULL},
};
