#!/usr/bin/env python3
"""accubench's CPU step against PyTorch's, split by split, measured side by
side: for each repeat and each split, one `accubench run` and then the peer
in each mode into the same CSV, so the two run seconds apart on the same
machine. Prints the ratio (torch step / accubench step: above 1, accubench
is faster) per split and mode for every repeat, then its median and spread.

  bench/peers/peer_ratio.py [--reps 3] [--micro 64,16,8] [--out DIR]
  bench/peers/peer_ratio.py --model gpt:d=128,layers=4,heads=4,seq=64,vocab=2048 \
      --effective 16 --micro 16,4,1 --mode eager-fused      (make peer-ratio's GPT)
  bench/peers/peer_ratio.py --model llama-cpu --effective 16 --micro 16,4,1 \
      --mode eager-fused                                    (make peer-ratio's Llama)
"""
import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import peer_csv  # noqa: E402


def rows_of(path):
    _, header, lines = peer_csv.read_csv(path)
    return [dict(zip(header, l.split(","))) for l in lines]


def main(argv):
    p = argparse.ArgumentParser(prog="peer_ratio.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--accubench", default=os.path.join(ROOT, "build", "accubench"))
    p.add_argument("--model", default="S")
    p.add_argument("--effective", default="64")
    p.add_argument("--micro", default="64,16,8")
    p.add_argument("--mode", default="eager,eager-fused,compile")
    p.add_argument("--dtype", default="fp32", help="both sides' dtype: fp32 or bf16 (bf16 on "
                   "the CPU: accubench's bf16 storage, the peer's torch.autocast)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--budget-s", default="2")
    p.add_argument("--out", default=os.path.join(ROOT, "results", "peer-ratio"))
    p.add_argument("--torch-env", action="append", default=[], metavar="KEY=VALUE",
                   help="environment of the torch runs only (e.g. OMP_WAIT_POLICY=PASSIVE: "
                        "on a machine shared with other work, PyTorch's OpenMP threads "
                        "spin-waiting for a descheduled peer cost it several times over)")
    p.add_argument("--threads", type=int, metavar="N",
                   help="both sides on N threads (accubench's ACCUBENCH_CPU_THREADS, torch's "
                        "set_num_threads); default: each side's own. One thread each is the "
                        "comparison that other work on the machine disturbs least")
    p.add_argument("--stat", default="median", choices=("median", "p10"),
                   help="the step figure compared: each run's median step, or its p10 (the "
                        "fastest tenth of its steps: what other work on a shared machine "
                        "inflates least)")
    a = p.parse_args(argv)
    col = "step_ms_" + a.stat
    if a.threads is not None and a.threads < 1:
        print("peer_ratio: --threads takes a whole number from 1, got %d" % a.threads,
              file=sys.stderr)
        return 2
    torch_env = dict(os.environ)
    for kv in a.torch_env:
        key, eq, value = kv.partition("=")
        if not key or not eq:
            print("peer_ratio: --torch-env takes KEY=VALUE, got '%s'" % kv, file=sys.stderr)
            return 2
        torch_env[key] = value
    acc_env = dict(os.environ)
    threads = []
    if a.threads:
        acc_env["ACCUBENCH_CPU_THREADS"] = str(a.threads)
        threads = ["--threads", str(a.threads)]
    if not os.access(a.accubench, os.X_OK):
        print("peer_ratio: %s is not built (make)" % a.accubench, file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    torch_model = a.model.replace(",", ";") if ":" in a.model else a.model
    micros = [int(m) for m in a.micro.split(",")]
    modes = a.mode.split(",")
    ratio = {}  # (micro, mode) -> [per repeat]
    ms = {}     # (micro, backend/mode) -> [per repeat]
    for rep in range(1, a.reps + 1):
        for m in micros:
            csv = os.path.join(a.out, "r%d-m%d.csv" % (rep, m))
            if os.path.exists(csv):
                os.unlink(csv)
            common = ["--model", a.model, "--effective", a.effective, "--micro", str(m),
                      "--budget-s", a.budget_s, "--dtype", a.dtype, "--csv", csv]
            subprocess.run([a.accubench, "run", "--backend", "cpu", "--no-cupti", "--quiet"]
                           + common, check=True, stdout=subprocess.DEVNULL, env=acc_env)
            # torch_accum takes a comma list of models: a shape's own commas
            # become ';', which both sides read as the same shape.
            torch_common = ["--model", torch_model] + common[2:]
            subprocess.run([sys.executable, os.path.join(HERE, "torch_accum.py"), "--device",
                            "cpu", "--mode", a.mode, "--quiet"] + threads + torch_common,
                           check=True,
                           stdout=subprocess.DEVNULL, env=torch_env)
            rows = rows_of(csv)
            base = [r for r in rows if r["backend"] != "torch" and r["status"] == "ok"]
            if len(base) != 1:
                print("peer_ratio: %s: accubench did not measure the split" % csv,
                      file=sys.stderr)
                return 1
            acc = float(base[0][col])
            ms.setdefault((m, "accubench"), []).append(acc)
            line = ["rep %d  %3dx%-2d accubench %8.2f ms" % (rep, m, int(base[0]["accum_steps"]),
                                                          acc)]
            for mode in modes:
                t = [r for r in rows if r["backend"] == "torch" and r["mode"] == mode
                     and r["status"] == "ok"]
                if len(t) != 1:
                    print("peer_ratio: %s: torch %s did not measure the split" % (csv, mode),
                          file=sys.stderr)
                    return 1
                tm = float(t[0][col])
                ms.setdefault((m, mode), []).append(tm)
                ratio.setdefault((m, mode), []).append(tm / acc)
                line.append("%s %8.2f ms (%.2fx)" % (mode, tm, tm / acc))
            print("  ".join(line), flush=True)
    print()
    print("torch step / accubench CPU step (above 1: accubench faster), each run's %s step; "
          "median over %d interleaved repeats [min..max]; best: each side's fastest "
          "repeat%s%s" % (
              a.stat, a.reps, "; torch runs with " + " ".join(a.torch_env) if a.torch_env else "",
              "; both sides on %d thread%s" % (a.threads, "s" if a.threads > 1 else "")
              if a.threads else ""))
    print("| split | accubench ms | " + " | ".join("%s ms | %s ratio | best" % (x, x)
                                                   for x in modes) + " |")
    print("|---|---:|" + "---:|---:|---:|" * len(modes))
    for m in micros:
        e = int(a.effective)
        k = -(-e // m)
        cells = ["%dx%d" % (m, k), "%.1f" % statistics.median(ms[(m, "accubench")])]
        for mode in modes:
            r = ratio[(m, mode)]
            cells.append("%.1f" % statistics.median(ms[(m, mode)]))
            cells.append("%.2fx [%.2f..%.2f]" % (statistics.median(r), min(r), max(r)))
            cells.append("%.2fx" % (min(ms[(m, mode)]) / min(ms[(m, "accubench")])))
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
