#!/usr/bin/env python3
"""The GEMM library alone, accubench's against PyTorch's, shape by shape:
build/gemm-bench (cpu_sgemm: oneDNN or OpenBLAS inside the backend's cut between
threads) and torch.mm (MKL in the pip wheels) on the same shapes, in
alternating rounds, each side the median of --reps calls a shape a round.
Prints per shape each side's median over the rounds and the ratio (torch
ms / accubench ms: above 1, accubench's GEMM is faster), then the sum.

The shapes are the run CSV's (`gemm_shapes`, the costliest of a step's
counting pass), or given:

  bench/peers/peer_gemm.py --csv results/run.csv [--row N]
  bench/peers/peer_gemm.py --shapes 128x1024x512:TN,512x1024x128:NN
"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import peer_csv  # noqa: E402

SHAPE = re.compile(r"^(\d+)x(\d+)x(\d+)(?::([NT])([NT]))?$")
CSV_SHAPE = re.compile(r"^(\d+)x(\d+)x(\d+)( x\d+)? ([NT])([NT]):")


class ShapeError(ValueError):
    """A shape that is not MxNxK[:TT]."""


def parse_shape(text):
    """'MxNxK[:TT]' -> (m, n, k, 'TT')."""
    m = SHAPE.match(text.strip())
    if not m:
        raise ShapeError(f"shape '{text}' is not MxNxK[:TT] (TT: N or T for A, then B)")
    return int(m[1]), int(m[2]), int(m[3]), (m[4] or "N") + (m[5] or "N")


def shapes_of_row(gemm_shapes):
    """The single products named in a row's gemm_shapes cell ('; '-separated
    'MxNxK TT: calls/step ms pct'). Left out: 'N more' and 'other shapes',
    which name none, and batched products ('MxNxK xB TT:'), which the
    backend cuts by products, not as gemm-bench's one product."""
    out = []
    for item in gemm_shapes.split("; "):
        m = CSV_SHAPE.match(item.strip())
        if m and not m[4]:
            out.append((int(m[1]), int(m[2]), int(m[3]), m[5] + m[6]))
    return out


def shapes_of_csv(path, row):
    _, header, lines = peer_csv.read_csv(path)
    rows = [dict(zip(header, fields)) for fields in csv.reader(lines)]  # quoted specs
    if not rows:
        raise ShapeError(f"{path}: no rows")
    if row >= len(rows):
        raise ShapeError(f"{path}: --row {row}, but the file has {len(rows)} rows")
    shapes = shapes_of_row(rows[row].get("gemm_shapes", ""))
    if not shapes:
        raise ShapeError(f"{path}: row {row} has no gemm_shapes (no counting pass)")
    return shapes


def torch_median_ms(torch, shape, reps):
    """torch.mm on a column-major product: C (m x n) = op(A) op(B) is, row
    major, C^T (n x m) = op(B)^T op(A)^T, each operand stored as the
    column-major one would be."""
    m, n, k, t = shape
    a = torch.randn(k, m) if t[0] == "N" else torch.randn(m, k).t()
    b = torch.randn(n, k) if t[1] == "N" else torch.randn(k, n).t()
    c = torch.empty(n, m)
    torch.mm(b, a, out=c)  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.mm(b, a, out=c)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def accubench_medians_ms(gemm_bench, shapes, reps, env):
    args = [gemm_bench, "--reps", str(reps)] + [f"{m}x{n}x{k}:{t}" for m, n, k, t in shapes]
    out = subprocess.run(args, capture_output=True, text=True, env=env, check=True).stdout
    medians = [float(re.search(r"median ([0-9.]+) ms", l)[1])
               for l in out.splitlines() if not l.startswith("#")]
    blas = next((l[2:] for l in out.splitlines() if l.startswith("#")), "")
    return medians, blas


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gemm-bench", default=os.path.join(ROOT, "build", "gemm-bench"))
    p.add_argument("--csv", help="take the shapes from this run CSV's gemm_shapes")
    p.add_argument("--row", type=int, default=0, help="the CSV's row (default 0, the first)")
    p.add_argument("--shapes", help="comma list of MxNxK[:TT]")
    p.add_argument("--reps", type=int, default=51, help="calls a shape a round, each side")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    p.add_argument("--threads", type=int, default=0, help="both sides' threads (default: each "
                   "side's own default)")
    a = p.parse_args(argv)
    try:
        if bool(a.csv) == bool(a.shapes):
            raise ShapeError("give the shapes with --csv FILE or --shapes LIST, one of them")
        if a.reps < 1 or a.rounds < 1:
            raise ShapeError("--reps and --rounds must be 1 or more")
        shapes = shapes_of_csv(a.csv, a.row) if a.csv else \
            [parse_shape(s) for s in a.shapes.split(",")]
    except (ShapeError, OSError) as e:
        print(f"peer_gemm: {e}", file=sys.stderr)
        return 2
    if not os.access(a.gemm_bench, os.X_OK):
        print(f"peer_gemm: {a.gemm_bench} is not built: make {os.path.relpath(a.gemm_bench, ROOT)}",
              file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print("peer_gemm: PyTorch is not installed: pip install torch", file=sys.stderr)
        return 1
    env = dict(os.environ)
    if a.threads:
        torch.set_num_threads(a.threads)
        env["ACCUBENCH_CPU_THREADS"] = str(a.threads)
    ours = [[] for _ in shapes]
    theirs = [[] for _ in shapes]
    for _ in range(a.rounds):
        try:
            medians, blas = accubench_medians_ms(a.gemm_bench, shapes, a.reps, env)
        except subprocess.CalledProcessError as e:
            print(f"peer_gemm: {a.gemm_bench} failed (exit {e.returncode}): "
                  f"{e.stderr.strip().splitlines()[0] if e.stderr.strip() else 'no message'}",
                  file=sys.stderr)
            return 1
        for i, ms in enumerate(medians):
            ours[i].append(ms)
        for i, s in enumerate(shapes):
            theirs[i].append(torch_median_ms(torch, s, a.reps))
    print(f"accubench: {blas}; torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"BLAS {'MKL' if torch.backends.mkl.is_available() else 'not MKL'}")
    print("| shape | accubench ms | torch ms | torch / accubench |")
    print("|---|---:|---:|---:|")
    total = [0.0, 0.0]
    for (m, n, k, t), o, th in zip(shapes, ours, theirs):
        mo, mt = statistics.median(o), statistics.median(th)
        total[0] += mo
        total[1] += mt
        print(f"| {m}x{n}x{k} {t} | {mo:.3f} | {mt:.3f} | {mt / mo:.2f}x |")
    print(f"| all {len(shapes)} | {total[0]:.3f} | {total[1]:.3f} | {total[1] / total[0]:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
