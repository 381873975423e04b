#!/usr/bin/env python3
"""Trains small, seeded scikit-learn models, converts them with skl2onnx and writes each as an ONNX
test-layout case (model.onnx + test_data_set_0/input_K.pb, output_K.pb holding scikit-learn's own
predictions) under tests/ml/cases/<name>/. Classifiers are converted with zipmap=False (probabilities as a
tensor), except the *_zipmap* cases, which keep skl2onnx's default ZipMap output (a sequence of maps).

Needs scikit-learn, skl2onnx, onnx and numpy (pandas for the ColumnTransformer case), e.g.
    python3 -m venv /tmp/skl-venv
    /tmp/skl-venv/bin/pip install scikit-learn skl2onnx onnx==1.23.2 numpy pandas
    /tmp/skl-venv/bin/python tests/ml/make-sklearn-models.py [OUT_DIR]

Then: owb check tests/ml/cases/* --rtol 0 --atol 1e-5
Labels must match exactly; probabilities and regression values within 1e-5.
"""

import os
import shutil
import sys
import warnings

import numpy as np
import onnx
from onnx import numpy_helper

from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_iris, make_classification
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC
from skl2onnx import convert_sklearn
from skl2onnx.common.data_types import FloatTensorType, StringTensorType

SEED = 0
# Small, fixed opsets so the cases do not change with the converter's defaults.
TARGET_OPSET = {"": 17, "ai.onnx.ml": 3}
MAX_MODEL_BYTES = 200 * 1024


def f32(a):
    """Rounds to float32 values so that scikit-learn (float64) and the ONNX model (float32 input)
    see the very same numbers."""
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def split(x, y, n_test, rng):
    order = rng.permutation(len(x))
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def write_case(out_dir, name, model, inputs, outputs):
    """inputs/outputs: lists of (name, numpy array) in graph order."""
    case = os.path.join(out_dir, name)
    if os.path.isdir(case):
        shutil.rmtree(case)
    data = os.path.join(case, "test_data_set_0")
    os.makedirs(data)
    # skl2onnx names graphs with a random uuid: a fixed name keeps regenerated files identical.
    model.graph.name = name
    # ... and lists opset imports in set order; sort them too.
    imports = sorted(((o.domain, o.version) for o in model.opset_import))
    del model.opset_import[:]
    for domain, version in imports:
        model.opset_import.add(domain=domain, version=version)
    blob = model.SerializeToString()
    if len(blob) > MAX_MODEL_BYTES:
        raise SystemExit(f"{name}: model is {len(blob)} bytes, over {MAX_MODEL_BYTES}")
    with open(os.path.join(case, "model.onnx"), "wb") as f:
        f.write(blob)
    graph_inputs = [i.name for i in model.graph.input]
    graph_outputs = [o.name for o in model.graph.output]
    if [n for n, _ in inputs] != graph_inputs:
        raise SystemExit(f"{name}: inputs {graph_inputs}, expected {[n for n, _ in inputs]}")
    if [n for n, _ in outputs] != graph_outputs:
        raise SystemExit(f"{name}: outputs {graph_outputs}, expected {[n for n, _ in outputs]}")
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for k, (tname, value) in enumerate(tensors):
            if isinstance(value, onnx.SequenceProto):
                t = value
                t.name = tname
            else:
                t = numpy_helper.from_array(value, tname)
            with open(os.path.join(data, f"{kind}_{k}.pb"), "wb") as f:
                f.write(t.SerializeToString())
    ops = sorted({f"{n.domain or 'ai.onnx'}:{n.op_type}" for n in model.graph.node})
    print(f"{name}: {len(blob)} bytes, {', '.join(ops)}")


