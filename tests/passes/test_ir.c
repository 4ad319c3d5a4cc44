/* Unit tests of the IR, the front end and the passes, through their C interfaces. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../codegen/lower.h"
#include "../../frontend/frontend.h"
#include "../../ir/symtab.h"
#include "../../ir/target.h"
#include "../../passes/passes.h"
#include "check.h"

static char diag_text[1 << 16];

/* Compiles `src` through the whole pipeline; diagnostics land in diag_text. */
static CompileOptions options; /* what compile() gives the passes */

static Module *compile(const char *src, const char **defines, int ndefines, bool *ok) {
  FILE *f = fmemopen(diag_text, sizeof diag_text, "w");
  diag_set_stream(f);
  diag_reset();
  Override ov[8];
  for (int i = 0; i < ndefines; i++) ov[i].text = defines[i];
  Module *m = frontend_parse_text("t.swn", src, strlen(src), ov, ndefines);
  if (m) m->options = options;
  PipelineOptions po = {.verify_each = true, .dump = f};
  *ok = diag_error_count() == 0 && pipeline_run(m, &po);
  fclose(f);
  diag_set_stream(NULL);
  return m;
}

static const Op *find_op(const Module *m, const char *name) {
  for (int i = 0; i < m->graph.ops.len; i++)
    if (!strcmp(m->graph.ops.data[i].name, name)) return &m->graph.ops.data[i];
  return NULL;
}

static Shape out_shape(const Module *m, const char *name) {
  const Op *op = find_op(m, name);
  return op ? m->graph.values.data[op->output].shape : (Shape){0};
}

#define NET_HEAD "network t {\n label = label()\n"
#define NET_TAIL " loss = softmax_loss(f, label)\n}\n"

static void test_symtab_and_suggest(void) {
  Arena a = {0};
  SymTab t;
  symtab_init(&t, &a);
  char keys[1000][16]; /* "k" and any int */
  for (int i = 0; i < 1000; i++) {
    snprintf(keys[i], sizeof keys[i], "k%d", i);
    CHECK_EQ_INT(symtab_put(&t, keys[i], i), -1);
  }
  CHECK_EQ_INT(symtab_put(&t, "k7", 99), 7); /* present: keeps and returns the old value */
  CHECK_EQ_INT(symtab_get(&t, "k999"), 999);
  CHECK_EQ_INT(symtab_get(&t, "nope"), -1);
  arena_free(&a);
  const char *const words[] = {"outputs", "kernel", "stride", NULL};
  CHECK(diag_suggest("outptus", words) && !strcmp(diag_suggest("outptus", words), "outputs"));
  CHECK(diag_suggest("strid", words) && !strcmp(diag_suggest("strid", words), "stride"));
  CHECK(diag_suggest("banana", words) == NULL);
}

static void test_pool_ceil_mode(void) {
  /* Caffe: ceil((H + 2p - k) / s) + 1, minus one if the last window starts in the padding. */
  struct {
    int h, k, s, p, ceil, expect;
  } cases[] = {
      {55, 3, 2, 0, 1, 27}, {112, 3, 2, 0, 1, 56}, {112, 3, 2, 0, 0, 55}, {7, 3, 2, 1, 1, 4},
      {5, 2, 2, 1, 1, 3},   {32, 3, 2, 0, 1, 16},  {28, 3, 1, 1, 1, 28},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char src[512];
    snprintf(src, sizeof src,
             NET_HEAD
             " x = input(shape=[2, %d, %d])\n p = pool(x, kernel=%d, stride=%d, pad=%d, ceil=%s)\n"
             " f = fc(p, outputs=3)\n" NET_TAIL,
             cases[i].h, cases[i].h, cases[i].k, cases[i].s, cases[i].p,
             cases[i].ceil ? "true" : "false");
    bool ok;
    Module *m = compile(src, NULL, 0, &ok);
    CHECK(ok);
    if (ok) {
      Shape s = out_shape(m, "p");
      CHECK_EQ_INT(s.dim[2], cases[i].expect);
      CHECK_EQ_INT(s.dim[3], cases[i].expect);
    }
    module_free(m);
  }
}

static void test_conv_shapes_and_params(void) {
  bool ok;
  Module *m = compile(
      NET_HEAD " x = input(shape=[4, 7, 9])\n"
               " c = conv(x, outputs=6, kernel=[3, 5], stride=[2, 1], pad=[1, 2], groups=2)\n"
               " g = pool(c, mode=avg, global=true)\n f = fc(g, outputs=3, bias=false)\n" NET_TAIL,
      (const char *[]){"batch=5"}, 1, &ok);
  CHECK(ok);
  Shape s = out_shape(m, "c");
  CHECK_EQ_INT(s.dim[0], 5);
  CHECK_EQ_INT(s.dim[1], 6);
  CHECK_EQ_INT(s.dim[2], 4);
  CHECK_EQ_INT(s.dim[3], 9);
  const Op *c = find_op(m, "c");
  CHECK_EQ_INT(c->params.len, 2);
  CHECK_EQ_INT(op_param_count(c), 6 * 2 * 3 * 5 + 6);
  CHECK_EQ_INT(out_shape(m, "g").dim[2], 1);
  CHECK_EQ_INT(op_param_count(find_op(m, "f")), 3 * 6);
  /* flops: 2 * (Ci/g) * kh * kw per output, plus the bias add */
  CHECK(op_flops(&m->graph, c) == (double)(5 * 6 * 4 * 9) * (2.0 * 2 * 3 * 5 + 1));
  module_free(m);
}

