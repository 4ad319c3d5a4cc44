/* <dma.h> of the Sunway toolchain (CPE side: athread_get / athread_put, descriptors, reply
 * counters): on the emulator, part of its athread.h. CPE code includes the toolchain's names, so
 * it builds for the chip unchanged. */
#include "athread.h"
