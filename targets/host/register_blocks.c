/* The direct convolution's register blocks in plain C, the reference every instruction set's
 * blocks (register_blocks_<isa>.c) agree with; the footprint checks of their entry points
 * (unchecked.h); and the choice among them, once per process (isa.h). */
#include <math.h>
#include <pthread.h>

#include "conv_direct.h"
#include "isa.h"
#include "register_blocks.h"
#include "unchecked.h"

/* ------------------------------------------------------------------ plain C: the reference
 * Its products are added with fmaf, as the vector strips' FMAs add them: written a * b + c,
 * GCC contracted some inlined copies into FMAs and not others (-ffp-contract=fast, the GNU
 * dialect's default) where the CPU has FMA, and a tiling's passes then differed from one pass
 * in the last bit (tests/targets/test_conv_blocked.c, on an AVX-512 Xeon). */

static void c_strip(int nb, int np, const Strip *s) {
  for (int b = 0; b < nb; b++)
    for (int r = 0; r < s->rows; r++)
      for (int p = 0; p < np; p++)
        for (int o = 0; o < 16; o++) {
          /* the sum starts from y or the bias as the vector strips' accumulators do, so a
           * tiling's passes over the input blocks (direct_tiling.h) give the same results */
          float *y = &s->y[b * s->y_block + r * s->y_rows + p * s->y_pixel + o];
          float sum = s->accumulate ? *y : s->bias ? s->bias[b * 16 + o] : 0;
          for (int cb = 0; cb < s->blocks_in; cb++)
            for (int kh = s->kh0; kh < s->kh1; kh++)
              for (int kw = 0; kw < s->kw; kw++)
                for (int l = 0; l < strip_lanes(s, cb); l++) {
                  const float *x =
                      strip_tap_x(s, cb, kh, kw) + r * s->x_rows + p * s->x_pixel + l * s->x_lane;
                  sum = fmaf(strip_tap_w(s, cb, kh, kw)[b * s->w_block + l * 16 + o], *x, sum);
                }
          if (s->relu && !(sum > 0)) sum = s->relu_slope * sum;
          const float *mask = s->mask ? s->mask + (y - s->y) : NULL;
          *y = mask && !(*mask > 0 && *mask < s->mask_ceiling) ? s->mask_slope * sum : sum;
        }
}

static void c_tile(int nb, int nl, const Tile *t) {
  for (int b = 0; b < nb; b++)
    for (int i = 0; i < nl; i++)
      for (int o = 0; o < 16; o++) {
        float sum = t->fresh ? 0 : t->sum[b * t->sum_block + i * 16 + o];
        for (int n = 0; n < t->images; n++)
          for (int r = 0; r < t->rows; r++)
            for (int ow = 0; ow < t->wo; ow++)
              sum =
                  fmaf(t->dy[n * t->dy_image + b * t->dy_block + r * t->dy_row + ow * 16 + o],
                       t->x[n * t->x_image + r * t->x_row + ow * t->x_pixel + i * t->x_lane], sum);
        t->sum[b * t->sum_block + i * 16 + o] = sum;
      }
}

/* ------------------------------------------------------------------ footprints (unchecked.h) */

/* The floats a run of n values `stride` apart spans. */
static size_t run_floats(int n, ptrdiff_t stride) {
  return n > 0 ? (size_t)(n - 1) * (size_t)stride + 1 : 0;
}

/* Checks values [first, first + n pixels) of `lanes` channels: one region when channels are
 * adjacent floats (the blocked layout), else a region per channel (planar, few channels). */
static void check_pixels(const float *first, int lanes, ptrdiff_t lane, int n, ptrdiff_t pixel) {
  if (lane == 1) {
    check_region(first, (run_floats(n, pixel) + (size_t)(lanes - 1)) * 4);
    return;
  }
  for (int l = 0; l < lanes; l++) check_region(first + l * lane, run_floats(n, pixel) * 4);
}

/* Every float a strip reads or writes, as the vector strips (unchecked) access them. */
void host_check_strip(int nb, int np, const Strip *s) {
  for (int b = 0; b < nb; b++)
    for (int r = 0; r < s->rows; r++)
      for (int p = 0; p < np; p++) {
        ptrdiff_t at = b * s->y_block + r * s->y_rows + p * s->y_pixel;
        check_region(s->y + at, 16 * 4);
        if (s->mask) check_region(s->mask + at, 16 * 4);
      }
  if (!s->accumulate && s->bias) check_region(s->bias, (size_t)nb * 16 * 4);
  for (int cb = 0; cb < s->blocks_in; cb++) {
    int lanes = strip_lanes(s, cb);
    for (int kh = s->kh0; kh < s->kh1; kh++)
      for (int kw = 0; kw < s->kw; kw++) {
        for (int r = 0; r < s->rows; r++)
          check_pixels(strip_tap_x(s, cb, kh, kw) + r * s->x_rows, lanes, s->x_lane, np,
                       s->x_pixel);
        const float *wt = strip_tap_w(s, cb, kh, kw);
        for (int b = 0; b < nb; b++) check_region(wt + b * s->w_block, (size_t)lanes * 16 * 4);
      }
  }
}

/* Every float a tile reads or writes. */
void host_check_tile(int nb, int nl, const Tile *t) {
  for (int b = 0; b < nb; b++) check_region(t->sum + b * t->sum_block, (size_t)nl * 16 * 4);
  for (int n = 0; n < t->images; n++)
    for (int r = 0; r < t->rows; r++) {
      const float *dy = t->dy + n * t->dy_image + r * t->dy_row;
      for (int b = 0; b < nb; b++) check_region(dy + b * t->dy_block, (size_t)t->wo * 16 * 4);
      check_pixels(t->x + n * t->x_image + r * t->x_row, nl, t->x_lane, t->wo, t->x_pixel);
    }
}

/* ------------------------------------------------------------------ instruction sets */

static const DirectIsa c_blocks = {"c", 2, 8, 8, c_strip, c_tile};
static const DirectIsa *const isas[] = {
#ifdef HOST_X86_KERNELS
    &host_blocks_avx512,
    &host_blocks_avx2,
#endif
    &c_blocks,
};
enum { ISA_COUNT = sizeof isas / sizeof isas[0] };
_Static_assert((int)ISA_COUNT == (int)HOST_ISA_COUNT, "a strip per instruction set of isa.h");

static const DirectIsa *isa;
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;

static void choose_isa(void) { isa = isas[host_isa_index(host_isa_choice())]; }

/* Asked once per call; the strips and tiles get it passed down. */
const DirectIsa *host_register_blocks(void) {
  pthread_once(&isa_once, choose_isa);
  return isa;
}

bool host_conv_direct_use(const char *name) {
  host_register_blocks();
  if (!host_isa_runs(name)) return false;
  isa = isas[host_isa_index(name)];
  return true;
}