static void test_schedule_fan_out(void) {
  bool ok;
  Module *m =
      compile(NET_HEAD " x = input(shape=[8])\n h = fc(x, outputs=8)\n"
                       " a = relu(h)\n b = sigmoid(h)\n s = add(a, b)\n f = fc(s, outputs=2)\n"
                       " acc = accuracy(f, label)\n" NET_TAIL,
              NULL, 0, &ok);
  CHECK(ok);
  const Schedule *s = &m->schedule;
  CHECK_EQ_INT(s->forward.len, m->graph.ops.len);
  /* h fans out to a and b: one of their backward steps writes d(h), the other adds. */
  int writes = 0, adds = 0, x_grads = 0, acc_steps = 0;
  for (int i = 0; i < s->backward.len; i++) {
    const BackwardStep *b = &s->backward.data[i];
    const Op *op = &m->graph.ops.data[b->op];
    acc_steps += op->kind == OP_ACCURACY;
    for (int j = 0; j < op->inputs.len; j++) {
      const char *in = m->graph.values.data[op->inputs.data[j]].name;
      if (!strcmp(in, "h"))
        writes += b->input_grad.data[j] == GRAD_WRITE,
            adds += b->input_grad.data[j] == GRAD_ACCUMULATE;
      if (!strcmp(in, "x")) x_grads += b->input_grad.data[j] != GRAD_NONE;
    }
  }
  CHECK_EQ_INT(writes, 1);
  CHECK_EQ_INT(adds, 1);
  CHECK_EQ_INT(x_grads, 0);   /* nothing upstream of the input learns */
  CHECK_EQ_INT(acc_steps, 0); /* accuracy is not differentiated */
  CHECK_EQ_INT(s->update_ops.len, 2);
  CHECK(!strcmp(m->graph.ops.data[s->update_ops.data[0]].name, "f")); /* backward order */
  module_free(m);
}

/* A sum hands its output's gradient buffer to its inputs (passes/memplan.c): to one whose later
 * writers add to it, and to others that nothing else writes to before their producers read it;
 * a repeated input keeps its own, and so does one whose producer's backward adds to the
 * buffer itself. */
static void test_sum_hands_its_gradient(void) {
  bool ok;
  Module *m = compile(NET_HEAD " x = input(shape=[8])\n h = fc(x, outputs=8)\n"
                               " a = relu(h)\n b = sigmoid(h)\n s = add(a, b)\n t = add(s, s)\n"
                               " w = fc(t, outputs=8)\n v = add(t, w)\n"
                               " f = fc(v, outputs=2)\n acc = accuracy(f, label)\n" NET_TAIL,
                      NULL, 0, &ok);
  CHECK(ok);
  int grad_a = find_op(m, "a")->buf[STEP_TRAIN].grad,
      grad_b = find_op(m, "b")->buf[STEP_TRAIN].grad,
      grad_s = find_op(m, "s")->buf[STEP_TRAIN].grad,
      grad_t = find_op(m, "t")->buf[STEP_TRAIN].grad,
      grad_w = find_op(m, "w")->buf[STEP_TRAIN].grad,
      grad_v = find_op(m, "v")->buf[STEP_TRAIN].grad;
  /* a and b: only s reads them, and their backward steps only read their gradients */
  CHECK(grad_s >= 0 && grad_a == grad_s && grad_b == grad_s);
  CHECK(grad_t >= 0 && grad_t != grad_s); /* add(s, s) keeps its own */
  /* t fans out (to w and v): v's gradient goes to t; w's backward adds to t's gradient while
   * reading its own, so w keeps a buffer of its own */
  CHECK(grad_v >= 0 && grad_t == grad_v && grad_w >= 0 && grad_w != grad_v);
  const StepPlan *plan = &m->plan.step[STEP_TRAIN];
  const Buffer *handed = &plan->buffers.data[grad_s];
  CHECK(!strcmp(handed->name, "d(s)=d(a)=d(b)"));
  CHECK(!strcmp(plan->buffers.data[grad_v].name, "d(v)=d(t)"));
  /* live until both producers' backward steps have read it */
  const Op *a = find_op(m, "a"), *b = find_op(m, "b");
  int last_reader = 0;
  for (int j = 0; j < m->schedule.backward.len; j++) {
    const Op *op = &m->graph.ops.data[m->schedule.backward.data[j].op];
    if (op == a || op == b) last_reader = j;
  }
  CHECK(handed->last >= m->graph.ops.len + last_reader);
  module_free(m);
}

/* A convolution applies its input's ReLU backward as it stores dX (pass carry-masks) where its
 * backward is the last to add to that gradient: c1 (n0's only reader), c2 (read after t, the
 * other reader of s, in backward), not c3 (its input's epilogue is a sigmoid) and not c4 (a
 * max pool carries its input's ReLU already); --no-fuse leaves nothing to carry. */
