"""Data parallel in the peer: torchrun's processes as accubench's ranks,
PyTorch's DistributedDataParallel as its all-reduce, and the decisions every
rank must take together (the warm-up's end, the stopping rule, skipping a
slow config) agreed over the process group, as harness/run/step/measure.c agrees
them over MPI.

One process (no torchrun, or WORLD_SIZE 1) is a World of one: every
agreement is the value itself and nothing is wrapped."""
import datetime
import gc
import os

import torch
import torch.distributed as dist


class Sync:
    def __init__(self, name, no_sync_before_last, what):
        self.name, self.no_sync_before_last, self.what = name, no_sync_before_last, what


# The sync values of accubench's `sync` column that DDP runs (one table).
# DDP has no deferred all-reduce that is not overlapped: once no_sync ends,
# its reducer all-reduces each bucket as the last backward fills it, which
# is accubench's overlap; accubench's window (one all-reduce after the
# whole backward) has no DDP counterpart.
SYNCS = [
    Sync("micro", False,
         "DDP without no_sync: every micro-batch's backward all-reduces the accumulated "
         "gradient (param.grad: the earlier micro-batches' reduced sum plus this rank's new "
         "part) bucket by bucket as autograd fills each bucket, the buckets overlapped with "
         "the rest of that backward; the step ends when the last bucket is copied back"),
    Sync("overlap", True,
         "DDP with no_sync around the forward and backward of every micro-batch but the "
         "last: gradients accumulate locally, then the last backward all-reduces them "
         "bucket by bucket as autograd fills each bucket (default 25 MB buckets, the first "
         "1 MB), behind the rest of that backward"),
]
SYNC_BY_NAME = {s.name: s for s in SYNCS}


def launched():
    """The process count torchrun asked for (1 without torchrun)."""
    try:
        return int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        return 1


class World:
    """This process's rank among `size`; agreements over the process group."""

    def __init__(self):
        self.size, self.rank, self.local_rank = 1, 0, 0
        self.backend = None
        self.host_group = None

    def start(self, device_type):
        """Joins torchrun's process group: gloo on the CPU, NCCL with one
        GPU per LOCAL_RANK. Returns the device this rank runs on."""
        self.size = launched()
        if self.size <= 1:
            return None
        self.rank = int(os.environ["RANK"])
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if device_type == "cuda":
            torch.cuda.set_device(self.local_rank)
            device = torch.device("cuda", self.local_rank)
            self.backend = "nccl"
        else:
            device = torch.device("cpu")
            self.backend = "gloo"
        dist.init_process_group(self.backend, timeout=datetime.timedelta(minutes=10),
                                **({"device_id": device} if device_type == "cuda" else {}))
        # The agreements between timed steps travel over gloo on the host:
        # over NCCL they would queue behind the step just issued and drain
        # the GPU's queue at every step.
        self.host_group = dist.new_group(backend="gloo") if self.backend != "gloo" else None
        return device

    def stop(self):
        if self.size > 1 and dist.is_initialized():
            # The configs' DDP wrappers (held in reference cycles) go before
            # their process group: destroyed after it, a reducer's thread
            # aborts the process at exit.
            gc.collect()
            dist.barrier()
            dist.destroy_process_group()

    @property
    def writer(self):
        """Rank 0 writes the CSV and the console for every rank."""
        return self.rank == 0

    def _reduce(self, values, op):
        t = torch.tensor(values, dtype=torch.float64)
        dist.all_reduce(t, op=op, group=self.host_group)
        return [float(v) for v in t]

    def max(self, *values):
        """Per value, the largest over the ranks (a list of the same length)."""
        return list(values) if self.size <= 1 else self._reduce(list(values), dist.ReduceOp.MAX)

    def min(self, *values):
        return list(values) if self.size <= 1 else self._reduce(list(values), dist.ReduceOp.MIN)

    def sum(self, *values):
        return list(values) if self.size <= 1 else self._reduce(list(values), dist.ReduceOp.SUM)

    def any(self, yes):
        """A decision every rank takes together: any rank's yes is everyone's."""
        return bool(self.max(1.0 if yes else 0.0)[0] > 0)

    def weight_diff(self, params):
        """The largest difference between rank 0's weights and any rank's."""
        if self.size <= 1:
            return 0.0
        mine = torch.cat([p.detach().reshape(-1).float() for p in params])
        root = mine.clone()
        dist.broadcast(root, 0)
        return self.max(float((mine - root).abs().max()) if mine.numel() else 0.0)[0]


class AllreduceCounter:
    """DDP's communication hook, counting: the default all-reduce
    (torch.distributed.algorithms.ddp_comm_hooks.default_hooks.allreduce_hook:
    each bucket divided by the ranks and all-reduced with SUM, what DDP does
    without a hook) and, per bucket, one call and its bytes."""

    def __init__(self):
        self.calls = 0
        self.bytes = 0

    @staticmethod
    def hook(state, bucket):
        from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
        buf = bucket.buffer()
        state.calls += 1
        state.bytes += buf.numel() * buf.element_size()
        return allreduce_hook(None, bucket)


def wrap(module, world, device):
    """The model in DistributedDataParallel, with the counting hook; the
    weights are rank 0's (DDP broadcasts them)."""
    from torch.nn.parallel import DistributedDataParallel
    ddp = DistributedDataParallel(module, device_ids=[device.index] if device.type == "cuda"
                                  else None)
    counter = AllreduceCounter()
    ddp.register_comm_hook(counter, AllreduceCounter.hook)
    return ddp, counter
