# A Llama sized for a laptop's CPU, the gpt-cpu profile's sizes: 16
# sequences of 64 tokens a step, every power-of-two split, on the
# llama-cpu preset (d 128, 4 layers, 4 query heads over 2 key/value heads,
# ffn 352, a vocabulary of 2048).
effective = 16
micro = pow2
model = llama-cpu
budget-s = 1
min-samples = 3
trace-steps = 2