static void test_convolutions_carry_masks(void) {
  static const char src[] =
      NET_HEAD " x = input(shape=[4, 8, 8])\n c0 = conv(x, outputs=16, kernel=3, pad=1)\n"
               " n0 = batchnorm(c0)\n r0 = relu(n0)\n c1 = conv(r0, outputs=16, kernel=1)\n"
               " n1 = batchnorm(c1)\n s = add(n1, c0)\n rs = relu(s, slope=0.25)\n"
               " c2 = conv(rs, outputs=16, kernel=3, pad=1)\n t = add(c2, rs)\n"
               " g = sigmoid(t)\n c3 = conv(g, outputs=16, kernel=1)\n r3 = relu(c3)\n"
               " p = pool(r3, kernel=2, stride=2)\n c4 = conv(p, outputs=8, kernel=1)\n"
               " f = fc(c4, outputs=2)\n acc = accuracy(f, label)\n" NET_TAIL;
  for (int fuse = 1; fuse >= 0; fuse--) {
    options.no_fuse = !fuse;
    bool ok;
    Module *m = compile(src, NULL, 0, &ok);
    CHECK(ok);
    const Op *c1 = find_op(m, "c1"), *c2 = find_op(m, "c2"), *c3 = find_op(m, "c3"),
             *c4 = find_op(m, "c4");
    CHECK(c1 && c2 && c3 && c4);
    CHECK(c1->dx_carries.on == fuse && c2->dx_carries.on == fuse);
    CHECK(!c3->dx_carries.on && !c4->dx_carries.on);
    if (fuse) {
      CHECK(c1->dx_carries.kind == OP_RELU && c1->dx_carries.slope == 0);
      CHECK(c2->dx_carries.slope == 0.25);
      /* the producers run no ReLU backward of their own, and still their ReLU forward */
      const Op *n0 = find_op(m, "n0"), *s = find_op(m, "s");
      CHECK(n0->epilogue.on && !backward_epilogue(n0));
      CHECK(s->epilogue.on && !backward_epilogue(s));
      CHECK(backward_epilogue(find_op(m, "c3")) == NULL); /* the pool's */
      CHECK(find_op(m, "p")->pool_carries.on);
      char text[1 << 15];
      FILE *f = fmemopen(text, sizeof text, "w");
      ir_print(f, m);
      fclose(f);
      CHECK(strstr(text, "c1 = conv(n0) outputs=16 kernel=1 stride=1 pad=0 masks=relu ") != NULL);
      CHECK(strstr(text, "masks=relu(slope=0.25)") != NULL);
    }
    module_free(m);
  }
  options.no_fuse = false;
}

static void test_blocks_scoping_and_forward_refs(void) {
  bool ok;
  Module *m = compile(
      "block unit(x, w, k=3) {\n c = conv(x, outputs=w, kernel=k, pad=(k - 1) / 2)\n"
      " r = relu(c)\n return r\n}\n"
      "block pair(x, w) {\n u1 = unit(x, w)\n u2 = unit(u1, w * 2, k=1)\n return u2\n}\n" NET_HEAD
      " f = fc(p, outputs=2)\n p = pair(x, 4)\n x = input(shape=[3, 6, 6])\n" NET_TAIL,
      NULL, 0, &ok);
  CHECK(ok);
  CHECK(find_op(m, "p/u1/c") != NULL);
  CHECK(find_op(m, "p/u2/r") == NULL); /* folded into the convolution before it */
  CHECK(find_op(m, "p/u2/c")->epilogue.on && find_op(m, "p/u2/c")->epilogue.kind == OP_RELU);
  CHECK_EQ_INT(out_shape(m, "p/u2/c").dim[1], 8);
  CHECK_EQ_INT(find_op(m, "p/u2/c")->attr.kernel[0], 1);
  /* topological order puts x before its users though it is written last */
  CHECK(strcmp(m->graph.ops.data[0].name, "label") == 0 ||
        strcmp(m->graph.ops.data[0].name, "x") == 0);
  const Op *f = find_op(m, "f");
  CHECK(m->graph.values.data[f->inputs.data[0]].producer < (int)(f - m->graph.ops.data));
  module_free(m);
}

/* repeat(N, i): N instances named r/0 .. r/N-1, each fed the one before as its first
 * argument, the index bound in the arguments; the statement's value is the last instance's. */
static void test_repeat(void) {
  bool ok;
  Module *m =
      compile("block unit(x, w) {\n c = conv(x, outputs=w, kernel=1)\n return c\n}\n" NET_HEAD
              " x = input(shape=[3, 6, 6])\n r = repeat(3, i) unit(x, 4 + 2 * i)\n"
              " f = fc(r, outputs=2)\n" NET_TAIL,
              NULL, 0, &ok);
  CHECK(ok);
  CHECK(find_op(m, "r/0/c") && find_op(m, "r/1/c") && find_op(m, "r/2/c") && !find_op(m, "r/3/c"));
  CHECK_EQ_INT(out_shape(m, "r/0/c").dim[1], 4);
  CHECK_EQ_INT(out_shape(m, "r/2/c").dim[1], 8);
  /* what feeds each (a layout transform after a convolution is named after it) */
  const Op *second = find_op(m, "r/1/c"), *f = find_op(m, "f");
  const char *fed_second =
      m->graph.ops.data[m->graph.values.data[second->inputs.data[0]].producer].name;
  const char *fed_f = m->graph.ops.data[m->graph.values.data[f->inputs.data[0]].producer].name;
  CHECK(!strncmp(fed_second, "r/0/c", 5));
  CHECK(!strncmp(fed_f, "r/2/c", 5));
  module_free(m);
}

