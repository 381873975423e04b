/* owb.h: libowb, the ONNX Workbench engine: load, inspect, run and save ONNX models. */
#pragma once

#include <owb/owb-error.h>
#include <owb/owb-types.h>
#include <owb/owb-tensor.h>
#include <owb/owb-tensor-stats.h>
#include <owb/owb-tensor-compare.h>
#include <owb/owb-graph.h>
#include <owb/owb-model-io.h>
#include <owb/owb-op.h>
#include <owb/owb-provider.h>
#include <owb/owb-parallel.h>
#include <owb/owb-providers.h>
#include <owb/owb-validate.h>
#include <owb/owb-session.h>
#include <owb/owb-optimizer.h>
#include <owb/owb-json.h>
