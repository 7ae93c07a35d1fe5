/* tickgrad: the whole public API. */
#ifndef TICKGRAD_H
#define TICKGRAD_H

#include "tickgrad/status.h"
#include "tickgrad/version.h"
#include "tickgrad/tensor.h"
#include "tickgrad/rng.h"
#include "tickgrad/graph.h"
#include "tickgrad/optim.h"
#include "tickgrad/checkpoint.h"
#include "tickgrad/data.h"
#include "tickgrad/dataset.h"
#include "tickgrad/synth.h"
#include "tickgrad/ticks.h"
#include "tickgrad/device.h"
#include "tickgrad/telemetry.h"
#include "tickgrad/step.h"
#include "tickgrad/models.h"
#include "tickgrad/train.h"
#include "tickgrad/evaluate.h"
#include "tickgrad/rl.h"
#include "tickgrad/rl_agents.h"
#include "tickgrad/agents.h"
#include "tickgrad/agent_run.h"
#include "tickgrad/backtest.h"
#include "tickgrad/report.h"
#include "tickgrad/predictor.h"
#include "tickgrad/export.h"
#include "tickgrad/dist.h"
#include "tickgrad/eval.h"

#endif
