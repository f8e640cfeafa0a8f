# The memory-time frontier on a GPU: GPT-2 small and medium at their
# context of 1024, 64 sequences a step (65536 tokens), bf16, split 64x1,
# 16x4 and 4x16, each with every recompute value: memory per device against
# step time, for plan --recommend --from and the report's "Within a memory
# cap". Micro 64 without recompute needs over 100 GB on medium: an oom row
# on a smaller GPU, which the ranking names and leaves out.
effective = 64
micro = 4,16,64
model = gpt-small,gpt-medium
dtype = bf16
recompute = all
budget-s = 1
# the frontier ranks time and memory; its rows need no noise scale
noise-windows = 0
min-samples = 6
max-samples = 100
trace-steps = 0
