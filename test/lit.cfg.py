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
# The rudnn-bench-* tools' tests, where this build has them.
if config.rudnn_benchmarks.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("benchmarks")

# The emulated tools share one compiled prelude (lit passes no HOME, so
# there is no default cache folder).
config.environment["RUDNN_EMULATION_PRELUDE_DIR"] = os.path.join(
    config.rudnn_obj_root, "test", "emulation-prelude"
)

# Sanitizer settings given to the run reach the tools under test (a
# sanitized build's defaults are built into them).
for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

config.substitutions.append(("%rudnn_src_root", config.rudnn_src_root))
config.substitutions.append(("%rudnn_tools_dir", config.rudnn_tools_dir))
import sys

config.substitutions.append(("%python", sys.executable))

# "sass": a SASS disassembler the kernel report finds (as it looks for one).
def _has_sass_disassembler():
    import shutil

    given = os.environ.get("RUDNN_CUOBJDUMP")
    candidates = [given] if given else []
    candidates += [shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump"]
    try:
        import nvidia

        for root in nvidia.__path__:
            for version in ("cu13", "cu12"):
                candidates.append(os.path.join(root, version, "bin", "cuobjdump"))
    except ImportError:
        pass
    return any(
        c
        and os.access(c, os.X_OK)
        and os.path.exists(os.path.join(os.path.dirname(c), "nvdisasm"))
        for c in candidates
    )


if _has_sass_disassembler():
    config.available_features.add("sass")
