# mk/run.mk: the targets that run the built program and turn its CSVs into
# charts and reports: bench, bench-full, regress, bench-dp, nsys,
# readme-figures, plots, report, bench-report-scale, the PyTorch peers.
# Included by the Makefile, last. Apart because they build nothing of
# their own: each runs the program, or a script with it, knobs as data.

.PHONY: bench bench-full regress bench-dp plots report nsys peers peers-ddp peer-ratio

# ------------------------------------------------------------- nsys
# The abc profile under Nsight Systems, collector off (nsys wants to be
# CUPTI's only subscriber); capture from the first cudaProfilerStart (the
# first timed pass) to the end. docs/nsight-systems.md says how to read it.
NSYS ?= nsys
nsys: $(BIN)
	$(Q)nsys=$(call knob,NSYS); if ! command -v "$$nsys" >/dev/null 2>&1; then \
	    echo "make nsys: $$nsys not found. Install Nsight Systems (the CUDA toolkit's"; \
	    echo "  nsight-systems package, or https://developer.nvidia.com/nsight-systems)"; \
	    echo "  and put nsys on PATH, or run: make nsys NSYS=/path/to/nsys"; exit 1; fi
	$(Q)mkdir -p results
	$(call knob,NSYS) profile -t cuda,nvtx,cublas --capture-range=cudaProfilerApi \
	    --capture-range-end=none --force-overwrite=true -o results/accubench-abc \
	    $(BIN) run --profile abc --backend cuda --no-cupti --trace-steps 0 --out results
	@echo "open results/accubench-abc.nsys-rep in Nsight Systems (docs/nsight-systems.md)"

# -------------------------------------------------------------- running
# The sweep, then its charts and report (scripts/bench.sh). Without PROFILE
# the profile is sized for what runs it: default where a GPU answers, cpu
# otherwise (it says which); bench-full runs the default anywhere.
bench: $(BIN)
	$(Q)sh scripts/bench.sh $(BIN) $(call knob,PROFILE) results

bench-full: $(BIN)
	$(Q)sh scripts/bench.sh $(BIN) default results

# Is this tree slower than revision BASE? Both built, the same profile
# (PROFILE, default abc) run RUNS times each in ABBA order, then compare
# over the runs (scripts/regress.sh). BASE_BIN=PROGRAM: against a program
# already built.
BASE ?=
BASE_BIN ?=
RUNS ?= 3
regress: $(BIN)
	$(Q)sh scripts/regress.sh $(BIN) $(call knob,BASE) $(call knob,RUNS) $(call knob,PROFILE) \
	    results/regress-$$(date +%Y%m%d-%H%M%S) $(call knob,BASE_BIN)

# Data parallel on the CPU backend: the ranks share the cores
# (scripts/bench_dp.sh).
DP_RANKS ?= 2
MPIRUN   ?= mpirun
# The profile and the device counts it runs at (a sharded one needs ranks:
# DP_DEVICES=2 for profiles/frontier-dp); none given: 1..DP_RANKS.
DP_PROFILE ?= dp
DP_DEVICES ?=
bench-dp: $(BIN)
	$(Q)sh scripts/bench_dp.sh $(BIN) results $(call knob,MPIRUN) $(call knob,DP_RANKS) \
	    $(call knob,DP_PROFILE) $(call knob,DP_DEVICES)

# README.md's table and chart, from a real run: the abc profile on the CPU
# backend (a minute or two on two cores), its console table into
# docs/img/abc-console.txt and its wall-clock chart into
# docs/img/abc-wallclock.png, both or neither (scripts/readme_figures.sh).
# The CSV and the other charts stay in $(BUILD)/readme. Paste the table
# into README.md when it changed.
README_RUN := $(BUILD)/readme
readme-figures: $(BIN)
	$(Q)sh scripts/readme_figures.sh $(BIN) $(README_RUN) docs/img
.PHONY: readme-figures

# ------------------------------------------------- charts and reports
# CSV=FILE picks the run; without it, the newest results/*.csv with rows,
# its loss-curves file aside (scripts/pick_csv.sh; named).
# Charts (PNG + SVG) and the report land next to the CSV. CSV is a knob
# (above): its text is a name, never code.
plots: $(BIN)
	$(Q)sh scripts/plots.sh $(call knob,CSV)

report: $(BIN)
	$(Q)csv=$$(sh scripts/pick_csv.sh $(call knob,CSV)) && $(BIN) report "$$csv"

# report and compare on generated CSVs of 10^4, 10^5 and 10^6 rows (or
# SCALE_ROWS="N ..."): wall time and peak memory of each.
.PHONY: bench-report-scale
bench-report-scale: $(BIN)
	$(Q)$(call knob_words,SCALE_ROWS) sh scripts/bench_report_scale.sh $(BIN) "$$@"

# ------------------------------------------------- the PyTorch peer
# bench/peers/torch_accum.py beside accubench (scripts/peers.sh); without
# PyTorch it says how to install it and fails. peer-ratio: accubench CPU
# against each PyTorch mode on the A/B/C splits, interleaved, 3 repeats;
# then the GPT (profiles/gpt-cpu's shape, E = 16 at 16x1, 4x4 and 1x16)
# against the peer's nanoGPT-style eager step with fused AdamW.
# PEER_RATIO_ARGS goes to both (e.g. --torch-env OMP_WAIT_POLICY=PASSIVE).
PYTHON ?= python3
peers: $(BIN)
	$(Q)PYTHON=$(call knob,PYTHON) sh scripts/peers.sh $(BIN) results

# peers-ddp: data parallel, both sides on DP_RANKS ranks on the CPU
# (scripts/peers_ddp.sh): accubench in every sync mode, the peer's DDP with
# and without no_sync, into one CSV, then the report.
PEER_DDP_PROFILE ?= dp
peers-ddp: $(BIN)
	$(Q)PYTHON=$(call knob,PYTHON) MPIRUN=$(call knob,MPIRUN) sh scripts/peers_ddp.sh $(BIN) \
	    results $(call knob,PEER_DDP_PROFILE) $(call knob,DP_RANKS)

PEER_RATIO_GPT ?= gpt:d=128,layers=4,heads=4,seq=64,vocab=2048
PEER_RATIO_GPT_MODES ?= eager-fused
peer-ratio: $(BIN)
	$(Q)if ! $(call knob,PYTHON) -c "import torch" >/dev/null 2>&1; then \
	    echo "make peer-ratio: PyTorch is not installed: pip install torch"; exit 1; fi
	$(Q)$(call knob_words,PEER_RATIO_ARGS) \
	    $(call knob,PYTHON) bench/peers/peer_ratio.py --accubench $(BIN) "$$@"
	$(Q)$(call knob_words,PEER_RATIO_ARGS) \
	    $(call knob,PYTHON) bench/peers/peer_ratio.py --accubench $(BIN) \
	    --model $(call knob,PEER_RATIO_GPT) --effective 16 --micro 16,4,1 \
	    --mode $(call knob,PEER_RATIO_GPT_MODES) --out results/peer-ratio-gpt "$$@"
