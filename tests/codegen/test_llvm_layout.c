/* The LLVM backend builds the runtime's structs from the contract's rows; this checks every
 * offset and size against the C compiler's, for the host's data layout. */
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <stddef.h>

#include "../../codegen/llvm/emit_llvm.h"
#include "check.h"
#include "swnc_rt.h"

static LLVMTargetDataRef layout;
static LLVMContextRef ctx;

/* Every struct of the contract: its LLVM type's size and field offsets against the C
 * compiler's, the offsets taken from the same rows that declare the struct. */
static void check_struct(const char *name, size_t size, const size_t *offsets, unsigned n) {
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

#define OFFSET_FIELD(code, ctype, name) offsetof(STRUCT_NOW, name),
#define OFFSET_ARRAY(code, ctype, name, length) offsetof(STRUCT_NOW, name),
#define CHECK_STRUCT(T)                                                                            \
  {                                                                                                \
    typedef T STRUCT_NOW;                                                                          \
    size_t offsets[] = {T##_FIELDS(OFFSET_FIELD, OFFSET_ARRAY)};                                   \
    check_struct(#T, sizeof(T), offsets, sizeof offsets / sizeof offsets[0]);                      \
    checked++;                                                                                     \
  }

int main(void) {
  LLVMInitializeNativeTarget();
  char *triple = LLVMGetDefaultTargetTriple(), *error = NULL;
  LLVMTargetRef target;
  if (LLVMGetTargetFromTriple(triple, &target, &error)) return 1;
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(
      target, triple, "generic", "", LLVMCodeGenLevelNone, LLVMRelocPIC, LLVMCodeModelDefault);
  layout = LLVMCreateTargetDataLayout(tm);
  ctx = LLVMContextCreate();
  int checked = 0;
  SWN_STRUCTS(CHECK_STRUCT)
  CHECK_EQ_INT(checked, ABI_STRUCT_COUNT);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetData(layout);
  LLVMDisposeTargetMachine(tm);
  LLVMDisposeMessage(triple);
  return check_report();
}
