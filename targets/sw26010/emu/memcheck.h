/* The emulator's checking mode for direct main-memory access by CPE code (memcheck.c). */
#ifndef SWEMU_MEMCHECK_H
#define SWEMU_MEMCHECK_H

#include <stdbool.h>
#include <stddef.h>

bool swemu_check_enabled(void); /* SWEMU_CHECK_MEMORY is set (and not 0) */
/* A fault at `address` in a checked block of `bytes`: stops the program with an error if the
 * faulting thread is running a CPE, else returns (the emulator's, emu.c). */
typedef void (*SwemuCpeFault)(void *address, void *block, size_t bytes);

void swemu_check_begin(SwemuCpeFault on_cpe_fault); /* a core group starts running its CPEs */
void swemu_check_end(void);                         /* ... and they stopped */
char *swemu_check_dma_address(char *mem);           /* where the DMA engine reaches `mem` */
void swemu_check_release(void); /* everything accessible again (before an error exit) */

#endif
