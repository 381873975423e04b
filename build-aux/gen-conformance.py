"""Writes ONNX's node conformance cases (defined in the onnx package's Python code) in the ONNX
test layout: OUT/node/<case>/model.onnx and test_data_set_N/{input,output}_K.pb.

onnx's own `cmd_tools generate-data` writes only the model cases in recent versions, so this
script collects the node cases itself. Usage: gen-conformance.py OUTDIR"""
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.case import node as node_cases


def proto_for(value, value_info):
    t = value_info.type
    if isinstance(value, onnx.TensorProto):
        return value
    if t.HasField("sequence_type"):
        return numpy_helper.from_list(value, value_info.name)
    if t.HasField("optional_type"):
        return numpy_helper.from_optional(value, value_info.name)
    if t.HasField("map_type"):
        return numpy_helper.from_dict(value, value_info.name)
    return numpy_helper.from_array(value, value_info.name)


def main():
    out = os.path.join(sys.argv[1], "node")
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    # Some cases draw random data while they are collected: seed it, so that every machine checks
    # the same numbers. Their float overflows and divisions by zero are on purpose.
    np.random.seed(0)
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    cases = node_cases.collect_testcases()
    for case in cases:
        d = os.path.join(tmp, case.name)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, f"test_data_set_{i}")
            os.makedirs(ds)
            for kind, values, infos in (("input", inputs, case.model.graph.input),
                                        ("output", outputs, case.model.graph.output)):
                for j, v in enumerate(values):
                    with open(os.path.join(ds, f"{kind}_{j}.pb"), "wb") as f:
                        f.write(proto_for(v, infos[j]).SerializeToString())
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    print(f"{len(cases)} node cases written to {out} (onnx {onnx.__version__})")


if __name__ == "__main__":
    main()
