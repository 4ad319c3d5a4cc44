/* NumPy's .npy format (version 1.0 to 3.0) for float32 arrays in C order: what --infer reads
 * and writes. The format: the magic "\x93NUMPY", a version, the header's length, then the
 * header (a Python dict literal: 'descr', 'fortran_order', 'shape') padded to 64 bytes, then
 * the data. */
#ifndef SWNC_RT_NPY_H
#define SWNC_RT_NPY_H

#include <stdint.h>

enum { SWN_NPY_MAX_DIMS = 8 };

typedef struct SwnNpy {
  int ndims;
  int64_t dims[SWN_NPY_MAX_DIMS];
  int64_t count; /* elements: the product of dims */
  float *data;   /* swn_alloc'd */
} SwnNpy;

/* Reads a little-endian float32 ('<f4') C-order array; any other file is a fatal error naming
 * the file and what is wrong. */
SwnNpy swn_npy_read(const char *path);
/* Writes data (the product of dims floats) as a version 1.0 '<f4' array, through a temporary
 * file renamed over path. */
void swn_npy_write(const char *path, const float *data, int ndims, const int64_t *dims);

#endif
