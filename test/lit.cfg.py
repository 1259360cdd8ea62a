# lit configuration for nnc's test suite.
import os
import shutil

import lit.formats
import lit.util
from lit.llvm import llvm_config

config.name = "nnc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.nnc_obj_root, "test")

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()

tool_dirs = [os.path.join(config.nnc_obj_root, "bin"), config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["nnc", "nnc-opt", "FileCheck", "not", "count", "split-file", "llvm-readobj", "llvm-nm", "nnc-peak"], tool_dirs)
# Codegen tests that run lowered IR link it with a C driver (LLVM 22's own tools).
llvm_config.add_tool_substitutions(["mlir-translate", "mlir-opt", "llvm-dis", "clang"], [config.llvm_tools_dir])

# Test models and reference numbers come from Debian's Python (python3-torch,
# python3-onnx); another python3 may come first on PATH.
config.substitutions.append(("%python", "/usr/bin/python3"))
# The Python package (python/, docs/python.md) as the build tree holds it, for
# PYTHONPATH; its tests need it built (NNC_BUILD_PYTHON, on by default).
config.substitutions.append(("%nnc_python_path", os.path.join(config.nnc_obj_root, "python")))
if lit.util.pythonize_bool(getattr(config, "nnc_build_python", "")):
    config.available_features.add("python-bindings")
# Tests of code compiled for another CPU than this one depend on what it has.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        if " avx512f" in cpuinfo.read():
            config.available_features.add("avx512")
except OSError:
    pass
config.substitutions.append(("%nnc_src", config.nnc_src_root))
# Generated bench models are shared by tests and cached across runs.
config.substitutions.append(("%models", os.path.join(config.nnc_obj_root, "models")))
config.substitutions.append(("%nnc_bin", os.path.join(config.nnc_obj_root, "bin")))
# Compiled conformance modules, reused while the model and nnc are unchanged.
config.substitutions.append(("%conformance_cache", os.path.join(config.nnc_obj_root, "conformance")))

# Runtime tests: the runtime's unit tests, nnc-run and the embedding examples,
# run against the hand-written modules built in test/Runtime/modules/.
llvm_config.add_tool_substitutions(["nnc-run", "nnc-runtime-tests", "nnc-stress", "run_model_c", "run_model_cpp"], tool_dirs)
config.substitutions.append(("%runtime_modules", os.path.join(config.nnc_obj_root, "test", "Runtime", "modules")))
# The fake CUDA driver that CUDA modules run on in tests (test/Runtime/fake_cuda/).
config.substitutions.append(("%fake_cuda", os.path.join(config.nnc_obj_root, "test", "Runtime", "fake_cuda")))
# The install test (test/Install/): `cmake --install` of this build tree into
# a prefix, and the prefix's layout (GNUInstallDirs) under it.
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%nnc_obj", config.nnc_obj_root))
config.substitutions.append(("%install_bindir", config.nnc_install_bindir))
config.substitutions.append(("%install_libdir", config.nnc_install_libdir))
# A build with -DNNC_SANITIZE (docs/robustness.md): what a sanitizer's
# allocator hides (resident memory) is not measured.
if config.nnc_sanitize:
    config.available_features.add("sanitized")
# Tests between two cores need two this process may use.
if len(os.sched_getaffinity(0)) >= 2:
    config.available_features.add("two-cpus")

# The CUDA target's ptxas gate needs the CUDA toolkit, which nnc itself never
# needs: found through CUDA_PATH, /usr/local/cuda or PATH; without it the gate
# is reported as unsupported, and said here.
def find_ptxas():
    for root in (os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.access(os.path.join(root, "bin", "ptxas"), os.X_OK):
            return os.path.join(root, "bin", "ptxas")
    return shutil.which("ptxas")

ptxas = find_ptxas()
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
else:
    lit_config.warning("ptxas not found (CUDA_PATH, /usr/local/cuda/bin, PATH): "
                       "the CUDA ptxas gate is SKIPPED")
