#ifndef SWNC_EMULATOR_BENCH_H
#define SWNC_EMULATOR_BENCH_H
#include <stdint.h>
typedef struct EmuBench {
  int64_t words;  /* RLC values per sender */
  int64_t floats; /* streamed by DMA */
  const float *data;
} EmuBench;
#endif
