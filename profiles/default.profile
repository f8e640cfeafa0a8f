# The main job: effective batch 256, every power-of-two micro-batch, models
# S, M and L.
effective = 256
micro = pow2
model = S,M,L