def tree_ensemble5_model(gbr, n_features):
    """A GradientBoostingRegressor as ai.onnx.ml TreeEnsemble (opset 5) + Add, splits in double."""
    from onnx import TensorProto, helper

    feat, splits, true_ids, true_leaf, false_ids, false_leaf = [], [], [], [], [], []
    roots, leaf_weights = [], []
    for est in gbr.estimators_[:, 0]:
        tree = est.tree_
        interior = {}
        leaves = {}
        for i in range(tree.node_count):
            if tree.children_left[i] == -1:
                leaves[i] = len(leaf_weights) + len(leaves)
            else:
                interior[i] = len(feat) + len(interior)
        # Leaves first so that indexes are known; interior nodes in scikit-learn's order.
        for i in sorted(leaves):
            leaf_weights.append(float(tree.value[i].ravel()[0]) * gbr.learning_rate)
        for i in sorted(interior):
            left, right = tree.children_left[i], tree.children_right[i]
            feat.append(int(tree.feature[i]))
            splits.append(float(tree.threshold[i]))
            true_leaf.append(int(left in leaves))
            true_ids.append(leaves[left] if left in leaves else interior[left])
            false_leaf.append(int(right in leaves))
            false_ids.append(leaves[right] if right in leaves else interior[right])
        roots.append(interior[0])
    n = len(feat)
    node = helper.make_node(
        "TreeEnsemble",
        ["input"],
        ["raw"],
        domain="ai.onnx.ml",
        n_targets=1,
        aggregate_function=1,
        post_transform=0,
        tree_roots=roots,
        nodes_featureids=feat,
        nodes_splits=helper.make_tensor("s", TensorProto.DOUBLE, [n], splits),
        nodes_modes=helper.make_tensor("m", TensorProto.UINT8, [n], [0] * n),
        nodes_truenodeids=true_ids,
        nodes_trueleafs=true_leaf,
        nodes_falsenodeids=false_ids,
        nodes_falseleafs=false_leaf,
        leaf_targetids=[0] * len(leaf_weights),
        leaf_weights=helper.make_tensor("w", TensorProto.DOUBLE, [len(leaf_weights)], leaf_weights),
    )
    init = float(np.ravel(gbr.init_.predict(np.zeros((1, n_features))))[0])
    base = numpy_helper.from_array(np.array([[init]], dtype=np.float64), "base")
    add = helper.make_node("Add", ["raw", "base"], ["variable"])
    graph = helper.make_graph(
        [node, add],
        "gbr_tree_ensemble5",
        [helper.make_tensor_value_info("input", TensorProto.DOUBLE, [None, n_features])],
        [helper.make_tensor_value_info("variable", TensorProto.DOUBLE, [None, 1])],
        [base],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


def classifier_outputs(clf, x, label_dtype):
    labels = clf.predict(x)
    labels = labels.astype(object) if label_dtype == "str" else labels.astype(np.int64)
    return [("label", labels), ("probabilities", clf.predict_proba(x).astype(np.float32))]


def sequence_of_maps(classes, probabilities):
    """ZipMap's output as test data: a SequenceProto of one MapProto per row, class label -> float
    probability, values as one-element tensors (the layout onnx.numpy_helper.from_dict writes,
    built by hand because from_dict cannot take string keys)."""
    seq = onnx.SequenceProto(elem_type=onnx.SequenceProto.MAP)
    strings = classes.dtype.kind in "OUS"
    for row in probabilities.astype(np.float32):
        m = seq.map_values.add()
        if strings:
            m.key_type = onnx.TensorProto.STRING
            m.string_keys.extend(str(c).encode() for c in classes)
        else:
            m.key_type = onnx.TensorProto.INT64
            m.keys.extend(int(c) for c in classes)
        m.values.elem_type = onnx.SequenceProto.TENSOR
        m.values.tensor_values.extend(numpy_helper.from_array(np.array(v, dtype=np.float32)) for v in row)
    return seq


def zipmap_case(out_dir, name, clf, x_test, label_dtype):
    """Converted with skl2onnx's default options: probabilities leave through ZipMap."""
    onx = convert_sklearn(clf, initial_types=[("input", FloatTensorType([None, x_test.shape[1]]))],
                          target_opset=TARGET_OPSET)
    label, proba = classifier_outputs(clf, x_test, label_dtype)
    outputs = [("output_label", label[1]), ("output_probability", sequence_of_maps(clf.classes_, proba[1]))]
    write_case(out_dir, name, onx, [("input", x_test.astype(np.float32))], outputs)


def convert(model, initial_types):
    return convert_sklearn(
        model,
        initial_types=initial_types,
        target_opset=TARGET_OPSET,
        options={id(model): {"zipmap": False}} if hasattr(model, "predict_proba") else None,
    )


def float_case(out_dir, name, model, x_test, outputs):
    onx = convert(model, [("input", FloatTensorType([None, x_test.shape[1]]))])
    write_case(out_dir, name, onx, [("input", x_test.astype(np.float32))], outputs)


def main():
    # SVC(probability=True) is deprecated from scikit-learn 1.9 on but still what users export.
    warnings.filterwarnings("ignore", category=FutureWarning)
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.RandomState(SEED)

    iris = load_iris()
    x_iris = f32(iris.data)
    xi_train, yi_train, xi_test, yi_test = split(x_iris, iris.target, 30, rng)

    xb, yb = make_classification(
        n_samples=300, n_features=6, n_informative=4, n_redundant=1, random_state=SEED
    )
    xb = f32(xb)
    xb_train, yb_train, xb_test, yb_test = split(xb, yb, 40, rng)
    yb_names = np.array(["no", "yes"], dtype=object)

    # Random forest, three classes, integer labels.
    rf = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=SEED).fit(xi_train, yi_train)
    float_case(out_dir, "random_forest_classifier", rf, xi_test, classifier_outputs(rf, xi_test, "int"))

    # Random forest, two classes, string labels.
    rfb = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=SEED).fit(
        xb_train, yb_names[yb_train]
    )
    float_case(out_dir, "random_forest_classifier_binary_strings", rfb, xb_test, classifier_outputs(rfb, xb_test, "str"))

    # Gradient boosting regressor on a smooth target of moderate size.
    xr = f32(rng.uniform(-2, 2, size=(400, 5)))
    yr = np.sin(xr[:, 0]) + 0.5 * xr[:, 1] * xr[:, 2] - 0.3 * xr[:, 3] ** 2 + 0.1 * rng.normal(size=len(xr))
    xr_train, yr_train, xr_test, _ = split(xr, yr, 40, rng)
    gbr = GradientBoostingRegressor(n_estimators=10, max_depth=3, random_state=SEED).fit(xr_train, yr_train)
    float_case(
        out_dir,
        "gradient_boosting_regressor",
        gbr,
        xr_test,
        [("variable", gbr.predict(xr_test).astype(np.float32).reshape(-1, 1))],
    )

    # The same regressor written by hand as one TreeEnsemble node (ai.onnx.ml 5, which skl2onnx does not
    # emit yet) on double inputs, plus an Add for the initial prediction.
    write_case(out_dir, "tree_ensemble5_gradient_boosting", tree_ensemble5_model(gbr, xr.shape[1]),
               [("input", xr_test.astype(np.float64))],
               [("variable", gbr.predict(xr_test).astype(np.float64).reshape(-1, 1))])

    # Gradient boosting classifiers: multiclass (softmax) and binary (logistic on one score).
    gbc = GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=SEED).fit(xi_train, yi_train)
    float_case(out_dir, "gradient_boosting_classifier", gbc, xi_test, classifier_outputs(gbc, xi_test, "int"))
    gbcb = GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=SEED).fit(xb_train, yb_train)
    float_case(out_dir, "gradient_boosting_classifier_binary", gbcb, xb_test, classifier_outputs(gbcb, xb_test, "int"))

    # Logistic regression: multinomial and binary.
    lr = LogisticRegression(max_iter=500).fit(xi_train, yi_train)
    float_case(out_dir, "logistic_regression", lr, xi_test, classifier_outputs(lr, xi_test, "int"))
    lrb = LogisticRegression(max_iter=500).fit(xb_train, yb_train)
    float_case(out_dir, "logistic_regression_binary", lrb, xb_test, classifier_outputs(lrb, xb_test, "int"))

    # The same classifiers with skl2onnx's default zipmap=True: a sequence of {label: probability} maps.
    zipmap_case(out_dir, "logistic_regression_zipmap", lr, xi_test, "int")
    zipmap_case(out_dir, "random_forest_zipmap_strings", rfb, xb_test, "str")

    # SVC with Platt-scaled probabilities (libsvm's pairwise coupling for three classes).
    svc = SVC(probability=True, random_state=SEED).fit(xi_train, yi_train)
    float_case(out_dir, "svc_probability", svc, xi_test, classifier_outputs(svc, xi_test, "int"))

    # Pipeline: scaled numeric columns and one-hot string columns into a logistic regression.
    import pandas as pd

    n = 300
    num = f32(rng.normal(size=(n, 3)))
    colour = rng.choice(["red", "green", "blue"], size=n)
    size = rng.choice(["S", "M", "L", "XL"], size=n)
    score = num[:, 0] - 0.5 * num[:, 1] + (colour == "red") * 1.5 - (size == "S") + 0.3 * rng.normal(size=n)
    y = np.digitize(score, [-0.5, 0.8])
    frame = pd.DataFrame({"a": num[:, 0], "b": num[:, 1], "c": num[:, 2], "colour": colour, "size": size})
    train, test = frame.iloc[40:], frame.iloc[:40]
    pipe = Pipeline(
        [
            (
                "columns",
                ColumnTransformer(
                    [
                        ("num", StandardScaler(), ["a", "b", "c"]),
                        ("cat", OneHotEncoder(handle_unknown="ignore"), ["colour", "size"]),
                    ]
                ),
            ),
            ("classifier", LogisticRegression(max_iter=500)),
        ]
    ).fit(train, y[40:])
    initial_types = [
        ("a", FloatTensorType([None, 1])),
        ("b", FloatTensorType([None, 1])),
        ("c", FloatTensorType([None, 1])),
        ("colour", StringTensorType([None, 1])),
        ("size", StringTensorType([None, 1])),
    ]
    onx = convert_sklearn(
        pipe, initial_types=initial_types, target_opset=TARGET_OPSET, options={id(pipe): {"zipmap": False}}
    )
    inputs = [
        (c, test[c].to_numpy().astype(np.float32 if c in "abc" else object).reshape(-1, 1))
        for c in ("a", "b", "c", "colour", "size")
    ]
    write_case(out_dir, "pipeline_column_transformer", onx, inputs, classifier_outputs(pipe, test, "int"))


if __name__ == "__main__":
    main()
