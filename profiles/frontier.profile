# The memory-time frontier on a CPU, about 30 s on 2 quiet cores: model S
# and the gpt-cpu shape (d 128, 4 layers, 4 heads, 64 tokens, a vocabulary
# of 2048) at 16 examples a step as 16x1, 8x2 and 2x8, each with every
# recompute value: what each lever saves in memory per device and costs in
# step time, for plan --recommend --from and the report's "Within a memory
# cap" (docs/planner.md). The data-parallel part, every shard value on 2
# ranks, is profiles/frontier-dp.profile: make bench-dp DP_PROFILE=frontier-dp.
effective = 16
micro = 2,8,16
model = S,gpt:d=128,layers=4,heads=4,seq=64,vocab=2048
recompute = all
budget-s = 1.5
# the frontier ranks time and memory; its rows need no noise scale
noise-windows = 0
min-samples = 6
trace-steps = 0
