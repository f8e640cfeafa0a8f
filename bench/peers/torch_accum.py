#!/usr/bin/env python3
"""The PyTorch peer of accubench: the same models, splits, data semantics,
optimizer and timing, written as rows of accubench's CSV (backend `torch`,
one series per peer mode), into accubench's own CSV or a new one.

  torch_accum.py --profile abc --csv results/run.csv     # join a run's CSV
  torch_accum.py --model S --effective 64 --micro 8,16,64 --mode eager,compile
  torch_accum.py --verify DIR     # check an `accubench run --dump DIR` window
  torchrun --nproc_per_node 2 --standalone torch_accum.py --profile dp --csv RUN.csv
                                  # DistributedDataParallel over 2 ranks (peer_ddp)

Exit: 0 done, 1 a gradient mismatch (--verify) or a config failed, 2 bad
input (one line on stderr naming it)."""
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

try:
    import torch
except ImportError:
    print("torch_accum: PyTorch is not installed (pip install torch)", file=sys.stderr)
    sys.exit(2)

import peer_csv  # noqa: E402
import peer_data  # noqa: E402
import peer_ddp  # noqa: E402
import peer_models  # noqa: E402
import peer_reductions  # noqa: E402
import peer_step  # noqa: E402
import peer_timing  # noqa: E402
from peer_options import (  # noqa: E402
    BadInput, axis_items, check_micro_fits, int_in, items, micro_list, model_items,
    parse_args, plural, real_in, settings_of)


def pick_device(name):
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda":
        if not torch.cuda.is_available():
            raise BadInput("--device cuda: no usable GPU (torch.cuda.is_available() is False)")
        return torch.device("cuda")
    if name == "cpu":
        return torch.device("cpu")
    raise BadInput("unknown --device '%s' (known: auto, cpu, cuda)" % name)


def device_name(device):
    if device.type == "cuda":
        return torch.cuda.get_device_name(device).replace(",", " ")
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return ("%s (%d cores)" % (model, os.cpu_count() or 0)).replace(",", " ")


def torch_library(device):
    """torch's version and its BLAS, OpenMP and thread counts, from its own
    build and parallel reports."""
    show = torch.__config__.show()
    parts = ["torch %s" % torch.__version__]
    for line in show.splitlines():
        line = line.strip(" -")
        if "Math Kernel Library" in line or line.startswith("OpenMP") or \
                line.startswith("CPU capability"):
            parts.append(line)
        if "BLAS_INFO=" in line:
            parts.append("BLAS_INFO=" + line.split("BLAS_INFO=")[1].split(",")[0])
    parts.append("%d threads (at::get_num_threads)" % torch.get_num_threads())
    env = ["%s=%s" % (k, os.environ[k]) for k in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY",
                                                   "MKL_NUM_THREADS", "GOMP_SPINCOUNT")
           if k in os.environ]
    if env:
        parts.append("environment " + " ".join(env))
    if device.type == "cuda":
        parts.append("CUDA %s, cuBLAS via torch, cuDNN %s" % (torch.version.cuda,
                                                            torch.backends.cudnn.version()))
    return "; ".join(parts)


