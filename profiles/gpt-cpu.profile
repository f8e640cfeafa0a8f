# A GPT sized for a laptop's CPU, about 15 s on two cores: 16
# sequences of 64 tokens a step, every power-of-two split, on a custom
# shape (d 128, 4 layers, 4 heads, a vocabulary of 2048).
effective = 16
micro = pow2
model = gpt:d=128,layers=4,heads=4,seq=64,vocab=2048
budget-s = 1
min-samples = 3
trace-steps = 2
