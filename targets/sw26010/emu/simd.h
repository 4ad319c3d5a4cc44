/* <simd.h> of the Sunway toolchain (the 256-bit vector types and simd_* operations): on the
 * emulator, part of its athread.h. CPE code includes the toolchain's names, so it builds for the
 * chip unchanged. */
#include "athread.h"
