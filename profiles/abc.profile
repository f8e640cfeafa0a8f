# The classic A/B/C: effective batch 64 as 64x1, 16x4 and 8x8 on model S.
effective = 64
micro = 8,16,64
model = S
