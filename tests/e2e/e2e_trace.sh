#!/bin/sh
# The trace pass on the CPU backend: the abc profile fills the trace columns
# (dispatches per step grow with the accumulation steps: C > B > A, and the
# trace pass counts the same dispatches as the timed pass), and --trace
# writes one step of the first config (8x8) as Chrome trace JSON whose
# structure we check: complete X events with ts/dur/pid/tid/name/cat, flows
# that pair up, the step/micro/forward/backward/optimizer ranges, 8 micro
# ranges inside the step.
set -eu
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 0; }

"$ACCUBENCH" run --backend cpu --profile "$ACCUBENCH_ROOT/profiles/abc.profile" --steps 2 --warmup 1 --trace-steps 2 \
    --trace t.json --csv abc.csv --quiet >run.log 2>&1 || { cat run.log; exit 1; }
for f in t.json.tmp* abc.csv.tmp*; do
    test ! -e "$f" || { echo "temporary $f left behind"; exit 1; }
done

python3 - abc.csv t.json <<'EOF'
import csv, json, math, sys

csv_path, trace_path = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(l for l in open(csv_path) if not l.startswith("#")))
assert len(rows) == 3, f"{len(rows)} rows"
by_k = {int(r["accum_steps"]): r for r in rows}
assert sorted(by_k) == [1, 4, 8], sorted(by_k)
cols = ["kernels_per_step", "launch_calls_per_step", "gpu_busy_ms", "gpu_busy_pct",
        "idle_host_wait_pct", "idle_gap_pct", "launch_latency_us_median",
        "launch_latency_us_p90", "cupti_step_ms", "cupti_dropped", "forward_ms",
        "backward_ms", "optimizer_ms", "idle_ms"]
for k, r in by_k.items():
    assert r["status"] == "ok", (k, r["status"], r["note"])
    for c in cols:
        assert r[c] != "", f"{c} empty for K={k}"
        assert math.isfinite(float(r[c])), f"{c}={r[c]} for K={k}"
    kern = float(r["kernels_per_step"])
    # The trace pass sees exactly the dispatches the timed pass counted.
    assert kern == float(r["dispatches_per_step"]), (k, kern, r["dispatches_per_step"])
    assert float(r["launch_calls_per_step"]) == kern  # CPU: a dispatch is a launch
    assert float(r["launch_latency_us_median"]) == 0.0
    assert int(r["cupti_dropped"]) == 0
    busy, wall = float(r["gpu_busy_ms"]), float(r["cupti_step_ms"])
    assert 0 < busy <= wall, (busy, wall)
    assert abs(float(r["gpu_busy_pct"]) - 100 * busy / wall) < 0.01 * 100
    assert abs(busy + float(r["idle_ms"]) - wall) < 1e-3 * wall + 1e-3
    phased = sum(float(r[c]) for c in ["forward_ms", "backward_ms", "optimizer_ms"])
    # The CSV keeps 6 significant digits: four roundings of up to 5e-6 each.
    # (Nearly all of a CPU step's work lies inside the phases, so phased
    # can sit right at busy.)
    assert 0 < phased <= busy * (1 + 2e-5) + 1e-6, (phased, busy)
a, b, c = (float(by_k[k]["kernels_per_step"]) for k in (1, 4, 8))
assert c > b > a, (a, b, c)

doc = json.load(open(trace_path))
ev = doc["traceEvents"]
assert doc["otherData"]["tool"] == "accubench"
xs = [e for e in ev if e["ph"] == "X"]
assert xs, "no X events"
for e in xs:
    for key in ("ts", "dur", "pid", "tid", "name", "cat"):
        assert key in e, (key, e)
    assert e["dur"] >= 0 and isinstance(e["name"], str)
flows = {}
for e in ev:
    if e["ph"] in ("s", "f"):
        flows.setdefault(e["id"], []).append(e["ph"])
for i, phs in flows.items():
    assert sorted(phs) == ["f", "s"], (i, phs)
for e in ev:
    assert e["ph"] in ("X", "M", "s", "f"), e["ph"]
# On each row, events nest or are disjoint (what the viewers require).
rows = {}
for e in xs:
    rows.setdefault((e["pid"], e["tid"]), []).append(e)
for row, evs in rows.items():
    evs.sort(key=lambda e: (e["ts"], -e["dur"]))
    open_ends = []
    for e in evs:
        while open_ends and open_ends[-1] <= e["ts"] + 1e-3:
            open_ends.pop()
        end = e["ts"] + e["dur"]
        assert not open_ends or end <= open_ends[-1] + 1e-3, (row, e)
        open_ends.append(end)
ranges = [e for e in xs if e["cat"] == "range"]
names = {e["name"] for e in ranges}
for n in ("step", "micro", "forward", "backward", "optimizer"):
    assert n in names, f"no {n} range"
steps = [e for e in ranges if e["name"] == "step"]
assert len(steps) == 1, len(steps)
s = steps[0]
inside = lambda e: s["ts"] <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 1e-3
micro = [e for e in ranges if e["name"] == "micro" and inside(e)]
assert len(micro) == 8, f"{len(micro)} micro ranges in the 8x8 step"
kernels = [e for e in xs if e["cat"] == "kernel"]
assert len(kernels) == float(by_k[8]["kernels_per_step"]), len(kernels)
print(f"trace ok: {len(xs)} X events, {len(flows)} flows; dispatches/step A={a:g} B={b:g} C={c:g}")
EOF
