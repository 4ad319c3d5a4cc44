# The rules of the Makefile `swnc --target=sw26010 --emit=c -o DIR` writes (after a header
# naming NET, the network's C file): the network and the runtime are MPE code, the kernel set
# is MPE code (kernels/*.c, cost/) and CPE code (kernels/*_cpe.c). docs/targets.md.
#
#   make           for the chip: sw5cc -host (MPE), sw5cc -slave -msimd (CPE), mpicc -hybrid
#   make emulate   the same sources against swnc's CPE-cluster emulator, to run here: NET-emu
#   make clean
#
# Run: one process per node drives its chip's 4 core groups (a worker thread and 64 CPEs
# each); N nodes train data-parallel. For example (queue, sizes and node count to taste):
#   bsub -I -b -q q_sw_expr -N 4 -np 1 -cgsp 64 -cross -share_size 4096 -host_stack 1024 \
#        ./NET --iterations 2 --profile

SWNC     = swnc
KERNELS  = $(SWNC)/targets/sw26010/kernels
EMU      = $(SWNC)/targets/sw26010/emu
RUNTIME  = $(wildcard $(SWNC)/runtime/*.c $(SWNC)/runtime/comm/*.c)
MPE      = $(filter-out %_cpe.c,$(wildcard $(KERNELS)/*.c)) $(wildcard $(SWNC)/targets/sw26010/cost/*.c)
# kernels still on the MPE: the host target's portable sources, serial, renamed mpe_* (mpe.c)
FALLBACK = $(wildcard $(SWNC)/targets/host/*.c)
CPE      = $(wildcard $(KERNELS)/*_cpe.c)
INCLUDE  = -I$(SWNC)/runtime -I$(KERNELS) -DSWNC_VERSION=\"$(SWNC_VERSION)\"
FALLBACK_FLAGS = -include $(KERNELS)/mpe_compat/mpe_names.h -I$(KERNELS)/mpe_compat
LIBS     = -lturbojpeg -lz -lpthread -lm

# The chip. sw5cc -host needs MPI's headers for the runtime: set MPI_INCLUDE to the machine's.
# A process driving all 4 core groups (--core-groups 4, the default) needs the job system's
# shared mode (the Sunway toolchain: link with -allshare, run with -cross); with --core-groups 1,
# run 4 processes per node instead.
MPE_CC      = sw5cc -host
CPE_CC      = sw5cc -slave -msimd
LINK        = mpicc -hybrid
MPI_INCLUDE = -I/usr/sw-mpp/mpi2/include
CFLAGS      = -O2

# Here: the emulator provides athread.h, slave.h, dma.h and simd.h; CPE objects get their
# globals renamed slave_* as the slave compiler names them (emu/cpe_symbols.sh).
EMU_CC     = mpicc
EMU_CFLAGS = -O2 -std=gnu11 -pthread -Wno-psabi -I$(EMU)
NM         = nm
OBJCOPY    = objcopy

sw  = $(patsubst %.c,build/sw/%.o,$(1))
emu = $(patsubst %.c,build/emu/%.o,$(1))

all: $(NET)

$(NET): $(call sw,$(NET).c $(RUNTIME) $(MPE) $(FALLBACK) $(CPE))
	$(LINK) -o $@ $^ $(LIBS)

build/sw/$(KERNELS)/%_cpe.o: $(KERNELS)/%_cpe.c
	@mkdir -p $(dir $@)
	$(CPE_CC) $(CFLAGS) -I$(KERNELS) -I$(SWNC)/runtime -c $< -o $@

build/sw/$(SWNC)/targets/host/%.o: $(SWNC)/targets/host/%.c
	@mkdir -p $(dir $@)
	$(MPE_CC) $(CFLAGS) $(INCLUDE) $(FALLBACK_FLAGS) -c $< -o $@

build/sw/%.o: %.c
	@mkdir -p $(dir $@)
	$(MPE_CC) $(CFLAGS) $(INCLUDE) $(MPI_INCLUDE) -c $< -o $@

emulate: $(NET)-emu

$(NET)-emu: $(call emu,$(NET).c $(RUNTIME) $(MPE) $(FALLBACK) $(EMU)/emu.c $(EMU)/memcheck.c $(EMU)/tiling.c) build/emu/cpe.o
	$(EMU_CC) -pthread -Wl,--wrap=aligned_alloc,--wrap=free -o $@ $^ $(LIBS) -ldl

build/emu/cpe.o: $(call emu,$(CPE))
	ld -r -o $@.in.o $^
	sh $(EMU)/cpe_symbols.sh $(NM) $(OBJCOPY) $@.in.o $@

build/emu/$(KERNELS)/%_cpe.o: $(KERNELS)/%_cpe.c
	@mkdir -p $(dir $@)
	$(EMU_CC) $(EMU_CFLAGS) -I$(KERNELS) -I$(SWNC)/runtime -c $< -o $@

build/emu/$(SWNC)/targets/host/%.o: $(SWNC)/targets/host/%.c
	@mkdir -p $(dir $@)
	$(EMU_CC) $(EMU_CFLAGS) $(INCLUDE) $(FALLBACK_FLAGS) -Wno-unknown-pragmas -c $< -o $@

build/emu/%.o: %.c
	@mkdir -p $(dir $@)
	$(EMU_CC) $(EMU_CFLAGS) $(INCLUDE) -c $< -o $@

clean:
	rm -rf build $(NET) $(NET)-emu

.PHONY: all emulate clean
