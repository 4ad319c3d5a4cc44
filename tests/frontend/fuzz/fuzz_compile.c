/* libFuzzer target: arbitrary bytes through the whole compile: the front end, every pass (with
 * the verifier after each), the printers, and both backends: the C text (to /dev/null) and an
 * LLVM module, built and verified in memory. Any crash, sanitizer report, leak or timeout is a
 * bug; inputs that found one are kept in regressions/ and run by ctest. Build with
 * -DSWNC_FUZZ=ON and CC=clang; scripts/fuzz.sh runs it. */
#include <stdint.h>
#include <stdio.h>

#include "../../codegen/c/emit_c.h"
#include "../../codegen/llvm/emit_llvm.h"
#include "../../frontend/frontend.h"
#include "../../ir/target.h"
#include "../../passes/passes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *sink;
  if (!sink) sink = fopen("/dev/null", "w");
  diag_set_stream(sink);
  diag_reset();
  Module *m = frontend_parse_text("fuzz.swn", (const char *)data, size, NULL, 0);
  if (diag_error_count() == 0) {
    m->options.target = target_find("host");
    PipelineOptions po = {.verify_each = true, .dump = sink};
    if (pipeline_run(m, &po)) {
      ir_print(sink, m);
      ir_print_dot(sink, m);
      ir_print_stats(sink, m);
      ir_print_explain(sink, m);
      emit_c(m, "fuzz.swn", sink);
      LLVMContextRef ctx = LLVMContextCreate();
      LLVMModuleRef mod = llvm_build_module(m, "fuzz.swn", ctx);
      if (mod) LLVMDisposeModule(mod);
      LLVMContextDispose(ctx);
    }
  }
  module_free(m);
  return 0;
}
