/* The LLVM backend mirrors the runtime's structs field by field; this checks every mirrored
 * offset and size against the C compiler's, for the host's data layout. */
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <stddef.h>

#include "../../codegen/llvm/emit_llvm.h"
#include "check.h"
#include "swnc_rt.h"

static LLVMTargetDataRef layout;
static LLVMContextRef ctx;

static void check_offsets(const char *name, size_t size, const size_t *offsets, unsigned n) {
  LLVMTypeRef t = llvm_runtime_type(ctx, name);
  CHECK(t != NULL);
  if (!t) return;
  CHECK_EQ_INT(LLVMCountStructElementTypes(t), n);
  CHECK_EQ_INT(LLVMABISizeOfType(layout, t), size);
  for (unsigned i = 0; i < n; i++) {
    if (LLVMOffsetOfElement(layout, t, i) != offsets[i]) fprintf(stderr, "%s field %u\n", name, i);
    CHECK_EQ_INT(LLVMOffsetOfElement(layout, t, i), offsets[i]);
  }
}

#define OFF(T, f) offsetof(T, f)

int main(void) {
  LLVMInitializeNativeTarget();
  char *triple = LLVMGetDefaultTargetTriple(), *error = NULL;
  LLVMTargetRef target;
  if (LLVMGetTargetFromTriple(triple, &target, &error)) return 1;
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, "generic", "", LLVMCodeGenLevelNone, LLVMRelocPIC,
                                                    LLVMCodeModelDefault);
  layout = LLVMCreateTargetDataLayout(tm);
  ctx = LLVMContextCreate();
  size_t step[] = {OFF(SwnStep, profile), OFF(SwnStep, batch), OFF(SwnStep, image), OFF(SwnStep, fixed),
                   OFF(SwnStep, params), OFF(SwnStep, grads), OFF(SwnStep, momentum), OFF(SwnStep, state),
                   OFF(SwnStep, ws), OFF(SwnStep, seed), OFF(SwnStep, iteration), OFF(SwnStep, first_image),
                   OFF(SwnStep, momentum_coef), OFF(SwnStep, weight_decay), OFF(SwnStep, buckets_ready),
                   OFF(SwnStep, conv), OFF(SwnStep, dist), OFF(SwnStep, workers)};
  check_offsets("SwnStep", sizeof(SwnStep), step, 18);
  size_t param[] = {OFF(SwnParamInfo, name), OFF(SwnParamInfo, ndims), OFF(SwnParamInfo, dims),
                    OFF(SwnParamInfo, offset), OFF(SwnParamInfo, count), OFF(SwnParamInfo, lr_mult),
                    OFF(SwnParamInfo, decay_mult), OFF(SwnParamInfo, init), OFF(SwnParamInfo, init_arg),
                    OFF(SwnParamInfo, fan_in)};
  check_offsets("SwnParamInfo", sizeof(SwnParamInfo), param, 10);
  size_t state[] = {OFF(SwnStateInfo, name), OFF(SwnStateInfo, offset), OFF(SwnStateInfo, count), OFF(SwnStateInfo, init)};
  check_offsets("SwnStateInfo", sizeof(SwnStateInfo), state, 4);
  size_t metric[] = {OFF(SwnMetric, name), OFF(SwnMetric, offset), OFF(SwnMetric, is_loss)};
  check_offsets("SwnMetric", sizeof(SwnMetric), metric, 3);
  size_t train[] = {OFF(SwnTrainConfig, batch), OFF(SwnTrainConfig, test_batch), OFF(SwnTrainConfig, epochs),
                    OFF(SwnTrainConfig, iterations), OFF(SwnTrainConfig, lr), OFF(SwnTrainConfig, momentum),
                    OFF(SwnTrainConfig, weight_decay), OFF(SwnTrainConfig, lr_policy), OFF(SwnTrainConfig, gamma),
                    OFF(SwnTrainConfig, power), OFF(SwnTrainConfig, step), OFF(SwnTrainConfig, steps),
                    OFF(SwnTrainConfig, nsteps), OFF(SwnTrainConfig, warmup), OFF(SwnTrainConfig, seed),
                    OFF(SwnTrainConfig, eval_interval), OFF(SwnTrainConfig, display),
                    OFF(SwnTrainConfig, optimizer), OFF(SwnTrainConfig, elastic)};
  check_offsets("SwnTrainConfig", sizeof(SwnTrainConfig), train, 19);
  size_t data[] = {OFF(SwnDataConfig, source), OFF(SwnDataConfig, train), OFF(SwnDataConfig, test),
                   OFF(SwnDataConfig, ntrain), OFF(SwnDataConfig, ntest), OFF(SwnDataConfig, scale),
                   OFF(SwnDataConfig, mean), OFF(SwnDataConfig, nmean), OFF(SwnDataConfig, train_size),
                   OFF(SwnDataConfig, test_size), OFF(SwnDataConfig, classes)};
  check_offsets("SwnDataConfig", sizeof(SwnDataConfig), data, 11);
  size_t net[] = {OFF(SwnNetwork, name), OFF(SwnNetwork, source), OFF(SwnNetwork, hash), OFF(SwnNetwork, image_words),
                  OFF(SwnNetwork, fixed_words), OFF(SwnNetwork, param_words), OFF(SwnNetwork, state_words),
                  OFF(SwnNetwork, layers), OFF(SwnNetwork, nlayers), OFF(SwnNetwork, params), OFF(SwnNetwork, nparams),
                  OFF(SwnNetwork, state), OFF(SwnNetwork, nstate), OFF(SwnNetwork, metrics), OFF(SwnNetwork, nmetrics),
                  OFF(SwnNetwork, in_c), OFF(SwnNetwork, in_h), OFF(SwnNetwork, in_w), OFF(SwnNetwork, input_offset),
                  OFF(SwnNetwork, label_offset), OFF(SwnNetwork, classes), OFF(SwnNetwork, train), OFF(SwnNetwork, data),
                  OFF(SwnNetwork, workspace), OFF(SwnNetwork, forward), OFF(SwnNetwork, backward), OFF(SwnNetwork, update),
                  OFF(SwnNetwork, nbuckets)};
  check_offsets("SwnNetwork", sizeof(SwnNetwork), net, 28);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetData(layout);
  LLVMDisposeTargetMachine(tm);
  LLVMDisposeMessage(triple);
  return check_report();
}
