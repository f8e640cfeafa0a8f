# Data parallel on the CPU (make bench-dp, under mpirun): model S at a fixed
# effective batch of 64 over every device count up to the ranks started,
# under every sync mode (the gradient all-reduced per micro-batch, per
# window, or overlapped with the last backward). At 2 devices, micro-batch
# 4 is K = 8, 8 is K = 4.
effective = 64
micro = 4,8,16,32
model = S
sync = all
budget-s = 2
trace-steps = 0
