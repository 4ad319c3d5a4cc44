/* Target machines, the optimisation pipeline, output files and the ORC JIT. */
#include "output.h"

#include <dlfcn.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Orc.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassManagerBuilder.h>
#include <stdlib.h>

#include "emit_llvm.h"

static void initialise_targets(void) {
  static bool done;
  if (done) return;
  LLVMInitializeAllTargetInfos();
  LLVMInitializeAllTargets();
  LLVMInitializeAllTargetMCs();
  LLVMInitializeAllAsmPrinters();
  done = true;
}

static LLVMCodeGenOptLevel codegen_level(int opt) {
  return opt <= 0   ? LLVMCodeGenLevelNone
         : opt == 1 ? LLVMCodeGenLevelLess
         : opt == 2 ? LLVMCodeGenLevelDefault
                    : LLVMCodeGenLevelAggressive;
}

/* The machine for `triple` (the host's if NULL); reports an unknown triple. */
static LLVMTargetMachineRef target_machine(const LlvmOptions *o) {
  initialise_targets();
  bool host = !o->triple;
  char *triple = host ? LLVMGetDefaultTargetTriple() : LLVMNormalizeTargetTriple(o->triple);
  LLVMTargetRef target;
  char *error = NULL;
  LLVMTargetMachineRef tm = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &error)) {
    diag_error((SrcLoc){0}, "unknown target triple '%s': %s", o->triple ? o->triple : triple,
               error);
  } else {
    char *cpu = host ? LLVMGetHostCPUName() : NULL,
         *features = host ? LLVMGetHostCPUFeatures() : NULL;
    tm = LLVMCreateTargetMachine(target, triple, cpu ? cpu : "generic", features ? features : "",
                                 codegen_level(o->opt_level), LLVMRelocPIC, LLVMCodeModelDefault);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
  }
  LLVMDisposeMessage(error);
  LLVMDisposeMessage(triple);
  return tm;
}

static void optimise(LLVMModuleRef mod, int opt) {
  if (opt <= 0) return;
  LLVMPassManagerBuilderRef builder = LLVMPassManagerBuilderCreate();
  LLVMPassManagerBuilderSetOptLevel(builder, (unsigned)opt);
  LLVMPassManagerRef passes = LLVMCreatePassManager();
  LLVMPassManagerBuilderPopulateModulePassManager(builder, passes);
  LLVMRunPassManager(passes, mod);
  LLVMDisposePassManager(passes);
  LLVMPassManagerBuilderDispose(builder);
}

static bool report_llvm_error(const char *what, const char *path, char *error) {
  diag_error((SrcLoc){0}, "cannot write %s '%s': %s", what, path,
             error ? error : "unknown LLVM error");
  LLVMDisposeMessage(error);
  return false;
}

bool llvm_write(const Module *m, const char *source, const LlvmOptions *o, LlvmOutput kind,
                const char *path) {
  LLVMTargetMachineRef tm = target_machine(o);
  if (!tm) return false;
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = llvm_build_module(m, source, ctx);
  bool ok = mod != NULL;
  if (ok) {
    char *triple = LLVMGetTargetMachineTriple(tm);
    LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
    LLVMSetTarget(mod, triple);
    LLVMSetModuleDataLayout(mod, layout);
    LLVMDisposeTargetData(layout);
    LLVMDisposeMessage(triple);
    optimise(mod, o->opt_level);
    char *error = NULL;
    switch (kind) {
    case LLVM_IR:
      if (LLVMPrintModuleToFile(mod, path, &error))
        ok = report_llvm_error("LLVM IR", path, error);
      else
        LLVMDisposeMessage(error);
      break;
    case LLVM_BITCODE:
      if (LLVMWriteBitcodeToFile(mod, path)) ok = report_llvm_error("bitcode", path, NULL);
      break;
    case LLVM_ASSEMBLY:
    case LLVM_OBJECT:
      if (LLVMTargetMachineEmitToFile(tm, mod, (char *)path,
                                      kind == LLVM_OBJECT ? LLVMObjectFile : LLVMAssemblyFile,
                                      &error))
        ok = report_llvm_error(kind == LLVM_OBJECT ? "object" : "assembly", path, error);
      break;
    }
    LLVMDisposeModule(mod);
  }
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  return ok;
}

static bool orc_error(LLVMErrorRef err, const char *what) {
  if (!err) return false;
  char *message = LLVMGetErrorMessage(err);
  diag_error((SrcLoc){0}, "JIT: %s: %s", what, message);
  LLVMDisposeErrorMessage(message);
  return true;
}

bool llvm_run(const Module *m, const char *source, const LlvmOptions *o, const char *runtime_so,
              int argc, char **argv, int *status) {
  initialise_targets();
  /* As a generated executable does before its libraries load (runtime/wait_policy.c): OpenMP
   * threads wait passively unless the user says otherwise. */
  setenv("OMP_WAIT_POLICY", "passive", 0);
  /* The runtime's symbols become the process's, where the JIT looks them up. */
  if (!dlopen(runtime_so, RTLD_NOW | RTLD_GLOBAL)) {
    diag_error((SrcLoc){0}, "cannot load the runtime library '%s': %s", runtime_so, dlerror());
    return false;
  }
  LLVMOrcLLJITRef jit;
  if (orc_error(LLVMOrcCreateLLJIT(&jit, NULL), "cannot create the JIT")) return false;
  bool ok = false;
  LLVMOrcDefinitionGeneratorRef process;
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  LLVMModuleRef mod = llvm_build_module(m, source, LLVMOrcThreadSafeContextGetContext(tsc));
  if (mod && !orc_error(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                            &process, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL),
                        "cannot search the process for symbols")) {
    LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit), process);
    LLVMSetTarget(mod, LLVMOrcLLJITGetTripleString(jit));
    LLVMSetDataLayout(mod, LLVMOrcLLJITGetDataLayoutStr(jit));
    optimise(mod, o->opt_level);
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
    LLVMOrcExecutorAddress main_address;
    if (!orc_error(LLVMOrcLLJITAddLLVMIRModule(jit, LLVMOrcLLJITGetMainJITDylib(jit), tsm),
                   "cannot add the module") &&
        !orc_error(LLVMOrcLLJITLookup(jit, &main_address, "main"), "cannot find main")) {
      int (*program_main)(int, char **) = (int (*)(int, char **))(uintptr_t)main_address;
      fflush(stdout);
      *status = program_main(argc, argv);
      ok = true;
    }
  } else if (mod) {
    LLVMDisposeModule(mod);
  }
  LLVMOrcDisposeThreadSafeContext(tsc);
  LLVMOrcDisposeLLJIT(jit);
  return ok;
}
