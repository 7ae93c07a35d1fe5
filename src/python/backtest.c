/* tickgrad._core: backtests, walk-forward and sweeps. */
#include "python/core.h"

PyMethodDef tgpy_backtest_methods[] = {
    {NULL, NULL, 0, NULL},
};
