# GPT-2 small at its context of 1024 on a GPU, bf16: a fixed budget of 64
# sequences (65536 tokens) a step, split every power-of-two way from 1x64 to
# 64x1. The A/B/C splits are among them: A 64x1, B 16x4, C 8x8.
# Micro 64 needs 57 GB (54 GB of activations), and its gradient check's
# full-batch pass as much again: about 110 GB, which an H200 holds.
effective = 64
micro = pow2
model = gpt-small
dtype = bf16
budget-s = 2
