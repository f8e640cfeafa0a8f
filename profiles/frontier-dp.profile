# The frontier's data-parallel part (make bench-dp DP_PROFILE=frontier-dp,
# under mpirun on DP_RANKS ranks, 2 by default): model S at 64 examples a
# step over 2 devices as 32x1, 8x4 and 4x8 per device, with every shard
# value (ZeRO-1 optimizer, ZeRO-2 gradients), the all-reduce or
# reduce-scatter once a window: memory per rank against step time.
effective = 64
micro = 4,8,32
model = S
devices = 2
sync = window
shard = all
budget-s = 0.5
min-samples = 6
trace-steps = 0
