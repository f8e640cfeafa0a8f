"""Timing as harness/run/step/measure.c does it: warm-up steps (each waited for,
at most half the budget), then whole optimizer steps back to back, each
between its own pair of timestamps (CUDA events on a GPU), step i issued
before step i-1 is read back, until the robust noise is under the target
with at least min-samples, or the budget is spent (3 samples at least),
or max-samples; median, p10, p90, noise over exactly the samples judged.
The statistics are harness/util/stats.c's."""
import time

import torch

MIN_SAMPLES_HARD = 3


def percentile_sorted(s, p):
    if not s:
        return float("nan")
    pos = p / 100.0 * (len(s) - 1)
    lo = int(pos)
    if lo + 1 >= len(s):
        return s[-1]
    return s[lo] + (pos - lo) * (s[lo + 1] - s[lo])


def timing_stats(values):
    s = sorted(values)
    med = percentile_sorted(s, 50)
    mad = percentile_sorted(sorted(abs(v - med) for v in s), 50)
    return {"samples": len(s), "median": med, "p10": percentile_sorted(s, 10),
            "p90": percentile_sorted(s, 90),
            "noise_pct": 100.0 * 1.4826 * mad / med if med > 0 else 0.0}


class CpuTimer:
    """A host timestamp: the CPU runs each op to completion before the
    next is issued."""

    def __init__(self):
        self.t = 0

    def record(self):
        self.t = time.perf_counter_ns()

    @staticmethod
    def elapsed_ms(a, b):
        return (b.t - a.t) / 1e6


class CudaTimer:
    def __init__(self):
        self.e = torch.cuda.Event(enable_timing=True)

    def record(self):
        self.e.record()

    @staticmethod
    def elapsed_ms(a, b):
        b.e.synchronize()
        return a.e.elapsed_time(b.e)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def timer_class(device):
    return CudaTimer if device.type == "cuda" else CpuTimer


class MeasureOptions:
    def __init__(self, warmup=2, min_samples=5, max_samples=1000, budget_s=2.0,
                 max_noise_pct=2.0):
        self.warmup, self.min_samples, self.max_samples = warmup, min_samples, max_samples
        self.budget_s, self.max_noise_pct = budget_s, max_noise_pct


def _noise_met(o, samples):
    return len(samples) >= o.min_samples and timing_stats(samples)["noise_pct"] <= o.max_noise_pct


def measure_steps(step, device, o, world=None):
    """Returns the step statistics (ms), the median host time to issue a
    step, whether the noise target held for the samples reported, and this
    rank's own median step (ms).

    With a world of several ranks (peer_ddp.World), each step's time is the
    slowest rank's (each rank times its own steps; the all-reduce MAX of
    each step's time, taken between steps, outside the timestamps), so every
    rank holds the same series and takes the same stopping decision from
    it; whether the budget ran out (each rank's own clock) is agreed in the
    same exchange: any rank's yes is everyone's. Every rank runs the same
    number of steps."""
    ranks = world is not None and world.size > 1
    warm0 = time.perf_counter()
    for _ in range(o.warmup):
        step()
        sync(device)
        late = time.perf_counter() - warm0 > o.budget_s / 2
        if world.any(late) if ranks else late:
            break
    T = timer_class(device)
    t = [(T(), T()), (T(), T())]
    dev, host, mine = [], [], []
    issued, judged = 0, False
    t0 = time.perf_counter()
    while True:
        cur = t[issued % 2]
        h0 = time.perf_counter_ns()
        cur[0].record()
        step()
        cur[1].record()
        host.append((time.perf_counter_ns() - h0) / 1e6)
        issued += 1
        ms = -1.0
        if issued >= 2:
            prev = t[(issued - 2) % 2]
            ms = T.elapsed_ms(*prev)
            mine.append(ms)
        over = 1.0 if time.perf_counter() - t0 >= o.budget_s else 0.0
        if ranks:
            ms, over = world.max(ms, over)
        if issued >= 2:
            dev.append(ms)
        if issued >= o.max_samples:
            break
        if len(dev) >= 1 and (_noise_met(o, dev) or (over > 0 and len(dev) >= MIN_SAMPLES_HARD)):
            judged = True
            break
    if issued > len(dev):
        last = t[(issued - 1) % 2]
        ms = T.elapsed_ms(*last)
        if not judged:
            mine.append(ms)
            dev.append(world.max(ms)[0] if ranks else ms)
    sync(device)
    return (timing_stats(dev), timing_stats(host)["median"], _noise_met(o, dev),
            timing_stats(mine)["median"])


def median_of_reps(work, device, reps):
    """The median of `reps` runs of work (ms), on this process alone."""
    T = timer_class(device)
    a, b = T(), T()
    ms = []
    for _ in range(reps):
        a.record()
        work()
        b.record()
        ms.append(T.elapsed_ms(a, b))
    return timing_stats(ms)["median"]


# measure.h's: the GEMM the probe grows to takes PEAK_GEMM_MS (at the
# default 2 s budget), from PEAK_GEMM_MIN_N; warmed up PEAK_GEMM_WARMUP_MS.
PEAK_GEMM_MS = 20.0
PEAK_GEMM_MIN_N = 512
PEAK_GEMM_WARMUP_MS = 200


def gemm_size(tflops, ms, max_n):
    """measure_gemm_size: the multiple of 64 whose square GEMM takes `ms`
    at `tflops`, from PEAK_GEMM_MIN_N to max_n."""
    n = int((ms * 1e-3 * tflops * 1e12 / 2) ** (1.0 / 3) / 64) * 64
    return min(max(n, PEAK_GEMM_MIN_N), max_n)


def peak_gemm_tflops(device, dtype, max_n):
    """The peak GEMM rate as measure_peak_gemm finds it: warmed up at the
    smallest size, then grown to the size a GEMM takes PEAK_GEMM_MS at the
    rate just measured, until one takes half that or the size is max_n;
    median of 5 at each size. A fixed size would cost what the device makes
    of it: a CPU without bf16 instructions takes about a minute for one
    2048-cubed bf16 GEMM. Returns (TFLOP/s, the size measured)."""
    g = torch.Generator().manual_seed(11)
    tdt = torch.bfloat16 if dtype == "bf16" else torch.float32

    def rate(n, warm_ms):
        a = (torch.rand(n, n, generator=g) * 2 - 1).to(device, tdt)
        b = (torch.rand(n, n, generator=g) * 2 - 1).to(device, tdt)
        t0 = time.perf_counter()
        while (time.perf_counter() - t0) * 1e3 < warm_ms:
            torch.mm(a, b)
            sync(device)
        ms = median_of_reps(lambda: torch.mm(a, b), device, 5)
        return 2.0 * n ** 3 / (ms * 1e-3) / 1e12, ms

    n = min(PEAK_GEMM_MIN_N, max_n)
    tflops, ms = rate(n, PEAK_GEMM_WARMUP_MS)
    while ms < PEAK_GEMM_MS / 2 and gemm_size(tflops, PEAK_GEMM_MS, max_n) > n:
        n = gemm_size(tflops, PEAK_GEMM_MS, max_n)
        tflops, ms = rate(n, 0)
    return tflops, n
