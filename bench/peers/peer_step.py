"""One optimizer step of accumulation in PyTorch, in each of the peer's
execution modes (one table, MODES), with accubench's arithmetic: gradients
zeroed once per window, forward and backward per micro-batch on the same
weights, each micro-batch's loss scaled by its reduction's scale (so the
window's gradient is normalised by the window's valid items), one AdamW
step on fp32 master weights per window. Under torchrun the model is in
DistributedDataParallel and each rank runs its part of every window
(peer_ddp)."""
import contextlib

import torch
import torch.nn.functional as F

import peer_ddp
from peer_data import shard_ranges


class Mode:
    def __init__(self, name, optimizer, compiled, graph, gpu_only, what):
        self.name, self.optimizer, self.compiled = name, optimizer, compiled
        self.graph, self.gpu_only, self.what = graph, gpu_only, what


# The peer's execution modes. optimizer: the AdamW implementation asked for
# ("foreach" is PyTorch's default multi-tensor one; "fused" the single-kernel
# one, which falls back to foreach where this build lacks it, and the
# metadata says which ran).
MODES = [
    Mode("eager", "foreach", False, False, False,
         "PyTorch eager, autograd per micro-batch, AdamW foreach (the default)"),
    Mode("eager-fused", "fused", False, False, False,
         "PyTorch eager, AdamW fused=True"),
    Mode("compile", "fused", True, False, False,
         "torch.compile (inductor, dynamic=False) of forward + loss, backward by "
         "AOTAutograd, AdamW fused=True"),
    Mode("graph", "fused", False, True, True,
         "the whole step (zeroing, every micro-batch, AdamW fused capturable) captured "
         "once per input buffer with torch.cuda.graph and replayed"),
]
MODE_BY_NAME = {m.name: m for m in MODES}

# AdamW as accubench's defaults (options.c: lr 1e-3, betas 0.9/0.999,
# eps 1e-8, weight decay 0.01; the update of kernels/elementwise.h is
# PyTorch's AdamW).
ADAMW = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01}

DTYPES = ("fp32", "tf32", "bf16")


def fused_adamw_available(device):
    p = torch.nn.Parameter(torch.zeros(2, device=device))
    p.grad = torch.zeros(2, device=device)
    try:
        torch.optim.AdamW([p], fused=True).step()
        return True
    except (RuntimeError, ValueError):
        return False


def set_matmul_precision(dtype):
    """fp32 GEMMs in full fp32 unless tf32 is asked for; bf16 runs under
    autocast."""
    tf32 = dtype == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")


