#!/usr/bin/env python3
"""test-calibration-reference.py: the ranges `owb quantize` calibrates, against references computed
here with numpy from the same samples: minmax exactly, percentile and entropy (the TensorRT KL
method, written independently on numpy's histogram) to a histogram bin, mse by its true
quantization error against a direct search. The calibrated tensor is the sample model's input, so
the reference sees exactly the values the calibration saw. Also: the statistics' size does not
grow with the sample count.

Usage: test-calibration-reference.py OWB MODEL (needs numpy: Debian's python3-numpy)."""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    # The build may have found another python3 than the system one that has numpy.
    if os.path.exists("/usr/bin/python3") and sys.executable != "/usr/bin/python3" and not os.environ.get("OWB_REEXEC"):
        os.environ["OWB_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    sys.exit("test-calibration-reference.py needs numpy (apt-get install python3-numpy)")

OWB, MODEL = sys.argv[1:3]
TMP = tempfile.mkdtemp(prefix="owb-calref-")
N_SAMPLES = 24
BINS = 2048  # per side of 0, as libowb-quant keeps them (OWB_QUANT_HISTOGRAM_BINS / 2)


def write_samples():
    rng = np.random.RandomState(11)
    data = []
    for k in range(N_SAMPLES):
        # A Laplace bulk (heavier tails than a Gaussian) with a few spikes, shifted so the range is
        # asymmetric; sample 0 holds the largest |x|, so the streamed histogram's range is fixed
        # from the first sample and its bins are numpy's.
        x = rng.laplace(0.2, 0.5, size=(1, 3, 32, 32)).astype(np.float32)
        if k < 2:  # rare spikes (6 values in 73,728): outliers that entropy may clip
            x.flat[rng.randint(0, x.size, 3)] = rng.uniform(3, 6, 3)
        if k == 0:
            x.flat[7] = -9.0
        d = os.path.join(TMP, "cal", f"test_data_set_{k}")
        os.makedirs(d)
        np.save(os.path.join(d, "input_0.npy"), x)
        data.append(x)
    return np.concatenate([x.ravel() for x in data])


def quantize(method, samples=None, percentile=None):
    report = os.path.join(TMP, f"report-{method}-{samples}-{percentile}.json")
    args = [OWB, "quantize", MODEL, "-o", os.path.join(TMP, "q.onnx"), "--calibration-dir", os.path.join(TMP, "cal"),
            "--method", method, "--report-json", report, "-q"]
    if samples:
        args += ["--samples", str(samples)]
    if percentile:
        args += ["--percentile", str(percentile)]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"{' '.join(args)}: exit {p.returncode}\n{p.stderr}"
    with open(report) as f:
        rep = json.load(f)
    feed = [t for t in rep["tensors"] if t["name"] == "image"]
    assert feed, f"the input was not quantized: {[t['name'] for t in rep['tensors']]}"
    return rep, feed[0]


def clip_range(x, t):
    return min(max(float(x.min()), -t), 0.0), max(min(float(x.max()), t), 0.0)


def entropy_threshold(x, levels, max_clipped=1e-4):
    """The TensorRT method, on numpy's histogram of |x| over [0, max|x|], among the thresholds that
    clip at most a max_clipped share of the values (owb's guard against clipping signal)."""
    a = np.abs(x)
    hist, edges = np.histogram(a, bins=BINS, range=(0, float(a.max())))
    hist = hist.astype(np.float64)
    used = int(np.nonzero(hist)[0].max()) + 1
    best, best_kl = used, np.inf
    for i in range(levels, used + 1):
        if hist[i:].sum() > max_clipped * hist.sum():
            continue
        p = hist[:i].copy()
        p[i - 1] += hist[i:].sum()
        q = np.zeros(i)
        bounds = (np.arange(levels + 1) * i) // levels
        for g in range(levels):
            s, e = bounds[g], bounds[g + 1]
            chunk = hist[s:e]
            nz = chunk > 0
            if nz.any():
                q[s:e][nz] = chunk.sum() / nz.sum()
        pn, qn = p / p.sum(), q / q.sum()
        m = pn > 0
        kl = np.sum(pn[m] * np.log(pn[m] / np.where(qn[m] > 0, qn[m], 1e-10)))
        if kl < best_kl:
            best_kl, best = kl, i
    return best * edges[1]


def fake_quant_mse(x, lo, hi):
    scale = (hi - lo) / 255
    zp = np.round(-lo / scale)
    q = np.clip(np.round(x / scale) + zp, 0, 255)
    return float(np.mean(((q - zp) * scale - x) ** 2))


def main():
    x = write_samples()
    absmax = float(np.abs(x).max())
    width = absmax / BINS
    failures = []

    def check(what, cond, detail):
        print(("ok   " if cond else "FAIL ") + f"{what}: {detail}")
        if not cond:
            failures.append(what)

    _, t = quantize("minmax")
    f32 = lambda v: float(np.float32(v))  # the report prints float32 values to 9 digits
    check("minmax", [f32(v) for v in t["range"]] == [f32(min(x.min(), 0)), f32(max(x.max(), 0))],
          f"{t['range']} vs [{x.min()}, {x.max()}]")
    scale = (t["range"][1] - t["range"][0]) / 255
    check("minmax scale/zero point", abs(t["scale"] - scale) <= 1e-6 * scale
          and t["zero_point"] == int(np.round(-t["range"][0] / scale)), f"{t['scale']} {t['zero_point']}")

    # The percentile is the smallest |x| with that share of the values at or below it (numpy's
    # "higher"), to the bin: the default 99.999 keeps all but the largest here, 99.9 clips the spikes.
    for p in (None, 99.9):
        _, t = quantize("percentile", percentile=p)
        ref = clip_range(x, float(np.percentile(np.abs(x), p or 99.999, method="higher")))
        check(f"percentile {p or 'default'}",
              abs(t["range"][0] - ref[0]) <= 2 * width and abs(t["range"][1] - ref[1]) <= 2 * width,
              f"{t['range']} vs numpy {ref} (bin {width:.4g})")

    _, t = quantize("entropy")
    ref = clip_range(x, entropy_threshold(x, 128))
    check("entropy", abs(t["range"][0] - ref[0]) <= 2 * width and abs(t["range"][1] - ref[1]) <= 2 * width,
          f"{t['range']} vs numpy {ref}")
    check("entropy clips the spikes", t["range"][1] < float(x.max()) and t["range"][0] > float(x.min()),
          f"{t['range']} inside [{x.min()}, {x.max()}]")

    _, t = quantize("mse")
    ours = fake_quant_mse(x, *t["range"])
    best = min(fake_quant_mse(x, *clip_range(x, j * width * 4)) for j in range(1, BINS // 4 + 1))
    check("mse", ours <= best * 1.05, f"true MSE {ours:.5g} at {t['range']}, best of a direct search {best:.5g}")

    small, _ = quantize("entropy", samples=4)
    large, _ = quantize("entropy", samples=N_SAMPLES)
    check("streamed statistics", small["calibration_bytes"] == large["calibration_bytes"],
          f"{small['calibration_bytes']} bytes for 4 samples, {large['calibration_bytes']} for {N_SAMPLES}")
    if failures:
        sys.exit(f"{len(failures)} failed: {', '.join(failures)}")


if __name__ == "__main__":
    main()
