/* The instruction sets the host kernels have micro-kernels for, widest first, and the one a
 * process uses: the widest this CPU runs, or a narrower one named by SWN_ISA in the
 * environment. One definition for the kernels (gemm.c) and the target's description, which
 * `swnc --explain` prints. */
#ifndef SWNC_HOST_ISA_H
#define SWNC_HOST_ISA_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The x86 vector kernels are compiled where GCC targets x86-64, except into a kernel set that
 * runs these kernels on another processor's scalar core (SWNC_HOST_PLAIN_C: the sw26010 set's
 * management-core fallbacks, which its plans never choose for a convolution): plain C there,
 * as on the chip. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(SWNC_HOST_PLAIN_C)
#define HOST_X86_KERNELS 1
#endif

static const char *const host_isas[] = {
#ifdef HOST_X86_KERNELS
    "avx512",
    "avx2",
#endif
    "c",
};
enum { HOST_ISA_COUNT = sizeof host_isas / sizeof host_isas[0] };

static inline bool host_isa_runs(const char *isa) {
#ifdef HOST_X86_KERNELS
  if (!strcmp(isa, "avx512")) return __builtin_cpu_supports("avx512f");
  if (!strcmp(isa, "avx2")) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return !strcmp(isa, "c");
}

/* Where `isa` stands in host_isas (the kernels' tables follow its order); the last (plain C)
 * if it is none of them. */
static inline int host_isa_index(const char *isa) {
  for (int i = 0; i < HOST_ISA_COUNT; i++)
    if (!strcmp(host_isas[i], isa)) return i;
  return HOST_ISA_COUNT - 1;
}

/* The widest this CPU runs, or SWN_ISA's choice if it names a narrower one the CPU runs. */
static inline const char *host_isa_choice(void) {
  int widest = 0;
  while (widest < HOST_ISA_COUNT - 1 && !host_isa_runs(host_isas[widest])) widest++;
  const char *wanted = getenv("SWN_ISA");
  for (int i = widest; wanted && i < HOST_ISA_COUNT; i++)
    if (!strcmp(host_isas[i], wanted) && host_isa_runs(wanted)) return host_isas[i];
  return host_isas[widest];
}

#endif