class StepRunner:
    def __init__(self, spec, mode, dtype, device, buffers, effective, micro, seed,
                 fused_ok, world=None, sync=None):
        self.spec, self.mode, self.device, self.buffers = spec, mode, device, buffers
        self.kind = spec.kind
        self.per = self.kind.input(spec.shape)["loss_items"]
        self.world = world if world is not None and world.size > 1 else None
        self.sync = sync if self.world else None
        devices, rank = (self.world.size, self.world.rank) if self.world else (1, 0)
        self.ranges = shard_ranges(effective, micro, devices, rank)
        self.effective = effective
        model = self.kind.build(spec.shape)
        self.kind.init_weights(model, torch.Generator().manual_seed(seed))
        self.module = model.to(device)
        self.counter = None
        if self.world:
            self.model, self.counter = peer_ddp.wrap(self.module, self.world, device)
        else:
            self.model = self.module
        self.params = [p for p in self.module.parameters()]
        opt_impl = mode.optimizer if (mode.optimizer != "fused" or fused_ok) else "foreach"
        self.optimizer_impl = opt_impl
        kw = {"fused": True} if opt_impl == "fused" else {"foreach": True}
        if mode.graph:
            kw["capturable"] = True
        self.opt = torch.optim.AdamW(self.params, **ADAMW, **kw)
        # A captured graph must not hold autocast's cast-weight cache
        # (it would replay casts of the weights of the capture's step).
        self.autocast = (lambda: torch.autocast(device.type, dtype=torch.bfloat16,
                                                cache_enabled=not mode.graph)) \
            if dtype == "bf16" else contextlib.nullcontext
        if mode.compiled:
            # Each config compiles afresh: dynamo's per-function recompile
            # limit would otherwise, a few configs in, run this mode eager.
            torch._dynamo.reset()
            self.fn = torch.compile(self._micro_loss, dynamic=False)
        else:
            self.fn = self._micro_loss
        self.loss_sum = torch.zeros((), device=device)
        self.next_buffer = 0
        self.graphs = None

    def _loss_of(self, module, x, labels, mask, scale):
        with self.autocast():
            logits, lab = self.kind.logits_and_labels(module, x, labels)
        ce = F.cross_entropy(logits.float(), lab, reduction="none")
        return (ce * mask).sum() * scale

    def _micro_loss(self, x, labels, mask, scale):
        return self._loss_of(self.model, x, labels, mask, scale)

    def _held(self, k):
        """DDP's no_sync around micro-batch k where the sync mode defers
        the all-reduce to the last one."""
        if self.sync and self.sync.no_sync_before_last and k < len(self.ranges) - 1:
            return self.model.no_sync()
        return contextlib.nullcontext()

    def _micro(self, b, k, first, count):
        per = self.per
        loss = self.fn(b.x[first:first + count], b.labels[first * per:(first + count) * per],
                       b.mask[first * per:(first + count) * per], b.scales[k])
        loss.backward()
        self.loss_sum += loss.detach()

    def _zero(self, in_place):
        if in_place:
            torch._foreach_zero_([p.grad for p in self.params])
        else:
            self.opt.zero_grad(set_to_none=True)
        self.loss_sum.zero_()

    def window(self, b, in_place=False):
        self._zero(in_place)
        for k, (first, count) in enumerate(self.ranges):
            with self._held(k):
                self._micro(b, k, first, count)

    def _take_buffer(self):
        i = self.next_buffer
        self.next_buffer = (i + 1) % len(self.buffers)
        return i

    def step(self):
        i = self._take_buffer()
        if self.graphs:
            self.graphs[i].replay()
            return
        self.window(self.buffers[i])
        self.opt.step()

    def single_pass(self):
        """One forward + backward of the first micro-batch (pass_ms); under
        DDP in no_sync, so that it is the compute alone and no rank waits
        for another."""
        b = self.buffers[self._take_buffer()]
        first, count = self.ranges[0]
        with self.model.no_sync() if self.world else contextlib.nullcontext():
            self._micro(b, 0, first, count)

    def _part_loss_sum(self, b):
        """The sum of the valid items' losses over this rank's micro-batches
        of buffer b, unscaled and without a gradient (accubench's loss_sum;
        the scaled sum the window accumulates depends on the reduction)."""
        per, total = self.per, 0.0
        with torch.no_grad():
            for first, count in self.ranges:
                items = slice(first * per, (first + count) * per)
                total += float(self._loss_of(self.module, b.x[first:first + count],
                                             b.labels[items], b.mask[items], 1.0))
        return total

    def check(self):
        """The window of buffer 0 at the current weights against the full
        batch: (‖g_acc − g_full‖ / ‖g_full‖, the window's loss, its sum).
        The loss is the sum over the valid items of the window over their
        count, as accubench's loss column. No optimizer step; gradients are
        cleared afterwards. Under DDP, g_acc is this rank's gradient after
        DDP's all-reduce, g_full the single-process gradient of all E
        examples (the module itself, eager, no DDP), the loss and its sum
        this rank's part of the window's (they add up over the ranks)."""
        b = self.buffers[0]
        self.window(b)
        acc = torch.cat([p.grad.detach().float().reshape(-1) for p in self.params])
        self._zero(False)
        loss_sum = self._part_loss_sum(b)
        valid = float(b.mask.sum())
        loss = loss_sum / valid if valid else float("nan")
        k = len(self.ranges)
        if self.world:
            self._loss_of(self.module, b.x, b.labels, b.mask, b.scales[k]).backward()
        else:
            self.fn(b.x, b.labels, b.mask, b.scales[k]).backward()
        full = torch.cat([p.grad.detach().float().reshape(-1) for p in self.params])
        self._zero(False)
        err = float(torch.linalg.vector_norm(acc - full) / torch.linalg.vector_norm(full))
        return err, loss, loss_sum

    def capture(self, warm_steps=3):
        """Graph mode: eager steps on a side stream (allocations, the
        fused optimizer's state, cuBLAS workspaces happen outside the
        capture), then one graph per input buffer in a shared pool, replayed
        in the order captured."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for i in range(warm_steps):
                self.window(self.buffers[i % len(self.buffers)], in_place=i > 0)
                self.opt.step()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        self.graphs, pool = [], None
        for b in self.buffers:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, pool=pool):
                self.window(b, in_place=True)
                self.opt.step()
            pool = g.pool()
            self.graphs.append(g)
        torch.cuda.synchronize()
        self.next_buffer = 0