static void test_overrides(void) {
  const char *src = "let width = 4\ntrain { lr = 0.1 }\n" NET_HEAD " x = input(shape=[3])\n"
                    " f = fc(x, outputs=width)\n" NET_TAIL;
  bool ok;
  Module *m = compile(
      src, (const char *[]){"width=7", "train.lr=0.5", "batch=3", "data.scale=1/255"}, 4, &ok);
  CHECK(ok);
  CHECK_EQ_INT(out_shape(m, "f").dim[1], 7);
  CHECK_EQ_INT(out_shape(m, "f").dim[0], 3);
  CHECK(m->train.lr == 0.5);
  CHECK(m->data.scale == 1.0 / 255); /* an inexact division gives a real number */
  module_free(m);
  m = compile(src, (const char *[]){"colour=3"}, 1, &ok);
  CHECK(!ok);
  CHECK(strstr(diag_text, "no constant or setting named 'colour'") != NULL);
  module_free(m);
  m = compile(src, (const char *[]){"batch=(3"}, 1, &ok);
  CHECK(!ok);
  CHECK(strstr(diag_text, "<command line>:1:9: error: syntax error") != NULL);
  module_free(m);
}

static void test_verifier_catches_broken_ir(void) {
  bool ok;
  Module *m =
      compile(NET_HEAD " x = input(shape=[3])\n f = fc(x, outputs=2)\n" NET_TAIL, NULL, 0, &ok);
  CHECK(ok);
  FILE *sink = fopen("/dev/null", "w");
  diag_set_stream(sink);
  CHECK(ir_verify(m));
  /* swap two ops: the graph is no longer in topological order */
  Op tmp = m->graph.ops.data[1];
  m->graph.ops.data[1] = m->graph.ops.data[2];
  m->graph.ops.data[2] = tmp;
  CHECK(!ir_verify(m));
  m->graph.ops.data[2] = m->graph.ops.data[1];
  m->graph.ops.data[1] = tmp;
  CHECK(ir_verify(m));
  Value *fv =
      &m->graph.values.data[m->graph.ops.data[2].output]; /* a vector cannot be in (R,C,N,B) */
  fv->layout = LAYOUT_RCNB;
  CHECK(!ir_verify(m));
  fv->layout = LAYOUT_BNRC;
  CHECK(ir_verify(m));
  /* in each step's plan, the fc's output moved onto its input, which it reads while writing */
  for (int k = 0; k < STEP_KINDS; k++) {
    StepPlan *p = &m->plan.step[k];
    Buffer *in = &p->buffers.data[m->graph.ops.data[1].buf[k].out];
    Buffer *out = &p->buffers.data[m->graph.ops.data[2].buf[k].out];
    CHECK(!strcmp(in->name, "x") && !strcmp(out->name, "f"));
    int64_t offset = out->offset;
    out->offset = in->offset;
    CHECK(!ir_verify(m));
    out->offset = offset;
    CHECK(ir_verify(m));
  }
  m->graph.ops.data[2].inputs.data[0] = 999; /* a value that does not exist */
  CHECK(!ir_verify(m));
  diag_set_stream(NULL);
  fclose(sink);
  module_free(m);
}

static void test_repeated_errors_reported_once(void) {
  bool ok;
  Module *m =
      compile("block b(x) {\n c = conv(x, outputs=4, kernel=9)\n return c\n}\n" NET_HEAD
              " x = input(shape=[1, 4, 4])\n b1 = b(x)\n b2 = b(x)\n f = fc(b1, outputs=2)\n"
              " g = fc(b2, outputs=2)\n s = add(f, g)\n loss2 = softmax_loss(s, label)\n" NET_TAIL,
              NULL, 0, &ok);
  CHECK(!ok);
  CHECK(strstr(diag_text, "layer 'b1/c'") != NULL); /* each instance names itself */
  CHECK(strstr(diag_text, "layer 'b2/c'") != NULL);
  CHECK(strstr(diag_text, "note: in instance 'b2' of block 'b'") != NULL);
  module_free(m);
}

