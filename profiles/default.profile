# The main job: effective batch 256, every power-of-two micro-batch, models
# S, M and L; 64 named twice: 64x4 timed beside itself (an A/A pair), so
# that every run checks its own verdicts' rule (docs/measuring.md).
effective = 256
micro = 256,128,64,64,32,16,8,4,2,1
model = S,M,L
