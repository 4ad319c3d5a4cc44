/* Pass `fold-gradients`: SGD with momentum (Caffe's: v = momentum v + lr (g + decay w);
 * w -= v) needs the gradient g only to add it into v. Backward can do that addition itself:
 * each backward kernel stores a parameter gradient as grad_keep x old + grad_scale x g
 * (runtime/kernels.h), so with grad_keep = momentum / ranks and grad_scale = lr x lr_mult /
 * ranks it turns v into momentum v / ranks + lr g / ranks in place, the allreduce's sum over
 * the ranks makes that momentum v + lr x (the mean gradient), and the update only adds the
 * decay term and steps (swk_sgd_apply). The gradient pool, a third copy of the parameters'
 * size, is gone: for AlexNet and VGG-16, whose parameters dominate their memory, 233 and 528 MiB.
 * The arithmetic differs from the unfolded update only in rounding.
 *
 * Not folded: EASGD (its elastic force is added to the gradient itself), LARS and Adam (their
 * steps read the gradient itself), clipping (it scales the gradient once all of it is known),
 * gradient accumulation (iter_size: the micro-batches' gradients are summed first), a target
 * whose kernels do not honour grad_keep (Target.folds_gradients), and --no-fold-gradients. A
 * folded program has no gradients to save (--save-gradients says so). */
#include "../ir/target.h"
#include "passes.h"

bool pass_fold_gradients(Module *m) {
  m->schedule.gradients_in_momentum =
      !m->options.no_fold_gradients && m->options.target->folds_gradients &&
      m->train.optimizer == OPT_SGD && !(m->train.clip_gradients > 0) && m->train.iter_size == 1;
  return true;
}
