/* <slave.h> of the Sunway toolchain (CPE side: ids, synchronisation, LDM, register
 * communication): on the emulator, part of its athread.h. CPE code includes the toolchain's
 * names, so it builds for the chip unchanged. */
#include "athread.h"