class Peer:
    def __init__(self, args, s, device, modes, argv, world, syncs):
        self.args, self.s, self.device, self.modes = args, s, device, modes
        self.world, self.syncs = world, syncs
        self.opts = peer_timing.MeasureOptions(
            warmup=int_in("warmup", s["warmup"], 0, 10000),
            min_samples=int_in("min-samples", s["min-samples"], 1, 1000000),
            max_samples=int_in("max-samples", s["max-samples"], 1, 1000000),
            budget_s=real_in("budget-s", s["budget-s"], 0.001, 86400),
            max_noise_pct=real_in("max-noise", s["max-noise"], 0.001, 100))
        if self.opts.min_samples > self.opts.max_samples:
            raise BadInput("min-samples %d is more than max-samples %d"
                           % (self.opts.min_samples, self.opts.max_samples))
        self.max_step_s = real_in("max-step-s", s["max-step-s"], 0.001, 86400)
        self.seed = int_in("seed", s["seed"], 0, (1 << 63) - 1)
        self.nbuf = int_in("buffers", s["buffers"], 1, 8)
        self.dtype = s["dtype"]
        if self.dtype not in peer_step.DTYPES:
            raise BadInput("unknown dtype '%s' (known: %s)"
                           % (self.dtype, ", ".join(peer_step.DTYPES)))
        if self.dtype == "tf32" and device.type != "cuda":
            raise BadInput("dtype tf32 needs a GPU (the CPU runs fp32 or bf16)")
        try:
            known = peer_data.reductions()
        except peer_reductions.TableError as e:
            raise BadInput(str(e))
        self.reductions = axis_items("reduction", s["reduction"], known)
        for r in self.reductions:
            if r not in known:
                raise BadInput("unknown reduction '%s' (known: %s)" % (r, ", ".join(known)))
        try:
            self.models = [peer_models.parse_model(m) for m in model_items(s["model"])]
        except peer_models.ModelError as e:
            raise BadInput(str(e))
        self.effective = [int_in("effective", e, 1, 1 << 20) for e in items(s["effective"])]
        self.micro_spec = s["micro"]
        for e in self.effective:  # every size read (BadInput) before anything runs
            micro_list(self.micro_spec, e, e)
        check_micro_fits(s["micro"], self.effective)  # after micro_list read every size
        self.fused_ok = peer_step.fused_adamw_available(device)
        self.argv = argv
        self.failed = 0

    def metadata(self):
        fused = "fused" if self.fused_ok else "foreach (fused AdamW is not in this build)"
        modes = "; ".join("%s: %s%s" % (m.name, m.what,
                                         " [ran: %s]" % fused if m.optimizer == "fused" else "")
                          for m in self.modes)
        ddp = self.world.size > 1
        o = self.opts
        peer = [
            ("peers", "torch"),
            ("torch_version", torch.__version__),
            ("torch_library", torch_library(self.device)),
            ("torch_device", device_name(self.device)),
            ("torch_dtype", self.dtype + (" (torch.autocast bf16; fp32 master weights)"
                                          if self.dtype == "bf16" else "")),
            ("torch_modes", modes),
            ("torch_optimizer", "adamw lr %g betas %g/%g eps %g weight decay %g; fp32 "
             "parameters; gradients set to None once per window" % (
                 peer_step.ADAMW["lr"], peer_step.ADAMW["betas"][0],
                 peer_step.ADAMW["betas"][1], peer_step.ADAMW["eps"],
                 peer_step.ADAMW["weight_decay"])),
            ("torch_timing", "warmup %d; min %d max %d samples; noise target %g%%; budget %gs "
             "per config; %s" % (o.warmup, o.min_samples, o.max_samples, o.max_noise_pct,
                                 o.budget_s, "CUDA events" if self.device.type == "cuda"
                                 else "host clock")),
            ("torch_peak_gemm_tflops", "%.4g" % self.peak),
            ("torch_peak_gemm_shape", "%dx%dx%d %s (torch.mm; the torch rows' mfu_pct is "
             "over it)" % (self.peak_n, self.peak_n, self.peak_n, self.dtype)),
            ("torch_data", "same distribution as accubench's (uniform features, 1 in 4 "
             "items padding), drawn by torch's generator: not the same numbers"),
            ("torch_unmeasured", "dispatches_per_step mem_need_bytes and the trace pass "
             "(kernels_per_step ... idle_ms)%s%s" % (
                 "" if self.device.type == "cuda" else " and mem_peak_bytes",
                 "; with ranks comm_ms comm_exposed_ms busbw_gbps (DDP's all-reduce runs "
                 "inside its reducer, not timed apart)" if ddp else "")),
        ] + (self.ddp_metadata() if ddp else []) + [
            ("torch_date", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
            ("torch_host", socket.gethostname()),
            ("torch_command", " ".join(["torch_accum.py"] + self.argv)),
        ]
        own = [
            ("tool_version", "torch_accum (the PyTorch peer)"),
            ("date", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
            ("host", socket.gethostname()),
            ("backend", "torch"),
            ("backend_caps", "none"),
            ("device", device_name(self.device)),
            ("library", torch_library(self.device)),
            ("profile", self.args.profile or "(none)"),
            ("seed", str(self.seed)),
            ("dtype", self.dtype),
            ("optimizer", "adamw lr %g" % peer_step.ADAMW["lr"]),
            ("modes", modes),
            ("peak_gemm_tflops", "%.4g" % self.peak),
            ("command", " ".join(["torch_accum.py"] + self.argv)),
        ]
        return own, peer

    def ddp_metadata(self):
        w = self.world
        return [
            ("torch_ddp", "%d ranks under torchrun; torch.nn.parallel.DistributedDataParallel "
             "over %s%s; torch.set_num_threads(%d) on each rank%s; each rank takes its part of "
             "every window (split_make_sharded's rule; effective batch = micro x K x ranks) "
             "and its loss is scaled by the ranks x the global window's scale, as DDP "
             "averages the gradient over the ranks" % (
                 w.size, w.backend, " (one GPU per LOCAL_RANK)" if w.backend == "nccl" else "",
                 torch.get_num_threads(), "" if self.args.threads else
                 " (the peer's choice: the ranks share the cores)")),
            ("torch_sync", "; ".join("%s: %s" % (x.name, x.what) for x in self.syncs)),
            ("torch_ddp_timing", "each rank times its own steps; a step's time is the slowest "
             "rank's (all_reduce MAX of each step's time between steps), median/p10/p90/noise "
             "over those; the stopping decision is taken from that series and the budget "
             "agreed (any rank's yes), so every rank runs the same steps; "
             "rank_step_spread_pct from the ranks' own medians"),
            ("torch_ddp_checks", "grad_rel_err: the worst rank's gradient after DDP's "
             "all-reduce against the single-process full-batch gradient of the same E "
             "examples (eager; over the dtype's tolerance, fp32 1e-5, the row is an error); "
             "rank_weight_diff: the largest difference from rank 0's weights after one step; "
             "allreduce_calls_per_step and allreduce_bytes_per_step: counted by a DDP "
             "communication hook that wraps DDP's default all-reduce (allreduce_hook)"),
        ]

    def csv_path(self):
        if self.args.csv:
            return self.args.csv
        os.makedirs(self.args.out, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        profile = os.path.basename(self.args.profile or "custom").split(".")[0]
        return os.path.join(self.args.out, "torch-%s-%s-%s-%s.csv"
                            % (profile, self.device.type, self.dtype, stamp))

    def run(self):
        peer_step.set_matmul_precision(self.dtype)
        self.peak, self.peak_n = peer_timing.peak_gemm_tflops(
            self.device, self.dtype, 8192 if self.device.type == "cuda" else 2048)
        own, peer = self.metadata()
        target = None
        if self.world.writer:  # rank 0 writes for every rank
            path = self.csv_path()
            try:
                target = peer_csv.CsvTarget(path, ROOT, own, peer)
            except peer_csv.CsvRefused as e:
                raise BadInput(str(e))
        try:
            if target:
                target.flush()
            return self.sweep(target, path if target else None)
        finally:
            if target:
                target.close()

    def sweep(self, target, path):
        n = self.world.size
        for spec in self.models:
            for e in self.effective:
                share = -(-e // n)  # the largest share of E a rank takes
                for micro in micro_list(self.micro_spec, e, share):  # pow2's stop at the share
                    for mode in self.modes:
                        for red in self.reductions:
                            for sync in self.syncs or [None]:
                                row = self.config(spec, e, micro, mode, red, sync)
                                if target:
                                    target.append(row)
                                    if not self.args.quiet:
                                        self.say(row)
        if target:
            print("%d %s written to %s" % (target.written, plural(target.written, "row", "rows"),
                                           path))
        return 1 if self.world.any(self.failed) else 0

    @staticmethod
    def say(row):
        where = "torch %-6s %-11s %4dx%-3d" % (row["model"], row["mode"], row["micro_batch"],
                                               row["accum_steps"])
        if row.get("sync"):
            where += " %dx sync %-7s" % (row["devices"], row["sync"])
        if row["status"] != "ok":
            print("%s %s: %s" % (where, row["status"], row["note"]))
            return
        print("%s step %9.3f ms (p10 %.3f p90 %.3f, noise %.1f%%, %d %s)  grad err %.2g"
              % (where, row["step_ms_median"], row["step_ms_p10"], row["step_ms_p90"],
                 row["step_noise_pct"], row["samples"], plural(row["samples"], "sample", "samples"),
                 row["grad_rel_err"]))

    def config(self, spec, e, micro, mode, red, sync=None):
        n = self.world.size
        why = None
        try:
            accum, last = peer_data.shard_split(e, micro, n)
        except peer_data.ShardError as ex:
            # The row says what the split would have been (as sweep.c).
            why = str(ex)
            accum = -(-e // (micro * n))
            last = -(-(e - (accum - 1) * micro * n) // n)
        row = {"backend": "torch", "device": device_name(self.device), "model": spec.name,
               "params": spec.params(), "dtype": self.dtype, "recompute": "none",
               # p.grad is the parameter's dtype: fp32 master weights, under
               # autocast too
               "grad_dtype": "fp32",
               "mode": mode.name,
               "reduction": red, "effective_batch": e, "micro_batch": micro,
               "accum_steps": accum, "last_micro_batch": last, "devices": n,
               "sync": sync.name if sync else "",
               # DDP keeps the whole state on every rank: unsharded
               "shard": "none" if sync else "",
               "flops_per_step": spec.kind.flops_per_step(spec.shape, -(-e // n)),
               "status": "ok", "note": ""}
        if why:
            row.update(status="skipped", note=why)
            return row
        try:
            self.measure(spec, e, micro, mode, red, row, sync)
        except torch.cuda.OutOfMemoryError as ex:
            if n > 1:
                self.stop_every_rank(row, ex)
            row.update(status="oom", note="torch: " + str(ex).splitlines()[0][:150])
        except Exception as ex:  # one config failing is a row, not the end of the run
            if n > 1:
                self.stop_every_rank(row, ex)
            self.failed += 1
            row.update(status="error", note="%s: %s" % (type(ex).__name__,
                                                        str(ex).splitlines()[0][:150]))
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        return row

    def stop_every_rank(self, row, ex):
        """A rank that fails mid-config may leave the others in a
        collective: it says so and ends (torchrun then stops every rank);
        the rows written before stay in the CSV."""
        print("torch_accum: rank %d of %d: config %s %dx%d %s sync %s: %s: %s; stopping every "
              "rank" % (self.world.rank, self.world.size, row["model"], row["micro_batch"],
                        row["accum_steps"], row["mode"], row["sync"], type(ex).__name__,
                        str(ex).splitlines()[0][:200] if str(ex) else ""),
              file=sys.stderr, flush=True)
        os._exit(1)

    def measure(self, spec, e, micro, mode, red, row, sync=None):
        w = self.world
        inp = spec.kind.input(spec.shape)
        bufs = peer_data.make_buffers(inp, e, self.nbuf, self.seed, self.device)
        for b in bufs:
            b.set_split(e, micro, red, inp["loss_items"], w.size, w.rank, w.size)
        run = peer_step.StepRunner(spec, mode, self.dtype, self.device, bufs, e, micro,
                                   self.seed, self.fused_ok, w, sync)
        row["grad_rel_err"], row["loss"], row["loss_sum"] = run.check()
        if w.size > 1:
            # The worst rank's gradient; the window's loss, every rank's part.
            row["grad_rel_err"] = w.max(row["grad_rel_err"])[0]
            row["loss"], row["loss_sum"] = w.sum(row["loss"], row["loss_sum"])
            run.step()
            row["rank_weight_diff"] = w.weight_diff(run.params)
        one = peer_timing.median_of_reps(run.single_pass, self.device, 3)
        if w.size > 1:
            one = w.max(one)[0]  # every rank skips it, or none
        accum = row["accum_steps"]
        if accum * one > self.max_step_s * 1e3:
            row.update(status="skipped", note="a step would take about %.3g s (%d x %.3g ms) "
                       "over --max-step-s %g" % (accum * one / 1e3, accum, one,
                                                 self.max_step_s))
            return
        if mode.graph:
            run.capture()
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats()
        steps = [0]

        def counted():
            steps[0] += 1
            run.step()

        if run.counter:
            run.counter.calls = run.counter.bytes = 0
        st, host_ms, met, mine = peer_timing.measure_steps(counted, self.device, self.opts,
                                                           w)
        if self.device.type == "cuda":
            row["mem_peak_bytes"] = torch.cuda.max_memory_allocated()
        row["pass_ms"] = peer_timing.median_of_reps(run.single_pass, self.device, 5)
        row.update(step_ms_median=st["median"], step_ms_p10=st["p10"], step_ms_p90=st["p90"],
                   step_noise_pct=st["noise_pct"], samples=st["samples"],
                   host_enqueue_ms=host_ms)
        row["samples_per_s"] = e / (st["median"] * 1e-3)
        if inp["kind"] == "tokens":  # every position of a sequence, padding too
            row["tokens_per_s"] = row["samples_per_s"] * inp["width"]
        row["tflops"] = row["flops_per_step"] / (st["median"] * 1e-3) / 1e12
        row["mfu_pct"] = 100.0 * row["tflops"] / self.peak if self.peak > 0 else None
        o = self.opts
        if st["noise_pct"] > o.max_noise_pct and st["samples"] >= o.max_samples:
            row["note"] = "noise %.1f%% over the %.1f%% target when max-samples %d was " \
                          "reached" % (st["noise_pct"], o.max_noise_pct, o.max_samples)
        elif st["noise_pct"] > o.max_noise_pct:
            row["note"] = "noise %.1f%% over the %.1f%% target when the %.1fs budget ran " \
                          "out" % (st["noise_pct"], o.max_noise_pct, o.budget_s)
        elif not met:
            row["note"] = "%d samples, fewer than min-samples %d, when the %.1fs budget " \
                          "ran out" % (st["samples"], o.min_samples, o.budget_s)
        if w.size > 1:
            self.fill_ranks(row, run, steps[0], mine, red)

    def fill_ranks(self, row, run, steps, mine, red):
        w = self.world
        row["allreduce_calls_per_step"] = run.counter.calls / steps
        row["allreduce_bytes_per_step"] = run.counter.bytes / steps
        hi, = w.max(mine)
        lo, = w.min(mine)
        row["rank_step_spread_pct"] = 100.0 * (hi - lo) / mine if mine > 0 else None
        tol = TOLERANCE.get(self.dtype, 1e-5)
        if peer_data.reductions()[red].exact and not row["grad_rel_err"] <= tol:
            row.update(status="error", note="gradient check failed: relative error %.3g over "
                       "%.0e" % (row["grad_rel_err"], tol))
            self.failed += 1
        elif row["rank_weight_diff"] != 0:
            row.update(status="error", note="the ranks' weights differ after a step by up to "
                       "%.3g" % row["rank_weight_diff"])
            self.failed += 1


# harness/util/dtype_table.c's window-gradient tolerances.
TOLERANCE = {"fp32": 1e-5, "tf32": 1e-3, "bf16": 1e-2}


def main(argv):
    args = parse_args(argv)
    # Bad input is said once, by rank 0 (every rank finds it alike).
    world = peer_ddp.World()
    world.rank = int(os.environ.get("RANK", "0") or 0)
    try:
        if args.verify:
            import peer_verify
            return peer_verify.verify(args.verify)
        ranks = peer_ddp.launched()
        if args.threads:
            torch.set_num_threads(int_in("threads", args.threads, 1, 4096))
        elif ranks > 1:
            torch.set_num_threads(1)  # the ranks share the cores
        device = pick_device(args.device)
        available = [m for m in peer_step.MODES if (device.type == "cuda" or not m.gpu_only)
                     and not (ranks > 1 and m.graph)]
        if args.mode:
            modes = []
            for name in items(args.mode):
                m = peer_step.MODE_BY_NAME.get(name)
                if m is None:
                    raise BadInput("unknown --mode '%s' (known: %s)"
                                   % (name, ", ".join(x.name for x in peer_step.MODES)))
                if m.graph and ranks > 1:
                    raise BadInput("--mode %s is not run under torchrun: DDP's reducer "
                                   "issues its all-reduces from autograd hooks on the host, "
                                   "which a captured graph would not replay" % name)
                if m not in available:
                    raise BadInput("--mode %s needs a GPU (this run is on %s)"
                                   % (name, device.type))
                if m not in modes:
                    modes.append(m)
        else:
            modes = available
        syncs = None
        if args.sync and ranks <= 1:
            raise BadInput("--sync %s: the sync modes are DDP's, under torchrun with more "
                           "than one process (WORLD_SIZE is %d)" % (args.sync, ranks))
        if ranks > 1:
            syncs = []
            for name in items(args.sync or ",".join(x.name for x in peer_ddp.SYNCS)):
                x = peer_ddp.SYNC_BY_NAME.get(name)
                if x is None:
                    raise BadInput("unknown --sync '%s' (DDP runs: %s; accubench's window, one "
                                   "all-reduce after the whole last backward, has no DDP "
                                   "counterpart)" % (name, ", ".join(
                                       y.name for y in peer_ddp.SYNCS)))
                if x not in syncs:
                    syncs.append(x)
        local = int(os.environ.get("LOCAL_WORLD_SIZE", "1") or 1)
        if ranks > 1 and device.type == "cuda" and local > torch.cuda.device_count():
            raise BadInput("torchrun started %d processes on this node, which has %d GPUs "
                           "(one each: --nproc_per_node %d at most)"
                           % (local, torch.cuda.device_count(), torch.cuda.device_count()))
        peer = Peer(args, settings_of(args), device, modes, argv, world, syncs)
        if ranks > 1:
            device = world.start(device.type)
            peer.device = device
        try:
            return peer.run()
        finally:
            world.stop()
    except BadInput as e:
        if world.writer:
            print("torch_accum: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
