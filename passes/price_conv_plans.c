/* Pass `price-conv-plans`: for every convolution and each of its three computations (forward,
 * weight gradient, input gradient), the cost of each plan: explicit GEMM, implicit GEMM,
 * direct, Winograd F(2x2, 3x3), F(2x2, 5x5) (both winograd2) or F(4x4, 3x3) (winograd4).
 *
 * A plan the target calls illegal for the layer is never a candidate, nor is one --conv
 * excludes (forcing a plan the target forbids is an error naming the layer and the reason; a
 * computation the forced plan cannot do, which the target prices infinite (the direct plan's
 * input gradient with stride 2, Winograd on anything but 3x3 or 5x5 stride-1 filters), keeps the
 * explicit plan).
 * A candidate's cost is the tuning file's measurement if it has one for the shape (--tune),
 * else the target's cost model; a plan whose kernel has tilings (Target.conv_tilings) costs
 * its fastest measured tiling where that beats the rule by more than 3%, and the tiling is
 * recorded with the cost (ConvChoice.tiling) for the layout pass's choice to carry. This pass records the costs and picks each computation's
 * cheaper plan; the layout pass, which also prices the transforms a plan's layout needs,
 * makes the final choice. Tuning entries for other targets or machines are ignored with a
 * warning, as are entries that match no shape of this network (stale after a change). */
#include <math.h>

#include "../ir/target.h"
#include "../ir/tuning.h"
#include "passes.h"

/* The plan --conv forces for computation c: one for all, or the reference set's. */
static ConvPlan forced_plan(const Module *m, const ConvShape *s, ConvComputation c) {
  int tiling;
  if (m->options.conv == CONV_AUTO) return PLAN_EXPLICIT;
  if (m->options.conv == CONV_REFERENCE) return m->options.target->reference_plan(s, c, &tiling);
  return (ConvPlan)(m->options.conv - CONV_FORCE_EXPLICIT);
}

/* The tiling a plan is priced and run with: the reference set's for its plan, else the rule (or a
 * measured tiling, module_conv_cost). */
static int base_tiling(const Module *m, const ConvShape *s, ConvPlan plan, ConvComputation c) {
  int tiling = 0;
  if (m->options.conv != CONV_REFERENCE) return 0;
  return m->options.target->reference_plan(s, c, &tiling) == plan ? tiling : 0;
}

/* Under --conv, only the forced plan stays a candidate, or explicit where it cannot compute. */
static void apply_force(const Module *m, const ConvShape *s, ConvChoice *ch) {
  if (m->options.conv == CONV_AUTO) return;
  for (int c = 0; c < CONV_COMPUTATIONS; c++) {
    ConvPlan forced = forced_plan(m, s, (ConvComputation)c);
    ConvPlan keep = isinf(ch->cost[c][forced]) ? PLAN_EXPLICIT : forced;
    for (int p = 0; p < PLAN_COUNT; p++)
      if (p != (int)keep) ch->cost[c][p] = INFINITY;
  }
  ConvPlan forced = forced_plan(m, s, CONV_BACKWARD);
  ConvPlan joint = isinf(ch->joint[forced]) ? PLAN_EXPLICIT : forced;
  for (int p = 0; p < PLAN_COUNT; p++)
    if (p != (int)joint) ch->joint[p] = INFINITY;
}

/* Whether --conv forces one plan for all, and it cannot compute this layer at all. */
static bool forced_plan_illegal(const Module *m, const ConvChoice *ch, ConvPlan forced) {
  return m->options.conv >= CONV_FORCE_EXPLICIT && ch->illegal[forced];
}

static void cost_conv(Module *m, Op *op) {
  ConvChoice *ch = &op->conv;
  *ch = (ConvChoice){.costed = true};
  ConvShape s = conv_shape(&m->graph, op, m->train.batch);
  for (int plan = 0; plan < PLAN_COUNT; plan++) {
    ch->illegal[plan] = target_conv_illegal(m->options.target, &s, (ConvPlan)plan);
    bool candidate = !ch->illegal[plan];
    ch->joint[plan] = INFINITY;
    if (!candidate) {
      for (int c = 0; c < CONV_COMPUTATIONS; c++) ch->cost[c][plan] = INFINITY;
      continue;
    }
    ConvCostSource src;
    double dgrad_saving = 0;
    for (int c = 0; c < CONV_COMPUTATIONS; c++) {
      ch->cost[c][plan] =
          module_conv_cost(m, &s, (ConvPlan)plan, (ConvComputation)c,
                           base_tiling(m, &s, (ConvPlan)plan, (ConvComputation)c), &src);
      ch->tuned[c][plan] = src.tuned, ch->tiling[c][plan] = src.tiling;
      if (c == CONV_DGRAD && src.tiling) dgrad_saving = src.rule - ch->cost[c][plan];
    }
    /* the joint call runs the input gradient with its tiling: it saves there what it saves alone */
    ch->joint[plan] = module_conv_cost(m, &s, (ConvPlan)plan, CONV_BACKWARD,
                                       base_tiling(m, &s, (ConvPlan)plan, CONV_BACKWARD), &src) -
                      dgrad_saving;
    ch->joint_tuned[plan] = src.tuned;
  }
  for (int c = 0; c < CONV_COMPUTATIONS; c++)
    for (int plan = 0; plan < PLAN_COUNT; plan++)
      ch->able[c] |= (unsigned)!isinf(ch->cost[c][plan]) << plan;
  apply_force(m, &s, ch); /* the forced plan where it can, explicit elsewhere */
  /* the layout pass chooses the plans, with the transforms each would need */
}

