/* The register blocks built without AddressSanitizer's per-access checks
 * (targets/host/unchecked.h) still report an out-of-bounds block: a direct convolution's strip
 * and tile and a GEMM micro-kernel, each run on one operand a float too short.
 *
 *   test_unchecked ISA CASE
 *
 * ISA is the instruction set ("avx512", "avx2"); CASE one of the cases below, or "none" (every
 * operand whole: must succeed). In an ASan build each other case must end in ASan's report of a
 * heap-buffer-overflow (ctest matches it); exits 77 if this CPU cannot run ISA. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_direct.h"
#include "gemm.h"

/* n floats, or one fewer if `short_by_one`; all 0.5. */
static float *floats(size_t n, bool short_by_one) {
  size_t count = short_by_one ? n - 1 : n;
  float *a = malloc(sizeof(float) * count);
  for (size_t i = 0; i < count; i++) a[i] = 0.5f;
  return a;
}

/* A 3x3 convolution, 16 -> 32 channels on 8 x 12, no padding (the strips read x in place). */
static SwkConv conv_shape(void) {
  SwkConv p = {.ci = 16, .h = 8, .w = 12, .co = 32, .kh = 3, .kw = 3, .sh = 1, .sw = 1};
  p.groups = 1, p.dh = p.dw = 1, p.bias = true, p.ho = p.h - 2, p.wo = p.w - 2;
  return p;
}

static void run_conv(const char *what) {
  SwkConv p = conv_shape();
  p.bias = strncmp(what, "tile", 4) != 0; /* the bias gradient's own (checked) pass reads dY */
  int batch = 2;
  size_t nx = host_blocked_floats(batch, p.ci, p.h, p.w);
  size_t ny = host_blocked_floats(batch, p.co, p.ho, p.wo);
  float *x = floats(nx, !strcmp(what, "strip-x"));
  float *y = floats(ny, !strcmp(what, "strip-y"));
  float *dy = floats(ny, !strcmp(what, "tile-dy"));
  float *w = floats((size_t)p.co * p.ci * 9, false), *b = floats((size_t)p.co, false);
  float *dw = floats((size_t)p.co * p.ci * 9, false), *db = floats((size_t)p.co, false);
  float *ws = floats(host_conv_direct_workspace(&p), false);
  if (!strncmp(what, "strip", 5)) host_conv_direct_forward(&p, batch, x, w, b, y, ws);
  if (!strncmp(what, "tile", 4))
    host_conv_direct_weight_gradient(&p, batch, x, dy, dw, NULL, 1.0f, 1.0f, 0.0f, ws);
  free(x), free(y), free(dy), free(w), free(b), free(dw), free(db), free(ws);
}

/* C (8 x 96) = A (8 x 64) B (64 x 96): one block of rows, so B's whole panels are read in place. */
static void run_gemm(const char *what) {
  int m = 8, n = 96, k = 64;
  float *a = floats((size_t)m * k, false), *b = floats((size_t)k * n, !strcmp(what, "gemm-b"));
  float *c = floats((size_t)m * n, !strcmp(what, "gemm-c"));
  float *pack = floats(HOST_GEMM_PACK_FLOATS, false);
  host_sgemm(false, false, m, n, k, a, (size_t)k, b, (size_t)n, 0.0f, c, (size_t)n, pack);
  free(a), free(b), free(c), free(pack);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_unchecked ISA none|strip-x|strip-y|tile-dy|gemm-b|gemm-c\n");
    return 2;
  }
  const char *isa = argv[1], *what = argv[2];
  if (!host_conv_direct_use(isa) || !host_gemm_use(isa)) {
    printf("this CPU does not run %s: skipped\n", isa);
    return 77;
  }
  if (!strcmp(what, "none")) {
    run_conv("strip"), run_conv("tile"), run_gemm("gemm");
  } else if (!strncmp(what, "gemm", 4)) {
    run_gemm(what);
  } else {
    run_conv(what);
  }
  printf("%s %s: no report\n", isa, what);
  return 0;
}
