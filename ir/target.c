/* The target-independent part of target descriptions: a convolution's shape and its key. */
#include "target.h"

#include <math.h>
#include <string.h>

#include "tuning.h"

ConvShape conv_shape(const Graph *g, const Op *op, int64_t batch) {
  Shape x = g->values.data[op->inputs.data[0]].shape, y = g->values.data[op->output].shape;
  const OpAttrs *a = &op->attr;
  return (ConvShape){batch,        x.dim[1],     x.dim[2],       x.dim[3],
                     y.dim[1],     y.dim[2],     y.dim[3],       a->kernel[0],
                     a->kernel[1], a->stride[0], a->stride[1],   a->pad[0],
                     a->pad[1],    a->groups,    a->dilation[0], a->dilation[1]};
}

void conv_shape_key(const ConvShape *s, char key[KEY_MAX]) {
  snprintf(
      key, KEY_MAX, "b%lld:c%lldx%lldx%lld:o%lldx%lldx%lld:k%lldx%lld:s%lldx%lld:p%lldx%lld:g%lld",
      (long long)s->batch, (long long)s->ci, (long long)s->h, (long long)s->w, (long long)s->co,
      (long long)s->ho, (long long)s->wo, (long long)s->kh, (long long)s->kw, (long long)s->sh,
      (long long)s->sw, (long long)s->ph, (long long)s->pw, (long long)s->groups);
  if (s->dh != 1 || s->dw != 1) /* keys of undilated shapes stay as tuning files have them */
    snprintf(key + strlen(key), KEY_MAX - strlen(key), ":d%lldx%lld", (long long)s->dh,
             (long long)s->dw);
}

int64_t target_batch_share(const Target *t, int64_t batch) {
  int parts = t->batch_parts > 1 ? t->batch_parts : 1;
  return (batch + parts - 1) / parts;
}

void transform_key(int64_t batch, Shape s, char key[KEY_MAX]) {
  snprintf(key, KEY_MAX, "b%lld:c%lldx%lldx%lld", (long long)batch, (long long)s.dim[1],
           (long long)s.dim[2], (long long)s.dim[3]);
}

/* The tuning file's entry for this target and machine, or NULL. */
static const TuningEntry *measured(const Module *m, const char *kind, const char *key,
                                   const char *what, const char *plan) {
  const Tuning *t = m->options.tuning;
  if (!t) return NULL;
  return tuning_find(t, kind, m->options.target->name, key, what, plan, m->options.machine);
}

const char *target_conv_illegal(const Target *t, const ConvShape *s, ConvPlan plan) {
  const TargetPlan *p = &t->plans[plan];
  if (!p->cost) return p->absent ? p->absent : "the target has no kernels for this plan";
  return p->illegal ? p->illegal(s) : NULL;
}

double target_conv_cost(const Target *t, const ConvShape *s, ConvPlan plan, ConvComputation c,
                        int tiling) {
  const TargetPlan *p = &t->plans[plan];
  return p->cost && conv_plan_computes(plan, c) ? p->cost(s, c, tiling) : INFINITY;
}

int target_conv_tilings(const Target *t, const ConvShape *s, ConvPlan plan, ConvComputation c,
                        int words[TILINGS_MAX]) {
  const TargetPlan *p = &t->plans[plan];
  return p->tilings ? p->tilings(s, c, words) : 0;
}

double target_conv_workspace(const Target *t, const ConvShape *s, ConvPlan plan,
                             bool input_gradient) {
  const TargetPlan *p = &t->plans[plan];
  return p->workspace ? p->workspace(s, input_gradient) : 0;
}

const char *conv_plan_tiling_name(const Target *t, ConvPlan plan, int tiling,
                                  char name[PLAN_NAME_MAX]) {
  char word[TILING_NAME_MAX];
  if (!tiling || !t->tiling_name) return conv_plan_name(plan);
  snprintf(name, PLAN_NAME_MAX, "%s:%s", conv_plan_name(plan), t->tiling_name(tiling, word));
  return name;
}

const char *conv_plan_text(const Module *m, const Op *op, ConvComputation c,
                           char name[PLAN_NAME_MAX]) {
  ConvPlan plan = op->conv.plan[c];
  return conv_plan_tiling_name(m->options.target, plan, op->conv.tiling[c][plan], name);
}

/* A tiling replaces the plan's rule only if measured this much faster: medians of repeated
 * runs on a shared machine move by a few percent, and choosing by that noise would make the
 * compiled program depend on it for nothing. */
static const double TILING_MARGIN = 0.03;

double module_conv_cost(const Module *m, const ConvShape *s, ConvPlan plan, ConvComputation c,
                        int tiling, ConvCostSource *source) {
  const Target *t = m->options.target;
  char key[KEY_MAX], base[PLAN_NAME_MAX];
  conv_shape_key(s, key);
  const char *what = conv_computation_name(c);
  const TuningEntry *e =
      measured(m, "conv", key, what, conv_plan_tiling_name(t, plan, tiling, base));
  double cost = e ? e->seconds : target_conv_cost(t, s, plan, c, tiling);
  *source = (ConvCostSource){.tuned = e != NULL, .tiling = tiling, .rule = cost};
  int words[TILINGS_MAX];
  int n = !tiling && m->options.tuning ? target_conv_tilings(t, s, plan, c, words) : 0;
  for (int i = 0; i < n; i++) {
    char name[PLAN_NAME_MAX];
    const TuningEntry *tiled =
        measured(m, "conv", key, what, conv_plan_tiling_name(t, plan, words[i], name));
    if (tiled && tiled->seconds < cost && tiled->seconds < source->rule * (1 - TILING_MARGIN))
      cost = tiled->seconds, source->tuned = true, source->tiling = words[i];
  }
  return cost;
}

double module_transform_cost(const Module *m, Shape s, Layout from, Layout to) {
  const char *word = transform_word(from, to);
  if (!word) return INFINITY;
  char key[KEY_MAX];
  transform_key(m->train.batch, s, key);
  const TuningEntry *e = measured(m, "transform", key, word, "-");
  return e ? e->seconds
           : m->options.target->transform_cost(m->train.batch, s.dim[1], s.dim[2], s.dim[3], from,
                                               to);
}
