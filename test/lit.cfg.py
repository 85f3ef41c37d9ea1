# lit configuration for rudnn's IR regression tests.
import os

import lit.formats

config.name = "rudnn"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".cu"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "unit", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.rudnn_obj_root, "test")

# Our tools first, then FileCheck, not and count from LLVM 19.
config.environment["PATH"] = os.pathsep.join(
    [config.rudnn_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
)
# Sanitizer settings of the build reach the tools under test.
for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

config.substitutions.append(("%rudnn_src_root", config.rudnn_src_root))
import sys

config.substitutions.append(("%python", sys.executable))
