/* y[j][k][i] (+)= x[i][k][j] on the CPEs (args.h). A task is a tile of ta x tb elements of one
 * k: its CPE gets ta runs of tb floats from x (one strided transfer), transposes them in LDM
 * (in 4x4 blocks of vectors when both sides are multiples of 4, as swCaffe's transforms do)
 * and puts tb runs of ta floats into y (one strided transfer; read first when adding). Tiles
 * are dealt round-robin to the 64 CPEs; no two write one element. */
#include "args.h"
#include "cpe.h"

/* rows runs of `run` floats, `ld` floats apart in memory, to or from LDM. */
static void get_rows(float *ldm, const float *mem, int64_t rows, int64_t run, int64_t ld) {
  if (rows == 1 || run == ld)
    cpe_get(ldm, mem, (int)(4 * rows * run));
  else
    cpe_get_strided(ldm, mem, (int)(4 * rows * run), (int)(4 * run), (int)(4 * (ld - run)));
}

static void put_rows(float *mem, const float *ldm, int64_t rows, int64_t run, int64_t ld) {
  if (rows == 1 || run == ld)
    cpe_put(mem, ldm, (int)(4 * rows * run));
  else
    cpe_put_strided(mem, ldm, (int)(4 * rows * run), (int)(4 * run), (int)(4 * (ld - run)));
}

/* out (nj x ni) (+)= in (ni x nj) transposed, element by element: a load and a store each (and
 * a load of out when adding) on the memory pipeline. */
static void transpose_scalars(const float *in, float *out, int64_t ni, int64_t nj, int add) {
  for (int64_t j = 0; j < nj; j++)
    for (int64_t i = 0; i < ni; i++)
      out[j * ni + i] = add ? out[j * ni + i] + in[i * nj + j] : in[i * nj + j];
  if (add) cpe_count_flops(ni * nj);
  cpe_count_ldm(ni * nj * (add ? 3 : 2));
}

/* The 4 rows r0..r3 of a 4x4 block become its 4 columns, by 8 shuffles. */
static void transpose4(floatv4 *r0, floatv4 *r1, floatv4 *r2, floatv4 *r3) {
  floatv4 o0 = simd_vshff(*r1, *r0, 0x44), o1 = simd_vshff(*r1, *r0, 0xEE); /* a0 a1 b0 b1 ... */
  floatv4 o2 = simd_vshff(*r3, *r2, 0x44), o3 = simd_vshff(*r3, *r2, 0xEE);
  *r0 = simd_vshff(o2, o0, 0x88), *r1 = simd_vshff(o2, o0, 0xDD); /* a0 b0 c0 d0 ... */
  *r2 = simd_vshff(o3, o1, 0x88), *r3 = simd_vshff(o3, o1, 0xDD);
}

/* The same in 4x4 blocks of vectors (ni and nj multiples of 4): per block 4 loads, 4 stores
 * (and 4 loads of out when adding) on the memory pipeline, the shuffles on the arithmetic one. */
static void transpose_vectors(const float *in, float *out, int64_t ni, int64_t nj, int add) {
  for (int64_t i = 0; i < ni; i += 4)
    for (int64_t j = 0; j < nj; j += 4) {
      floatv4 r[4];
      for (int k = 0; k < 4; k++) simd_load(r[k], in + (i + k) * nj + j);
      transpose4(&r[0], &r[1], &r[2], &r[3]);
      for (int k = 0; k < 4; k++) {
        float *o = out + (j + k) * ni + i;
        if (add) {
          floatv4 v;
          simd_load(v, o);
          r[k] = simd_vadds(v, r[k]);
        }
        simd_store(r[k], o);
      }
    }
  if (add) cpe_count_vector_flops(ni * nj);
  cpe_count_ldm(ni * nj / 16 * (add ? 12 : 8));
}

static void tile(const SwTransposeArgs *p, const SwTransposeTiling *t, int64_t task, float *in,
                 float *out) {
  int64_t jb = task % t->nb, ib = task / t->nb % t->na, k = task / t->nb / t->na;
  int64_t i0 = ib * t->ta, j0 = jb * t->tb;
  int64_t ni = p->a - i0 < t->ta ? p->a - i0 : t->ta, nj = p->b - j0 < t->tb ? p->b - j0 : t->tb;
  get_rows(in, p->x + (i0 * p->mid + k) * p->b + j0, ni, nj, p->mid * p->b);
  float *y = p->y + (j0 * p->mid + k) * p->a + i0;
  if (p->add) get_rows(out, y, nj, ni, p->mid * p->a);
  if (ni % 4 == 0 && nj % 4 == 0)
    transpose_vectors(in, out, ni, nj, p->add);
  else
    transpose_scalars(in, out, ni, nj, p->add);
  put_rows(y, out, nj, ni, p->mid * p->a);
}

void sw_transpose(void *arg) {
  SwTransposeArgs p;
  cpe_get(&p, arg, sizeof p);
  SwTransposeTiling t = sw_transpose_tiling(p.a, p.b);
  float *in = ldm_malloc(sizeof(float) * SW_TRANSPOSE_FLOATS),
        *out = ldm_malloc(sizeof(float) * SW_TRANSPOSE_FLOATS);
  for (int64_t task = _MYID; task < t.na * t.nb * p.mid; task += 64) tile(&p, &t, task, in, out);
  ldm_free(out, sizeof(float) * SW_TRANSPOSE_FLOATS);
  ldm_free(in, sizeof(float) * SW_TRANSPOSE_FLOATS);
}
