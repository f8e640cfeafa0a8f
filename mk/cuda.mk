# mk/cuda.mk: the CUDA backend (kernels/cuda: the kernels, the CUPTI
# collector, the cuBLAS loader), the NCCL engine (kernels/nccl) and the GPU
# check (build/gpu-check, make check-gpu). Included by the Makefile.
# Apart because it is the part of the build that needs nvcc: here the
# build decides whether the program has the CUDA backend (CUDA_DEFINE,
# BACKEND_LIBS), and where nvcc is missing all of it but that choice is
# idle. The probes the e2e tests link against it are in mk/tests.mk.

.PHONY: check-gpu

# The CUDA backend and the CUPTI collector, built only where nvcc is.
CUDA_CU  := $(wildcard kernels/cuda/*.cu)
CUDA_C   := $(wildcard kernels/cuda/*.c)
CUDA_OBJ := $(CUDA_CU:%.cu=$(BUILD)/obj/%.o) $(CUDA_C:%.c=$(BUILD)/obj/%.o)
CUDA_LIB := $(BUILD)/libaccubench_cuda.a
CUDA_LIBDIRS := -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/extras/CUPTI/lib64 \
                -Wl,-rpath,$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/extras/CUPTI/lib64
# cupti.h: in the toolkit's include/ (packaged toolkits), or in
# extras/CUPTI/include (the runfile installer's layout).
CUPTI_INC := $(firstword $(foreach d,$(CUDA_HOME)/include $(CUDA_HOME)/extras/CUPTI/include,\
                 $(if $(wildcard $(d)/cupti.h),$(d))))
# cuBLAS and cuBLASLt are not linked: the backend opens them when it
# starts (kernels/cuda/cublas_load.h), so that no other start pays for them.
CUDA_LDLIBS  := $(CUDA_LIBDIRS) -lcupti -lcudart -lstdc++ -lrt -ldl
NVCCFLAGS := -std=c++17 -O3 -g $(NVCC_GENCODE) -Xcompiler -Wall,-Wextra$(if $(WERROR_FLAG),$(comma)-Werror) \
             $(if $(WERROR_FLAG),-Werror all-warnings) $(INC_kernels) -Ikernels/cuda

ifneq ($(and $(filter 1,$(HAVE_NVCC)),$(CUDA_CU)),)
BACKEND_LIBS := $(CUDA_LIB) $(CORE_LIB)
BACKEND_LDLIBS := $(CUDA_LDLIBS)
CUDA_DEFINE := -DACCUBENCH_HAVE_CUDA=1
else
BACKEND_LIBS := $(CORE_LIB)
BACKEND_LDLIBS :=
CUDA_DEFINE :=
endif

# The NCCL engine (the data-parallel paragraph in the Makefile; the MPI
# engine is there): only where the CUDA backend is built.
ifneq ($(and $(filter 1,$(HAVE_NCCL)),$(CUDA_DEFINE)),)
DP_OBJ    += $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard kernels/nccl/*.c))
DP_DEFINE += -DACCUBENCH_HAVE_NCCL=1
DP_LDLIBS += -L$(NCCL_LIBDIR) -Wl,-rpath,$(NCCL_LIBDIR) $(NCCL_LINK)
$(BUILD)/obj/kernels/nccl/%.o: ROOM_INC := $(INC_kernels) -Ikernels/nccl -Ikernels/mpi -Ikernels/cuda
# NCCL_INC is empty where nccl.h is in the compiler's own /usr/include
# (Debian's libnccl-dev): naming a system folder again with -isystem
# reorders the search. MPI's flags and define only where MPI is.
$(BUILD)/obj/kernels/nccl/%.o: CPPFLAGS += -isystem $(CUDA_HOME)/include \
    $(if $(NCCL_INC),-isystem $(NCCL_INC)) \
    $(if $(filter 1,$(HAVE_MPI)),$(MPI_CFLAGS) -DACCUBENCH_HAVE_MPI=1)
endif

# The CUDA backend's C files see their own folder (the rooms' lists are in
# the Makefile).
$(BUILD)/obj/kernels/cuda/%.o: ROOM_INC := $(INC_kernels) -Ikernels/cuda

# -MMD -MP as for the C objects: an edit of a header a kernel includes
# (elementwise.h's math, backend.h's struct layout) rebuilds that kernel.
$(BUILD)/obj/kernels/cuda/%.o: kernels/cuda/%.cu $(BUILD)/config.mk
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC  $<")
	$(Q)$(NVCC) $(NVCCFLAGS) -MMD -MP -MF $(@:.o=.d) -c $< -o $@

# CUDA/CUPTI C sources see the CUDA headers; the core never does.
$(BUILD)/obj/kernels/cuda/%.o: CPPFLAGS += -isystem $(CUDA_HOME)/include \
    $(if $(CUPTI_INC),-isystem $(CUPTI_INC))

$(CUDA_LIB): $(CUDA_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

# ------------------------------------------------------------ GPU check
# build/gpu-check (only where the CUDA backend is built): the CUDA backend
# op by op against the CPU reference. `make check-gpu` is the GPU box's one
# call: build, gpu-check, the sweeps, a compact table (scripts/check_gpu.sh),
# results in CHECK_OUT. It never installs packages.
GPU_CHECK := $(BUILD)/gpu-check
CHECK_OUT ?= results/check-gpu
QUICK     ?= 0
# Without a GPU the check says so in one line; this rehearses it on the CPU.
CHECK_GPU_REHEARSE ?= 0
ifneq ($(CUDA_DEFINE),)
all: $(GPU_CHECK)
GPU_CHECK_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard bench/gpu_check/*.c))
$(GPU_CHECK_OBJ): $(BUILD)/bench-flags
# gpu-check opens its device from the program's backend table.
$(GPU_CHECK_OBJ): ROOM_INC += -Ibench
$(GPU_CHECK): $(GPU_CHECK_OBJ) $(BUILD)/obj/bench/backend_registry.o $(DP_OBJ) $(BACKEND_LIBS)
	@$(if $(Q),echo "  LD    $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(DP_LDLIBS) $(BACKEND_LDLIBS)
-include $(GPU_CHECK_OBJ:.o=.d)
endif
ifneq ($(filter check-gpu,$(MAKECMDGOALS)),)
export ACCUBENCH_NO_INSTALL := 1
endif
# The script's own settings (CHECK_ONLY, CHECK_SKIP_BUILD, CHECK_BUDGET_S,
# CHECK_SANITIZER) are knobs too, passed whether given to make or in the
# environment: given to make they were unexported with the rest, and
# `make check-gpu CHECK_ONLY=sweep` ran the whole check.
check-gpu:
	$(Q)CHECK_OUT=$(call knob,CHECK_OUT) CHECK_QUICK=$(call knob,QUICK) BUILD='$(BUILD)' \
	    CHECK_GPU_REHEARSE=$(call knob,CHECK_GPU_REHEARSE) CHECK_ONLY=$(call knob,CHECK_ONLY) \
	    CHECK_SKIP_BUILD=$(call knob,CHECK_SKIP_BUILD) CHECK_BUDGET_S=$(call knob,CHECK_BUDGET_S) \
	    CHECK_SANITIZER=$(call knob,CHECK_SANITIZER) sh scripts/check_gpu.sh