static void test_fusion_buckets(void) {
  const char *src =
      NET_HEAD " x = input(shape=[3, 8, 8])\n c = conv(x, outputs=4, kernel=3)\n"
               " b = batchnorm(c)\n f1 = fc(b, outputs=100)\n f = fc(f1, outputs=2)\n" NET_TAIL;
  /* pool order (backward): f.w 200, f.b 2, f1.w 14400, f1.b 100, b.scale 4, b.shift 4, c.w 108,
   * c.b 4 (words). At 800 bytes: [f.w] [f.b f1.w] [f1.b b.scale b.shift c.w] [c.b]. */
  struct {
    int64_t threshold;
    int buckets;
    int64_t first_words;
  } cases[] = {{0, 8, 200}, {INT64_MAX, 1, 14822}, {800, 4, 200}, {4 * 14000, 2, 14602}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    options.fusion_threshold = cases[i].threshold;
    bool ok;
    Module *m = compile(src, NULL, 0, &ok);
    CHECK(ok);
    CHECK_EQ_INT(m->fusion.buckets.len, cases[i].buckets);
    if (m->fusion.buckets.len) CHECK_EQ_INT(m->fusion.buckets.data[0].words, cases[i].first_words);
    int64_t total = 0;
    for (int b = 0; b < m->fusion.buckets.len; b++) total += m->fusion.buckets.data[b].words;
    CHECK_EQ_INT(total, 14822);
    /* the last bucket is complete only after the first layer's backward step */
    const Bucket *last = &m->fusion.buckets.data[m->fusion.buckets.len - 1];
    CHECK(!strcmp(m->graph.ops.data[m->schedule.backward.data[last->ready_step].op].name, "c"));
    module_free(m);
  }
  options.fusion_threshold = 4 << 20;
}

/* ------------------------------------------------------------------ layout pass */

static int count_transforms(const Module *m) {
  int n = 0;
  for (int i = 0; i < m->graph.ops.len; i++) n += m->graph.ops.data[i].kind == OP_TRANSFORM;
  return n;
}

/* Hand-made networks whose fewest transforms are known, every conv forced implicit. */
static void test_layout_minimal_transforms(void) {
  struct {
    const char *body;
    int transforms;
  } cases[] = {
      /* in, and out to the fc: relu between convs stays in (R,C,N,B) */
      {" x = input(shape=[4, 8, 8])\n a = conv(x, outputs=4, kernel=3, pad=1)\n r = relu(a)\n"
       " b = conv(r, outputs=4, kernel=3, pad=1)\n f = fc(b, outputs=2)\n",
       2},
      /* one transform of x serves both convs; add works in (R,C,N,B) */
      {" x = input(shape=[4, 8, 8])\n a = conv(x, outputs=4, kernel=3, pad=1)\n b = conv(x, "
       "outputs=4, kernel=1)\n"
       " s = add(a, b)\n f = fc(s, outputs=2)\n",
       2},
      /* pooling works in either layout on the host */
      {" x = input(shape=[4, 8, 8])\n a = conv(x, outputs=4, kernel=3, pad=1)\n p = pool(a, "
       "kernel=2, stride=2)\n"
       " b = conv(p, outputs=4, kernel=3, pad=1)\n f = fc(b, outputs=2)\n",
       2},
      /* batch norm reads (B,N,R,C) on the host: out and back in around it */
      {" x = input(shape=[4, 8, 8])\n a = conv(x, outputs=4, kernel=3, pad=1)\n n = batchnorm(a)\n"
       " b = conv(n, outputs=4, kernel=3, pad=1)\n f = fc(b, outputs=2)\n",
       4},
      /* a residual block: the shortcut and the branch meet in an add, in (R,C,N,B) */
      {" x = input(shape=[4, 8, 8])\n a = conv(x, outputs=4, kernel=3, pad=1)\n r = relu(a)\n"
       " b = conv(r, outputs=4, kernel=3, pad=1)\n s = add(b, r)\n o = relu(s)\n"
       " c = conv(o, outputs=4, kernel=3, pad=1)\n f = fc(c, outputs=2)\n",
       2},
  };
  options.conv = CONV_FORCE_EXPLICIT + PLAN_IMPLICIT;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char src[1024];
    snprintf(src, sizeof src, NET_HEAD "%s" NET_TAIL, cases[i].body);
    bool ok;
    Module *m = compile(src, NULL, 0, &ok);
    CHECK(ok);
    if (ok) CHECK_EQ_INT(count_transforms(m), cases[i].transforms);
    module_free(m);
  }
  options.conv = CONV_AUTO;
}

/* A first convolution with fewer input channels than its filters' width, on the blocked
 * layout with the direct plan, reads the data as it comes: no transform before it, and the
 * verifier holds; one whose input needs a gradient, or whose plan is not direct, does not. */
static void test_first_layer_reads_planar(void) {
  const char *planar = " x = input(shape=[3, 16, 16])\n a = conv(x, outputs=32, kernel=5, pad=2)\n"
                       " f = fc(a, outputs=2)\n";
  const char *within = " x = input(shape=[3, 16, 16])\n a = conv(x, outputs=2, kernel=1)\n"
                       " b = conv(a, outputs=32, kernel=5, pad=2)\n f = fc(b, outputs=2)\n";
  struct {
    const char *body, *conv;
    int conv_option;
    bool reads;
  } cases[] = {{planar, "a", CONV_FORCE_EXPLICIT + PLAN_DIRECT, true},
               {planar, "a", CONV_FORCE_EXPLICIT + PLAN_EXPLICIT, false},
               {within, "b", CONV_FORCE_EXPLICIT + PLAN_DIRECT, false}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char src[1024];
    snprintf(src, sizeof src, NET_HEAD "%s" NET_TAIL, cases[i].body);
    options.conv = cases[i].conv_option;
    bool ok;
    Module *m = compile(src, NULL, 0, &ok);
    CHECK(ok);
    const Op *conv = ok ? find_op(m, cases[i].conv) : NULL;
    if (conv) {
      const Value *x = &m->graph.values.data[conv->inputs.data[0]];
      CHECK_EQ_INT(conv->conv.x_planar, cases[i].reads);
      if (cases[i].reads)
        CHECK(x->layout == LAYOUT_BNRC && !strcmp(x->name, "x"));
      else
        CHECK(x->layout == m->graph.values.data[conv->output].layout);
    }
    module_free(m);
  }
  options.conv = CONV_AUTO;
}

