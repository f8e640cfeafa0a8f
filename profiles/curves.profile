# Loss curves (docs/noise-scale.md): every split of E = 64 under each
# reduction, trained 60 SGD steps from the same starting weights on
# learnable data; the correct splits lie on one curve up to rounding,
# no-scale (the learning rate times K) diverges, mean-of-means drifts, on
# the GPT's padded tokens above all. The timed pass is one step: this
# profile is about the curves, and about half a minute on two CPU cores.
effective = 64
micro = 4,16,64
model = tiny,gpt:d=32,layers=2,heads=2,seq=16,vocab=64
reduction = all
optimizer = sgd
lr = 1
train-steps = 60
noise-windows = 16
steps = 1
warmup = 0
trace-steps = 0