/* One warning for the layers a plan forced for all cannot compute (they run explicit, as
 * --help says): the first named with its reason, the others counted. */
static void warn_forced_fallbacks(const Module *m) {
  const Op *first = NULL;
  int others = 0;
  ConvPlan forced = (ConvPlan)(m->options.conv - CONV_FORCE_EXPLICIT);
  for (int i = 0; i < m->graph.ops.len; i++) {
    const Op *op = &m->graph.ops.data[i];
    if (op->kind != OP_CONV || !forced_plan_illegal(m, &op->conv, forced)) continue;
    if (first)
      others++;
    else
      first = op;
  }
  if (!first) return;
  char more[64] = "";
  if (others)
    snprintf(more, sizeof more, " (and %d other layer%s)", others, others == 1 ? "" : "s");
  op_warning(first,
             "--conv=%s, but the %s plan cannot compute it on target '%s' (%s -> %s): %s; "
             "it runs explicit%s",
             conv_plan_name(forced), conv_plan_name(forced), m->options.target->name,
             shape_str(m->graph.values.data[first->inputs.data[0]].shape),
             shape_str(m->graph.values.data[first->output].shape), first->conv.illegal[forced],
             more);
}

/* ------------------------------------------------------------------ tuning-file hygiene */

/* Whether some convolution (or, for a transform, some 4-D tensor) of the network has the key. */
static bool key_in_network(const Module *m, const TuningEntry *e) {
  bool conv = !strcmp(e->kind, "conv");
  for (int i = 0; i < m->graph.ops.len; i++) {
    const Op *op = &m->graph.ops.data[i];
    char key[KEY_MAX];
    if (conv && op->kind == OP_CONV) {
      ConvShape s = conv_shape(&m->graph, op, m->train.batch);
      conv_shape_key(&s, key);
    } else if (!conv && m->graph.values.data[op->output].shape.rank == 4) {
      transform_key(m->train.batch, m->graph.values.data[op->output].shape, key);
    } else {
      continue;
    }
    if (!strcmp(key, e->key)) return true;
  }
  return false;
}

/* One warning per kind of problem (other target, other machine), one per stale entry. */
static void check_tuning(const Module *m) {
  const Tuning *t = m->options.tuning;
  int foreign_target = 0, foreign_machine = 0;
  const TuningEntry *first_target = NULL, *first_machine = NULL;
  for (int i = 0; i < t->entries.len; i++) {
    const TuningEntry *e = &t->entries.data[i];
    if (strcmp(e->target, m->options.target->name)) {
      if (!foreign_target++) first_target = e;
    } else if (strcmp(e->machine, m->options.machine)) {
      if (!foreign_machine++) first_machine = e;
    } else if (!key_in_network(m, e)) {
      diag_warning(
          e->loc,
          "tuning entry for %s %s matches no %s of network '%s' at batch %lld (stale?); ignored",
          e->kind, e->key, !strcmp(e->kind, "conv") ? "convolution" : "tensor", m->name,
          (long long)m->train.batch);
    }
  }
  if (foreign_target)
    diag_warning(first_target->loc, "%d tuning entr%s for target '%s', not '%s'; ignored",
                 foreign_target, foreign_target == 1 ? "y is" : "ies are", first_target->target,
                 m->options.target->name);
  if (foreign_machine)
    diag_warning(first_machine->loc,
                 "%d tuning entr%s measured on '%s', not on this machine ('%s'); ignored",
                 foreign_machine, foreign_machine == 1 ? "y was" : "ies were",
                 first_machine->machine, m->options.machine);
}

bool pass_price_conv_plans(Module *m) {
  if (!m->options.target) {
    diag_error((SrcLoc){0}, "internal: no target to choose convolution plans for");
    return false;
  }
  for (int i = 0; i < m->graph.ops.len; i++)
    if (m->graph.ops.data[i].kind == OP_CONV) cost_conv(m, &m->graph.ops.data[i]);
  if (m->options.conv >= CONV_FORCE_EXPLICIT) warn_forced_fallbacks(m);
  if (m->options.tuning) check_tuning(m);
  return true;
}
