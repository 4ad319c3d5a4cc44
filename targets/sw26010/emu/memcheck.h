/* The emulator's checking mode for direct main-memory access by CPE code (memcheck.c). */
#ifndef SWEMU_MEMCHECK_H
#define SWEMU_MEMCHECK_H

#include <stdbool.h>
#include <stddef.h>

bool swemu_check_enabled(void);           /* SWEMU_CHECK_MEMORY is set (and not 0) */
void swemu_check_begin(void);             /* a core group starts running its CPEs */
void swemu_check_end(void);               /* ... and they stopped */
char *swemu_check_dma_address(char *mem); /* where the DMA engine reaches `mem` */
void swemu_check_release(void);           /* everything accessible again (before an error exit) */

/* emu.c: a fault at `address` in a checked block; stops the program with an error if this
 * thread is running a CPE, else returns. */
void swemu_check_cpe_fault(void *address, void *block, size_t bytes);

#endif
