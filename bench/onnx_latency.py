"""ONNX Runtime's batch-1 latency on a file `tickgrad export --format onnx` wrote: the peer of tickgrad_bench latency.

Usage: python bench/onnx_latency.py NAME MODEL.onnx [--calls N] [--warmup N]
Prints "NAME P50_US P99_US P99.9_US CALLS MEAN_US MAX_US" (nearest-rank percentiles, as tickgrad_bench), then
"NAME-floor ..." the same for a one-node Identity model of the same inputs' first input when the onnx package is
there: what a call through the Python binding costs before any model work.

ONNX Runtime is configured as its performance guide advises for single-stream latency: the CPU execution provider,
one intra-op and one inter-op thread, sequential execution, every graph optimisation on; the inputs (batch 1, standard
normals; int64 inputs 0) and the outputs are bound once with IOBinding, so each timed call is
session.run_with_iobinding alone, timed with time.perf_counter_ns. Pin the process (taskset) as tickgrad's side is.
"""
import argparse
import sys
import time

import numpy as np


def session(path):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def bound(sess):
    """IOBinding with batch-1 inputs for every input of sess, outputs on the CPU."""
    rng = np.random.default_rng(7)
    b = sess.io_binding()
    for i in sess.get_inputs():
        shape = [1 if not isinstance(d, int) else d for d in i.shape]
        if "int64" in i.type:
            arr = np.zeros(shape, dtype=np.int64)
        else:
            arr = rng.standard_normal(shape).astype(np.float32)
        b.bind_cpu_input(i.name, arr)
    for o in sess.get_outputs():
        b.bind_output(o.name, "cpu")
    return b


def percentiles(ns):
    us = np.sort(np.asarray(ns, dtype=np.float64) / 1000.0)
    rank = lambda q: us[min(len(us) - 1, max(0, int(np.ceil(q * len(us))) - 1))]
    return rank(0.5), rank(0.99), rank(0.999), len(us), us.mean(), us[-1]


def time_calls(sess, b, calls, warmup):
    for _ in range(warmup):
        sess.run_with_iobinding(b)
    ns = np.empty(calls, dtype=np.int64)
    clock = time.perf_counter_ns
    for k in range(calls):
        t0 = clock()
        sess.run_with_iobinding(b)
        ns[k] = clock() - t0
    return percentiles(ns)


def identity_model(path, sess):
    """A one-node Identity model over sess's first input, written to path; False without the onnx package."""
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError:
        return False
    i = sess.get_inputs()[0]
    elem = TensorProto.INT64 if "int64" in i.type else TensorProto.FLOAT
    shape = [d if isinstance(d, int) else "batch" for d in i.shape]
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "floor",
                          [helper.make_tensor_value_info("x", elem, shape)],
                          [helper.make_tensor_value_info("y", elem, shape)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("model")
    ap.add_argument("--calls", type=int, default=100000)
    ap.add_argument("--warmup", type=int, default=1000)
    a = ap.parse_args()
    sess = session(a.model)
    r = time_calls(sess, bound(sess), a.calls, a.warmup)
    print(f"{a.name} {r[0]:.3f} {r[1]:.3f} {r[2]:.3f} {r[3]} {r[4]:.3f} {r[5]:.3f}")
    floor = a.model + ".floor.onnx"
    if identity_model(floor, sess):
        fs = session(floor)
        r = time_calls(fs, bound(fs), min(a.calls, 20000), a.warmup)
        print(f"{a.name}-floor {r[0]:.3f} {r[1]:.3f} {r[2]:.3f} {r[3]} {r[4]:.3f} {r[5]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
