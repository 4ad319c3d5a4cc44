/* The sw26010 model's price of the kernel calls description.c does not price (layer_costs.c):
 * the target's op_cost and update_cost (ir/target.h). */
#ifndef SWNC_SW26010_LAYER_COSTS_H
#define SWNC_SW26010_LAYER_COSTS_H

#include "../../ir/target.h"

double sw_op_cost(const Graph *g, const Op *op, int64_t batch, bool backward, bool input_grad);
double sw_update_cost(int64_t params, int workers, const TrainConfig *train);
/* The explicit plan's computation c on s->batch images as kernels/conv.c runs it (description.c),
 * with its tiling word. */
double sw_explicit_conv_cost(const ConvShape *s, ConvComputation c, int tiling);

#endif
