# Is E right? on a GPU (docs/noise-scale.md): gpt-small trained 100 AdamW
# steps at each effective batch from 8 to 128 sequences of 1024 tokens, at
# three learning rates around the square-root scaling from E = 8, each E
# timed as 8 x K (add micro-batches for more splits: each trains its own
# curves, and the time to target takes the fastest). The report's "Is E right?" gives the steps to target, the
# fitted B_crit beside the noise scale and the E of least time to target.
effective = 8,16,32,64,128
micro = 8
model = gpt-small
dtype = bf16
optimizer = adamw
lr = 0.0006
lr-grid = sqrt
train-steps = 100
noise-windows = 16
budget-s = 2
trace-steps = 0
