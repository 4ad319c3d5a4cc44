/* y[j][k][i] (+)= x[i][k][j] on the CPEs (args.h). A task is a tile of ta x tb elements of one
 * k: its CPE gets ta runs of tb floats from x (one strided transfer), transposes them in LDM
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

static void tile(const SwTransposeArgs *p, const SwTransposeTiling *t, int64_t task, float *in,
                 float *out) {
  int64_t jb = task % t->nb, ib = task / t->nb % t->na, k = task / t->nb / t->na;
  int64_t i0 = ib * t->ta, j0 = jb * t->tb;
  int64_t ni = p->a - i0 < t->ta ? p->a - i0 : t->ta, nj = p->b - j0 < t->tb ? p->b - j0 : t->tb;
  get_rows(in, p->x + (i0 * p->mid + k) * p->b + j0, ni, nj, p->mid * p->b);
  float *y = p->y + (j0 * p->mid + k) * p->a + i0;
  if (p->add) get_rows(out, y, nj, ni, p->mid * p->a);
  for (int64_t j = 0; j < nj; j++)
    for (int64_t i = 0; i < ni; i++)
      out[j * ni + i] = p->add ? out[j * ni + i] + in[i * nj + j] : in[i * nj + j];
  if (p->add) cpe_count_flops(ni * nj);
  cpe_count_ldm(ni * nj * (p->add ? 3 : 2)); /* loads (out's too when adding) and a store */
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
