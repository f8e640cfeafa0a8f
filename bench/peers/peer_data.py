"""The data of a window, as harness/run/dataset.c and reduction.c define it:
uniform features in [-1, 1], uniform labels, one loss item in four padding
(at least one valid item per window), and the loss scale of every
micro-batch from the valid counts."""
import numpy as np
import torch

import peer_reductions

VALID_PERCENT = 75


def split_of(effective, micro):
    """accum = ceil(E / micro); the last micro-batch holds the rest."""
    accum = -(-effective // micro)
    return accum, effective - (accum - 1) * micro


class ShardError(Exception):
    """A split that leaves a rank without examples, or a micro-batch wider
    than a rank's share (the C's reason, word for word)."""


def shard_split(effective, micro, devices):
    """split_make_sharded (harness/run/split.c): one window of `effective`
    examples over `devices` ranks. Global micro-batch k is examples
    [k micro N, min((k + 1) micro N, E)), cut into N contiguous near-equal
    parts; every rank makes the same K = ceil(E / (micro N)) passes.
    Returns (K, last: the largest part of the last micro-batch)."""
    per_device = -(-effective // devices)
    if micro > per_device:
        raise ShardError("micro-batch %d is larger than the %d examples a device takes of the "
                         "effective batch %d over %d devices" % (micro, per_device, effective,
                                                                 devices))
    step = micro * devices
    accum = -(-effective // step)
    last_global = effective - (accum - 1) * step
    if last_global < devices:
        raise ShardError("the last micro-batch of the effective batch %d holds %d %s for "
                         "%d devices (micro-batch %d): a device would have none"
                         % (effective, last_global,
                            "example" if last_global == 1 else "examples", devices, micro))
    return accum, -(-last_global // devices)


def shard_part(effective, micro, devices, rank, k):
    """split_shard: rank's (first, count) of global micro-batch k."""
    step = micro * devices
    base = k * step
    g = min(effective - base, step)
    lo, hi = base + rank * g // devices, base + (rank + 1) * g // devices
    return lo, hi - lo


def shard_ranges(effective, micro, devices, rank):
    """Rank's (first, count) of every micro-batch of the window."""
    accum, _ = shard_split(effective, micro, devices)
    return [shard_part(effective, micro, devices, rank, k) for k in range(accum)]


def micro_ranges(effective, micro):
    """One process: the window cut into micro-batches of `micro`, the last
    smaller (shard_ranges over one device)."""
    return shard_ranges(effective, micro, 1, 0)


def _f32_recip(n):
    return float(np.float32(1.0) / np.float32(n)) if n else 0.0


class Reduction:
    """A row of harness/util/reduction.c, as the program prints it
    (peer_reductions): whether it is exact (the accumulated gradient equals
    the full-batch gradient; the gradient check holds it to the dtype's
    tolerance) and the counts one micro-batch's scale divides by."""

    def __init__(self, exact, counts):
        self.exact, self.counts = exact, counts

    def scale(self, micro, window, k):
        """1 over the product of the counts, in fp32 as the C computes it;
        0 where one of them is 0."""
        value = {"window": window, "micro": micro, "k": k}
        d = np.float32(1.0)
        for c in self.counts:
            if not value[c]:
                return 0.0
            d = np.float32(d * np.float32(value[c]))
        return float(np.float32(1.0) / d)


_REDUCTIONS = {}


def reductions():
    """accubench's reduction rows by name, in its order, read once from
    the program (peer_reductions.load; TableError where it cannot be)."""
    if not _REDUCTIONS:
        for name, (exact, counts) in peer_reductions.load().items():
            _REDUCTIONS[name] = Reduction(exact, counts)
    return _REDUCTIONS


def loss_scale(reduction, valid_micro, valid_window, accum):
    """reduction.c's loss_scale: the row's scale."""
    return reductions()[reduction].scale(valid_micro, valid_window, accum)


def window_scales(reduction, valid_counts, rule=None):
    """One scale per micro-batch, then the full batch's (1 / the window's
    valid items: the reference), as reduction_scales. rule: the row's
    rule as a dump's manifest gives it ("1/window"), instead of the
    program's table."""
    window, k = sum(valid_counts), len(valid_counts)
    row = Reduction(False, peer_reductions.parse_rule(rule)) if rule else reductions()[reduction]
    return [row.scale(v, window, k) for v in valid_counts] + [_f32_recip(window)]


class Buffer:
    """One input buffer: x [E, width] (float features) or [E, seq] (token
    ids), labels and mask [E * loss_items]."""

    def __init__(self, x, labels, mask):
        self.x, self.labels, self.mask = x, labels, mask
        self.mask_host = mask.to("cpu", torch.int32)
        self.scales = None

    def set_split(self, effective, micro, reduction, items_per_example, devices=1, rank=0,
                  average=1):
        """The valid counts of this rank's micro-batches and their scales.
        With devices, the scales are the whole window's (every rank's
        micro-batches, k by k and rank by rank, as dataset_set_split): the
        loss is normalised by the valid items of the global window on every
        rank. `average`: a factor on each micro-batch's scale (the ranks DDP
        averages the gradient over, so that the average is the sum)."""
        per = items_per_example
        accum, _ = shard_split(effective, micro, devices)
        counts = [int(self.mask_host[f * per:(f + c) * per].sum())
                  for k in range(accum)
                  for f, c in [shard_part(effective, micro, devices, q, k)
                               for q in range(devices)]]
        every = window_scales(reduction, counts)
        mine = [float(np.float32(every[k * devices + rank]) * np.float32(average))
                for k in range(accum)]
        self.valid_counts = counts[rank::devices]
        self.scales = torch.tensor(mine + [every[-1]], dtype=torch.float32,
                                   device=self.x.device)


def _tokens(inp, effective, g):
    """dataset.c's packed documents: each sequence a stretch of 1 to seq
    tokens (uniform), the rest padding (token 0, label 0, masked); token
    ids by Zipf's law; the label of a token the next one."""
    t, vocab = inp["width"], inp["vocab"]
    zipf = 1.0 / torch.arange(1, vocab + 1, dtype=torch.float64)
    ids = torch.multinomial(zipf, effective * (t + 1), replacement=True, generator=g)
    ids = ids.view(effective, t + 1)
    length = torch.randint(1, t + 1, (effective, 1), generator=g)
    valid = torch.arange(t).view(1, t) < length
    x = torch.where(valid, ids[:, :t], 0)
    labels = torch.where(valid, ids[:, 1:], 0)
    if inp["classes"] != vocab:
        labels = torch.where(valid, torch.randint(0, inp["classes"], (effective, t),
                                                  generator=g), 0)
    return x, labels.reshape(-1), valid.reshape(-1).float()


def make_buffers(inp, effective, count, seed, device):
    """`count` buffers drawn from a generator seeded from `seed` (a
    different stream from accubench's: the numbers differ, their
    distribution does not)."""
    g = torch.Generator().manual_seed(seed ^ 0xda7a5e7)
    items = effective * inp["loss_items"]
    out = []
    for _ in range(count):
        if inp["kind"] == "tokens":
            x, labels, mask = _tokens(inp, effective, g)
        else:
            x = torch.rand(effective, inp["width"], generator=g) * 2 - 1
            labels = torch.randint(0, inp["classes"], (items,), generator=g, dtype=torch.int64)
            mask = (torch.randint(0, 100, (items,), generator=g) < VALID_PERCENT).float()
        if mask.sum() == 0:
            mask[0] = 1.0  # a window always holds a valid item
        out.append(Buffer(x.to(device), labels.to(device), mask.to(device)))
    return out