/* The energy the layout pass minimises, for given op labels (layouts), with backward costs
 * zero (so a conv costs its forward plan in its layout): conv costs plus, per 4-D tensor and
 * per other layout some consumer works in, a conversion forward and, if a gradient flows into
 * it (a parameter lies upstream), one of the gradient back. Its terms are tabled once per
 * module, so that brute force over 3^12 labellings sums lookups only. */
enum { ENERGY_OPS = 64, ENERGY_EDGES = 128 };
typedef struct EnergyTable {
  int ops, edges;
  double conv[ENERGY_OPS][LAYOUT_COUNT];                  /* 0 for other ops */
  double convert[ENERGY_OPS][LAYOUT_COUNT][LAYOUT_COUNT]; /* op's output, from -> to */
  bool four_d[ENERGY_OPS];
  int producer[ENERGY_EDGES], consumer[ENERGY_EDGES];
} EnergyTable;

static void table_energy(Module *m, EnergyTable *t) {
  const Graph *g = &m->graph;
  const char *upstream = graph_params_upstream(m);
  memset(t, 0, sizeof *t);
  t->ops = g->ops.len;
  CHECK(t->ops <= ENERGY_OPS);
  for (int i = 0; i < g->ops.len && i < ENERGY_OPS; i++) {
    const Op *op = &g->ops.data[i];
    for (int l = 0; op->kind == OP_CONV && l < LAYOUT_COUNT; l++) { /* the layout's cheapest */
      t->conv[i][l] = INFINITY;
      for (int p = 0; p < PLAN_COUNT; p++)
        if (conv_plan_layout((ConvPlan)p) == (Layout)l &&
            op->conv.cost[CONV_FORWARD][p] < t->conv[i][l])
          t->conv[i][l] = op->conv.cost[CONV_FORWARD][p];
    }
    Shape s = g->values.data[op->output].shape;
    t->four_d[i] = s.rank == 4;
    for (int from = 0; t->four_d[i] && from < LAYOUT_COUNT; from++)
      for (int to = 0; to < LAYOUT_COUNT; to++)
        if (from != to)
          t->convert[i][from][to] =
              module_transform_cost(m, s, (Layout)from, (Layout)to) +
              (upstream[op->output] ? module_transform_cost(m, s, (Layout)to, (Layout)from) : 0);
    for (int j = 0; j < g->ops.len; j++)
      for (int k = 0; k < g->ops.data[j].inputs.len; k++)
        if (g->ops.data[j].inputs.data[k] == op->output && t->edges < ENERGY_EDGES) {
          t->producer[t->edges] = i;
          t->consumer[t->edges++] = j;
        }
  }
}

static double layout_energy(const EnergyTable *t, const Layout *label) {
  double e = 0;
  for (int i = 0; i < t->ops; i++) e += t->conv[i][label[i]];
  bool wanted[ENERGY_OPS][LAYOUT_COUNT] = {{0}}; /* a conversion per tensor and layout, once */
  for (int k = 0; k < t->edges; k++) {
    int i = t->producer[k];
    Layout to = label[t->consumer[k]];
    if (!t->four_d[i] || to == label[i] || wanted[i][to]) continue;
    wanted[i][to] = true;
    e += t->convert[i][label[i]][to];
  }
  return e;
}

static uint64_t next_random(uint64_t *rng) {
  *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
  return *rng >> 33;
}

/* Gives every convolution random forward costs (gradients free), in units of a transform. */
static void randomise_conv_costs(Module *m, uint64_t *rng) {
  Graph *g = &m->graph;
  double unit = module_transform_cost(m, g->values.data[g->ops.data[1].output].shape, LAYOUT_BNRC,
                                      LAYOUT_RCNB);
  for (int i = 0; i < g->ops.len; i++) {
    ConvChoice *ch = &g->ops.data[i].conv;
    if (g->ops.data[i].kind != OP_CONV) continue;
    for (int p = 0; p < PLAN_COUNT; p++) {
      ch->cost[CONV_FORWARD][p] = unit * (double)(next_random(rng) & 0xffffff) / (1 << 24) * 6;
      ch->cost[CONV_WGRAD][p] = ch->cost[CONV_DGRAD][p] = ch->joint[p] = 0;
    }
  }
}

/* The least energy over every labelling of the 4-D ops with the layouts their kernels take. */
static double brute_force_layouts(Module *m) {
  const Graph *g = &m->graph;
  int n = g->ops.len, free_ops[32], nfree = 0, choices[32] = {0};
  Layout takes[32][LAYOUT_COUNT];
  long labellings = 1;
  for (int i = 0; i < n && nfree < 32; i++) {
    if (g->values.data[g->ops.data[i].output].shape.rank != 4) continue;
    for (int l = 0; l < LAYOUT_COUNT; l++)
      if (options.target->accepts(g, &g->ops.data[i], (Layout)l))
        takes[nfree][choices[nfree]++] = (Layout)l;
    labellings *= choices[nfree];
    free_ops[nfree++] = i;
  }
  Layout label[64] = {0};
  EnergyTable *table = malloc(sizeof *table);
  table_energy(m, table);
  double best = INFINITY;
  for (long code = 0; code < labellings; code++) {
    long rest = code;
    for (int k = 0; k < nfree; rest /= choices[k], k++)
      label[free_ops[k]] = takes[k][rest % choices[k]];
    double e = layout_energy(table, label);
    if (e < best) best = e;
  }
  free(table);
  return best;
}

