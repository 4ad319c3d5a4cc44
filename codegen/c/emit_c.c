/* The C backend: prints the lowered program as one readable C file (docs/runtime.md shows
 * an excerpt): the kernel-parameter structs, forward, backward, update and workspace
 * functions with constant shapes and offsets, the runtime's descriptor tables, and main. */
#include "emit_c.h"

#include <inttypes.h>
#include <string.h>

static const char *const region_macro[] = {"ACT", "FIX", "PARAM", "GRAD", "MOMENTUM", "STATE"};

static void print_ptr(FILE *f, Ptr p) {
  if (p.null) {
    fputs("NULL", f);
    return;
  }
  if (p.i32) fputs("(int32_t *)", f);
  fprintf(f, "%s(%" PRId64 ")", region_macro[p.region], p.offset);
}

static void print_c_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20 || ch >= 0x7F) fprintf(f, "\\%03o", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

/* A float literal that reads back as the same float: 9 significant digits, always with a
 * point or an exponent so that the suffix applies. */
static void print_float(FILE *f, double v) {
  char buf[48];
  snprintf(buf, sizeof buf, "%.9g", (double)(float)v);
  fprintf(f, "%s%sf", buf, strpbrk(buf, ".e") ? "" : ".0");
}

static void print_arg(FILE *f, const Call *c, const CallArg *a) {
  switch (a->kind) {
  case ARG_BATCH: fputs("B", f); break;
  case ARG_TRAIN: fputs("train", f); break;
  case ARG_SEED: fputs("s->seed", f); break;
  case ARG_ITERATION: fputs("s->iteration", f); break;
  case ARG_FIRST_IMAGE: fputs("s->first_image", f); break;
  case ARG_WORKSPACE: fputs("s->ws", f); break;
  case ARG_STRUCT: fprintf(f, "&L%d", c->op); break;
  case ARG_PTR: print_ptr(f, a->ptr); break;
  case ARG_BOOL: fputs(a->i ? "true" : "false", f); break;
  case ARG_INT: fprintf(f, "%" PRId64, a->i); break;
  case ARG_INT64: fprintf(f, "INT64_C(%" PRId64 ")", a->i); break;
  case ARG_LR: fputs("lr * ", f), print_float(f, a->scale); break;
  case ARG_DECAY: fputs("s->weight_decay * ", f), print_float(f, a->scale); break;
  case ARG_MOMENTUM: fputs("s->momentum_coef", f); break;
  case ARG_STEP: fputs("s", f); break;
  case ARG_SIZES:
    fputs("(const int64_t[]){", f);
    for (int i = 0; i < a->sizes.len; i++) fprintf(f, "%s%" PRId64, i ? ", " : "", a->sizes.data[i]);
    fputc('}', f);
    break;
  case ARG_INPUTS:
  case ARG_OUTPUTS: {
    fputs(a->kind == ARG_INPUTS ? "(const float *const[]){" : "(float *const[]){", f);
    for (int i = 0; i < a->ptrs.len; i++) {
      if (i) fputs(", ", f);
      print_ptr(f, a->ptrs.data[i]);
    }
    fputc('}', f);
    break;
  }
  case ARG_BOOLS:
    fputs("(const bool[]){", f);
    for (int i = 0; i < a->bools.len; i++) fprintf(f, "%s%s", i ? ", " : "", a->bools.data[i] ? "true" : "false");
    fputc('}', f);
    break;
  }
}

static void print_calls(FILE *f, const Lowered *l, const CallList *calls, const char *phase) {
  const char *indent = "  ";
  int last_op = -1;
  for (int i = 0; i < calls->len; i++) {
    const Call *c = &calls->data[i];
    if (c->op != last_op)
      fprintf(f, "%s/* %s */\n%sif (s->profile) swn_profile_mark(s->profile, %d, %s);\n", indent,
              l->m->graph.ops.data[c->op].name, indent, c->op, phase);
    last_op = c->op;
    fprintf(f, "%s%s(", indent, c->fn);
    for (int k = 0; k < c->args.len; k++) {
      if (k) fputs(", ", f);
      print_arg(f, c, &c->args.data[k]);
    }
    fputs(");\n", f);
  }
  fprintf(f, "%sif (s->profile) swn_profile_mark(s->profile, -1, %s);\n", indent, phase);
}

static void print_structs(FILE *f, const Lowered *l) {
  for (int i = 0; i < l->structs.len; i++) {
    const KernelStruct *s = &l->structs.data[i];
    if (!s->type) continue;
    fprintf(f, "static const %s L%d = { /* %s */\n  ", s->type, i, l->m->graph.ops.data[i].name);
    for (int k = 0; k < s->fields.len; k++) {
      const StructField *fl = &s->fields.data[k];
      fprintf(f, "%s.%s = ", k ? ", " : "", fl->name);
      switch (fl->kind) {
      case FIELD_FLOAT: print_float(f, fl->value); break;
      case FIELD_BOOL: fputs(fl->value != 0 ? "true" : "false", f); break;
      case FIELD_UINT64: fprintf(f, "UINT64_C(%" PRIu64 ")", (uint64_t)fl->value); break;
      default: fprintf(f, "%" PRId64, (int64_t)fl->value); break;
      }
    }
    fputs("};\n", f);
  }
}

static void print_functions(FILE *f, const Lowered *l) {
  fputs("\nstatic size_t workspace(void) {\n  size_t need = 0, w;\n", f);
  for (int i = 0; i < l->workspace.len; i++)
    fprintf(f, "  if ((w = %s(&L%d)) > need) need = w;\n", l->workspace.data[i].fn, l->workspace.data[i].op);
  fputs("  return need;\n}\n\nstatic void forward(SwnStep *s, bool train) {\n  const int B = s->batch;\n  (void)train;\n", f);
  print_calls(f, l, &l->forward, "SWN_PHASE_FORWARD");
  fputs("}\n\nstatic void backward(SwnStep *s) {\n  const int B = s->batch;\n", f);
  print_calls(f, l, &l->backward, "SWN_PHASE_BACKWARD");
  fputs("}\n\nstatic void update(SwnStep *s, float lr) {\n", f);
  print_calls(f, l, &l->update, "SWN_PHASE_UPDATE");
  fputs("}\n", f);
}

static void print_tables(FILE *f, const Lowered *l) {
  const Graph *g = &l->m->graph;
  static const char *const roles_init[] = {"SWN_INIT_XAVIER", "SWN_INIT_MSRA", "SWN_INIT_GAUSSIAN",
                                           "SWN_INIT_UNIFORM", "SWN_INIT_CONSTANT"};
  fputs("\nstatic const char *const layers[] = {\n", f);
  for (int i = 0; i < g->ops.len; i++) fprintf(f, "  \"%s\",\n", g->ops.data[i].name);
  fprintf(f, "};\n\nstatic const SwnParamInfo params[] = {\n");
  for (int i = 0; i < l->params.len; i++) {
    const ParamEntry *p = &l->params.data[i];
    fprintf(f, "  {\"%s\", %d, {", p->name, p->rank);
    for (int d = 0; d < p->rank; d++) fprintf(f, "%s%" PRId64, d ? ", " : "", p->dims[d]);
    fprintf(f, "}, %" PRId64 ", %" PRId64 ", ", p->offset, p->count);
    print_float(f, p->lr_mult), fputs(", ", f), print_float(f, p->decay_mult);
    fprintf(f, ", %s, ", roles_init[p->init]), print_float(f, p->init_arg);
    fprintf(f, ", %" PRId64 "},\n", p->fan_in);
  }
  fputs("  {0}\n};\n\nstatic const SwnStateInfo state[] = {\n", f);
  for (int i = 0; i < l->state.len; i++) {
    const StateEntry *s = &l->state.data[i];
    fprintf(f, "  {\"%s\", %" PRId64 ", %" PRId64 ", ", s->name, s->offset, s->count);
    print_float(f, s->init), fputs("},\n", f);
  }
  fputs("  {0}\n};\n\nstatic const SwnMetric metrics[] = {\n", f);
  for (int i = 0; i < l->metrics.len; i++)
    fprintf(f, "  {\"%s\", %" PRId64 ", %s},\n", l->metrics.data[i].name, l->metrics.data[i].offset,
            l->metrics.data[i].is_loss ? "true" : "false");
  fprintf(f, "  {0}\n};\n");
  fprintf(f, "enum { NPARAMS = %d, NSTATE = %d, NMETRICS = %d };\n", l->params.len, l->state.len, l->metrics.len);
}

static void print_file_list(FILE *f, const char *name, const StrList *files) {
  fprintf(f, "    .%s = {", name);
  for (int i = 0; i < files->n; i++) {
    if (i) fputs(", ", f);
    print_c_string(f, files->v[i]);
  }
  fprintf(f, "}, .n%s = %d,\n", name, files->n);
}

static void print_network(FILE *f, const Lowered *l, const char *source) {
  const Module *m = l->m;
  const Graph *g = &m->graph;
  const TrainConfig *t = &m->train;
  const DataConfig *d = &m->data;
  static const char *const policies[] = {"SWN_LR_FIXED", "SWN_LR_STEP", "SWN_LR_MULTISTEP", "SWN_LR_INV", "SWN_LR_POLY"};
  static const char *const sources[] = {"SWN_DATA_IDX", "SWN_DATA_CIFAR", "SWN_DATA_SYNTHETIC"};
  fputs("\nstatic const SwnNetwork network = {\n  .name = ", f);
  print_c_string(f, m->name);
  fputs(", .source = ", f);
  print_c_string(f, source);
  fprintf(f, ", .hash = UINT64_C(0x%016" PRIx64 "),\n", l->hash);
  fprintf(f, "  .image_words = %" PRId64 ", .fixed_words = %" PRId64 ", .param_words = %" PRId64
             ", .state_words = %" PRId64 ",\n",
          m->plan.image_words, m->plan.fixed_words, m->plan.param_words, m->plan.state_words);
  fprintf(f, "  .layers = layers, .nlayers = %d,\n", g->ops.len);
  fputs("  .params = params, .nparams = NPARAMS, .state = state, .nstate = NSTATE,\n", f);
  fputs("  .metrics = metrics, .nmetrics = NMETRICS,\n", f);
  fprintf(f, "  .in_c = %" PRId64 ", .in_h = %" PRId64 ", .in_w = %" PRId64 ",\n", l->in_c, l->in_h, l->in_w);
  fprintf(f, "  .input_offset = %" PRId64 ", .label_offset = %" PRId64 ", .classes = %" PRId64 ",\n",
          l->input_offset, l->label_offset, l->classes);
  fprintf(f, "  .train = {\n    .batch = %" PRId64 ", .test_batch = %" PRId64 ", .epochs = %" PRId64
             ", .iterations = %" PRId64 ",\n    .lr = ",
          t->batch, t->test_batch, t->epochs, t->iterations);
  print_float(f, t->lr), fputs(", .momentum = ", f), print_float(f, t->momentum);
  fputs(", .weight_decay = ", f), print_float(f, t->weight_decay);
  fprintf(f, ",\n    .lr_policy = %s, .gamma = ", policies[t->lr_policy]);
  print_float(f, t->gamma), fputs(", .power = ", f), print_float(f, t->power);
  fprintf(f, ", .step = %" PRId64 ", .steps = {", t->step);
  for (int i = 0; i < t->steps.n; i++) fprintf(f, "%s%" PRId64, i ? ", " : "", t->steps.v[i]);
  fprintf(f, "}, .nsteps = %d,\n    .warmup = %" PRId64 ", .seed = %" PRId64 ", .eval_interval = %" PRId64
             ", .display = %" PRId64 ", .optimizer = %d, .elastic = ",
          t->steps.n, t->warmup, t->seed, t->eval_interval, t->display, t->optimizer);
  print_float(f, t->elastic), fputs("},\n", f);
  fprintf(f, "  .data = {\n    .source = %s,\n", sources[d->source]);
  print_file_list(f, "train", &l->train_files);
  print_file_list(f, "test", &l->test_files);
  fputs("    .scale = ", f), print_float(f, d->scale), fputs(", .mean = {", f);
  for (int i = 0; i < d->mean.n; i++) fputs(i ? ", " : "", f), print_float(f, d->mean.v[i]);
  fprintf(f, "}, .nmean = %d,\n    .train_size = %" PRId64 ", .test_size = %" PRId64 ", .classes = %" PRId64 "},\n",
          d->mean.n, d->train_size, d->test_size, d->classes);
  fputs("  .workspace = workspace, .forward = forward, .backward = backward, .update = update,\n", f);
  fprintf(f, "  .nbuckets = %d,\n};\n", l->nbuckets);
  fputs("\nint main(int argc, char **argv) { return swn_main(&network, argc, argv); }\n", f);
}

bool emit_c(const Module *m, const char *source, FILE *f) {
  Arena a = {0};
  Lowered l;
  bool ok = lower_module(m, source, &a, &l);
  if (ok) {
    fprintf(f, "/* Generated by swnc from %s: network %s. Do not edit: change the .swn file. */\n", source, m->name);
    fputs("#include <stdint.h>\n\n#include \"swnc_rt.h\"\n\n"
          "/* per-image buffers sit at offset x batch; the other regions have fixed offsets */\n"
          "#define ACT(o) (s->image + (size_t)(o) * (size_t)B)\n#define FIX(o) (s->fixed + (o))\n"
          "#define PARAM(o) (s->params + (o))\n#define GRAD(o) (s->grads + (o))\n"
          "#define MOMENTUM(o) (s->momentum + (o))\n#define STATE(o) (s->state + (o))\n\n",
          f);
    print_structs(f, &l);
    print_functions(f, &l);
    print_tables(f, &l);
    print_network(f, &l, source);
  }
  arena_free(&a);
  return ok;
}
