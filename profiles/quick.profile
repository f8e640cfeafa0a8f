# A tiny sweep for CI: every power-of-two split of 16 on the tiny model,
# with a short time budget.
effective = 16
micro = pow2
model = tiny
budget-s = 0.2
min-samples = 3
trace-steps = 2