static Module *costed_module(const char *src) {
  Module *m = frontend_parse_text("t.swn", src, strlen(src), NULL, 0);
  m->options = options;
  bool ok = pass_elaborate(m) && pass_infer_shapes(m) && pass_price_conv_plans(m);
  CHECK(ok);
  if (!ok) fprintf(stderr, "%s\n%s", src, diag_text);
  return m;
}

/* Whether pass layout finds the optimum of `src` with random plan costs (seeded by *rng). */
static bool layout_is_optimal(const char *src, uint64_t *rng) {
  Module *m = costed_module(src);
  uint64_t seed = *rng;
  randomise_conv_costs(m, rng);
  double best = brute_force_layouts(m);
  Graph *g = &m->graph;
  int n = g->ops.len;
  /* the pass's labels are its ops' output layouts (transforms come before their consumers) */
  Layout chosen[64];
  CHECK(pass_layout(m) && ir_verify(m) && !m->layout_search.beam);
  int original = 0;
  for (int i = 0; i < g->ops.len; i++)
    if (g->ops.data[i].kind != OP_TRANSFORM)
      chosen[original++] = g->values.data[g->ops.data[i].output].layout;
  CHECK_EQ_INT(original, n);
  /* energy of the chosen labels on the graph as it was: a fresh copy with the same costs */
  Module *fresh = costed_module(src);
  randomise_conv_costs(fresh, &seed);
  EnergyTable *table = malloc(sizeof *table);
  table_energy(fresh, table);
  double got = layout_energy(table, chosen);
  free(table);
  bool optimal = fabs(got - best) <= 1e-9 * (1 + best);
  if (!optimal) fprintf(stderr, "layout: %.9g, optimum %.9g, of\n%s", got, best, src);
  module_free(fresh);
  module_free(m);
  return optimal;
}

/* A random DAG of 4x8x8 tensors: each op reads one or two earlier tensors. */
static const char *random_network(uint64_t *rng, char *buf, size_t size) {
  static const char *const unary[] = {"conv(%s, outputs=4, kernel=3, pad=1)",
                                      "conv(%s, outputs=4, kernel=1)",
                                      "relu(%s)",
                                      "tanh(%s)",
                                      "batchnorm(%s)",
                                      "pool(%s, kernel=3, pad=1)"};
  int ops = 5 + (int)(next_random(rng) % 5), len = 0;
  len += snprintf(buf + len, size - (size_t)len, NET_HEAD " t0 = input(shape=[4, 8, 8])\n");
  for (int i = 1; i <= ops; i++) {
    char a[16], b[16], expr[64]; /* "t" and any int */
    snprintf(a, sizeof a, "t%d", (int)(next_random(rng) % (uint64_t)i));
    snprintf(b, sizeof b, "t%d", (int)(next_random(rng) % (uint64_t)i));
    if (next_random(rng) % 4 == 0)
      snprintf(expr, sizeof expr, "add(%s, %s)", a, b);
    else
      snprintf(expr, sizeof expr, unary[next_random(rng) % 6], a);
    len += snprintf(buf + len, size - (size_t)len, " t%d = %s\n", i, expr);
  }
  snprintf(buf + len, size - (size_t)len, " f = fc(t%d, outputs=2)\n" NET_TAIL, ops);
  return buf;
}

/* The layout pass against brute force over every labelling, with random plan costs: on a net
 * of chains, branches and a residual sum, and on random DAGs. */
static void test_layout_is_optimal(void) {
  const char *src = NET_HEAD
      " x = input(shape=[4, 8, 8])\n a = conv(x, outputs=4, kernel=3, pad=1)\n r = relu(a)\n"
      " b = conv(r, outputs=4, kernel=3, pad=1)\n c = conv(r, outputs=4, kernel=1)\n s = add(b, "
      "c)\n"
      " t = tanh(s)\n p = pool(t, kernel=2, stride=2)\n n = batchnorm(p)\n d = conv(n, outputs=4, "
      "kernel=3, pad=1)\n"
      " e = conv(d, outputs=4, kernel=1)\n q = sigmoid(e)\n f = fc(q, outputs=2)\n" NET_TAIL;
  const Target *host = options.target;
  Target unbiased = *host; /* the energy has no margin for the default plan */
  unbiased.plan_margin = 0;
  options.target = &unbiased;
  uint64_t rng = 12345;
  int optimal = 0;
  for (int trial = 0; trial < 60; trial++) optimal += layout_is_optimal(src, &rng);
  CHECK_EQ_INT(optimal, 60);
  optimal = 0;
  for (int trial = 0; trial < 200; trial++) {
    char buf[2048];
    uint64_t costs = rng;
    optimal += layout_is_optimal(random_network(&rng, buf, sizeof buf), &costs);
  }
  CHECK_EQ_INT(optimal, 200);
  options.target = host;
}

