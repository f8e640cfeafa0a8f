# make bench where no GPU answers: a sweep sized for a CPU, four to eight
# minutes on 2 cores (the default profile, effective batch 256 on S, M and
# L, takes over ten there; make bench-full runs it). Effective batch 64 as
# every power-of-two split on the tiny model (where per-op overhead rules),
# on S and on M (where the GEMMs do); a config whose step would take over
# 4 s (M at 1x64 and 2x32 on 2 cores) is skipped with the measured reason:
# at 5, M's 2x32 (a one-pass estimate of 4.9-5.7 s, steps of 5.9 s) ran in
# one run of two and added two and a half minutes. 16 is
# named twice: 16x4 timed beside itself (an A/A pair), so that every run
# checks its own verdicts' rule (docs/measuring.md, "The A/A check").
effective = 64
micro = 64,32,16,16,8,4,2,1
model = tiny,S,M
max-step-s = 4
