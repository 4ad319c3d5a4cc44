/* IEEE half precision for communication: conversions (round to nearest even) and MPI's sum. */
#ifndef SWNC_COMM_HALF_H
#define SWNC_COMM_HALF_H

#include <mpi.h>
#include <stdint.h>

uint16_t swn_half_of(float f);
float swn_float_of_half(uint16_t h);
void swn_halves_of(int64_t n, const float *from, uint16_t *to);
void swn_floats_of(int64_t n, const uint16_t *from, float *to);
void swn_add_halves(int64_t n, const uint16_t *from, float *into);
/* x[i] = float(half(x[i])) x times (a power of two: exact). */
void swn_round_to_half(int64_t n, float *x, float times);
/* MPI_Allreduce's operation on halves (MPI_UINT16_T): a partial sum is added in float and
 * rounded again. Commutative. */
MPI_Op swn_half_sum_op(void);

#endif