/* A tensor read by more branches than the search keeps states for: the beam still gives a
 * valid labelling, and --explain's record says it is not proven optimal. */
static void test_layout_beam(void) {
  char src[4096];
  int len = snprintf(src, sizeof src, NET_HEAD " x = input(shape=[4, 8, 8])\n");
  for (int i = 0; i < 18; i++)
    len += snprintf(src + len, sizeof src - (size_t)len,
                    " b%d = conv(x, outputs=4, kernel=%d, pad=%d)\n", i, 1 + 2 * (i % 2), i % 2);
  len += snprintf(src + len, sizeof src - (size_t)len, " j = concat(b0");
  for (int i = 1; i < 18; i++) len += snprintf(src + len, sizeof src - (size_t)len, ", b%d", i);
  snprintf(src + len, sizeof src - (size_t)len, ")\n f = fc(j, outputs=2)\n" NET_TAIL);
  Module *m = costed_module(src);
  uint64_t rng = 99;
  randomise_conv_costs(m, &rng);
  CHECK(pass_layout(m) && ir_verify(m));
  CHECK(m->layout_search.beam);
  module_free(m);
}

/* A network with every op kind of the table (transforms come from the layout pass, here by
 * forcing the implicit plan) lowers to calls that all match their declarations in the contract,
 * and every kind with a kernel family gets calls. */
static void test_every_op_lowers_to_declared_calls(void) {
  /* every activation of the op table in a chain after the convolution */
  char src[4096] = "data { source = synthetic\n classes = 4 }\n"
                   "network t {\n image = input(shape=[3, 8, 8])\n label = label()\n"
                   " a0 = conv(image, outputs=4, kernel=3, pad=1)\n";
  int chain = 0;
  for (int k = 0; k < OP_COUNT; k++)
    if (op_info[k].family == FAMILY_ACTIVATION)
      snprintf(src + strlen(src), sizeof src - strlen(src), " a%d = %s(a%d)\n", chain + 1,
               op_info[k].name, chain),
          chain++;
  snprintf(src + strlen(src), sizeof src - strlen(src),
           " b = batchnorm(a%d)\n n = lrn(b)\n u = upsample(n, mode=bilinear)\n"
           " t = deconv(u, outputs=4, kernel=2, stride=2)\n p = pool(t, kernel=8, stride=8)\n"
           " d = dropout(p)\n j = concat(d, p)\n a = add(j, j)\n g = pool(a, global=true)\n"
           " s = mul(a, g)\n m = softmax(s)\n f = fc(m, outputs=4)\n"
           " loss = softmax_loss(f, label)\n acc = accuracy(f, label)\n}\n",
           chain);
  const int implicit = CONV_FORCE_EXPLICIT + PLAN_IMPLICIT;
  for (int force = CONV_AUTO; force <= implicit; force += implicit - CONV_AUTO) {
    options.conv = force;
    bool ok;
    options.no_fuse = true; /* every activation kind keeps its own op and calls */
    Module *m = compile(src, NULL, 0, &ok);
    options.conv = CONV_AUTO, options.no_fuse = false;
    CHECK(ok);
    if (!ok) {
      fprintf(stderr, "%s", diag_text);
      module_free(m);
      return;
    }
    Arena a = {0};
    Lowered l;
    CHECK(lower_module(m, "t.swn", &a, &l));
    bool called[OP_COUNT] = {0}, present[OP_COUNT] = {0};
    const CallList *lists[] = {&l.forward, &l.backward, &l.update};
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < lists[k]->len; i++) {
        const Call *c = &lists[k]->data[i];
        CHECK(c->fn != NULL && c->fn->nparams == c->args.len);
        called[m->graph.ops.data[c->op].kind] = true;
      }
    for (int i = 0; i < m->graph.ops.len; i++) present[m->graph.ops.data[i].kind] = true;
    for (int k = 0; k < OP_COUNT; k++)
      if (op_info[k].family != FAMILY_NONE && k != OP_TRANSFORM) {
        if (!present[k] || !called[k])
          fprintf(stderr, "op kind %s: present %d, called %d\n", op_info[k].name, present[k],
                  called[k]);
        CHECK(present[k] && called[k]);
      }
    if (force == implicit) CHECK(present[OP_TRANSFORM] && called[OP_TRANSFORM]);
    arena_free(&a);
    module_free(m);
  }
}

int main(void) {
  options = (CompileOptions){.target = target_find("host"), .fusion_threshold = 4 << 20};
  test_symtab_and_suggest();
  test_pool_ceil_mode();
  test_conv_shapes_and_params();
  test_schedule_fan_out();
  test_sum_hands_its_gradient();
  test_convolutions_carry_masks();
  test_blocks_scoping_and_forward_refs();
  test_repeat();
  test_overrides();
  test_verifier_catches_broken_ir();
  test_repeated_errors_reported_once();
  test_fusion_buckets();
  test_layout_minimal_transforms();
  test_first_layer_reads_planar();
  test_layout_is_optimal();
  test_layout_beam();
  test_every_op_lowers_to_declared_calls();
  return check_report();
}
