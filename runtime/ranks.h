/* The process among the ranks (docs/runtime.md, "Distributed training"). */
#ifndef SWNC_RT_RANKS_H
#define SWNC_RT_RANKS_H

#include "options.h"

/* MPI_Init (every generated program is an MPI program; one process started without mpirun is
 * a world of one). Errors then name the rank and stop all ranks. */
void swn_mpi_start(int *argc, char ***argv);
/* Whether an MPI launcher started this process (its standard output is then no guide to the
 * user's terminal). */
bool swn_mpi_launched(void);
int swn_mpi_rank(void);
int swn_mpi_size(void);
int swn_mpi_node_size(void);    /* ranks on this machine */
int swn_mpi_thread_level(void); /* MPI_THREAD_* granted */

/* Exits with a message naming the first rank whose program or options differ from rank 0's. */
void swn_ranks_check_same(const SwnNetwork *net, const SwnOptions *o, const int64_t *extra,
                          int nextra);

void swn_broadcast_floats(float *v, int64_t n); /* from rank 0 */
void swn_broadcast_int64(int64_t *v, int n);
void swn_sum_doubles(double *v, int n); /* over all ranks, in place */

#endif
