/* The MPE is one core: OpenMP loops in the MPE fallbacks (mpe.c) run serially. */
#ifndef SWNC_SW26010_OMP_H
#define SWNC_SW26010_OMP_H
static inline int omp_get_thread_num(void) { return 0; }
static inline int omp_get_num_threads(void) { return 1; }
#endif
