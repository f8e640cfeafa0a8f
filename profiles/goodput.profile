# Is E right? Time to a target loss across effective batches 8 to 256
# (docs/noise-scale.md): a small GPT trained 150 AdamW steps from the same
# starting weights at each E, each at three learning rates around the
# square-root scaling from E = 8 (the best by final loss kept); the report's
# "Is E right?" fits S(B) = S_min + E_min / B to the steps to target, sets
# B_crit beside the measured noise scale, and multiplies the steps by each
# E's step time. The shape is the curves profile's GPT: gpt-tiny does about
# twenty times the work per example and would take an hour here. About
# four minutes on two shared CPU cores.
effective = 8,16,32,64,128,256
micro = 8
model = gpt:d=32,layers=2,heads=2,seq=16,vocab=64
optimizer = adamw
lr = 0.003
lr-grid = sqrt
train-steps = 150
noise-windows = 16
steps = 3
warmup = 1
budget-s = 0.3
min-samples = 3
trace-steps = 0
