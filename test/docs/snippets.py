"""Runs the snippets the documentation marks runnable, so that the docs
cannot go stale silently.

    snippets.py SOURCE_DIR BUILD_DIR

A fenced block directly after a line `<!-- runnable -->` in README.md or
docs/*.md runs by its language: `console` (each `$ ` line, from the source
folder, with the build's tools first on PATH), `sh` (the whole block),
`python` (with the build's package), `cpp` (compiled against include/ and
the build's librudnn, then run); `build/bin/` names the build's tools. Each must exit 0; a failure names the
file and line. Finding no runnable block at all is a failure too."""

import os
import pathlib
import re
import subprocess
import sys
import tempfile

MARK = "<!-- runnable -->"


def blocks(path):
    """(line, language, text) of each runnable block of `path`."""
    lines = path.read_text().splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.strip() != MARK or i + 1 >= len(lines):
            continue
        fence = re.match(r"^```(\w[\w+]*)\s*$", lines[i + 1])
        if not fence:
            raise SystemExit(f"{path}:{i + 1}: {MARK} is not followed by a fenced block")
        end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
        found.append((i + 2, fence.group(1), "\n".join(lines[i + 2 : end]) + "\n"))
    return found


def run(command, source, build, **kwargs):
    environment = dict(
        os.environ,
        PATH=f"{build}/bin:{os.environ['PATH']}",
        PYTHONPATH=f"{build}/python",
        RUDNN_BACKEND="emulation",
        RUDNN_CACHE_DIR=f"{build}/docs-cache",
    )
    return subprocess.run(
        command, cwd=source, env=environment, capture_output=True, text=True, **kwargs
    )


def check(language, text, source, build, scratch):
    # The docs name the tools as a checkout's default build has them.
    text = text.replace("build/bin/", f"{build}/bin/")
    if language == "console":
        commands = [line[2:] for line in text.splitlines() if line.startswith("$ ")]
        return run(["bash", "-euo", "pipefail", "-c", "\n".join(commands)], source, build)
    if language == "sh":
        return run(["bash", "-euo", "pipefail", "-c", text], source, build)
    if language == "python":
        return run([sys.executable, "-c", text], source, build)
    if language in ("cpp", "c++"):
        program = scratch / "snippet.cpp"
        program.write_text(text)
        binary = scratch / "snippet"
        compiled = run(
            [
                os.environ.get("CXX", "c++"),
                "-std=c++17",
                f"-I{source}/include",
                f"-I{build}/include",
                str(program),
                "-o",
                str(binary),
                f"-L{build}/lib",
                "-lrudnn",
                f"-Wl,-rpath,{build}/lib",
            ],
            source,
            build,
        )
        return compiled if compiled.returncode else run([str(binary)], source, build)
    raise SystemExit(f"no way to run a {language!r} block")


def main():
    source, build = (pathlib.Path(p).resolve() for p in sys.argv[1:3])
    files = [source / "README.md", *sorted((source / "docs").glob("*.md"))]
    failures, count = [], 0
    with tempfile.TemporaryDirectory() as scratch:
        for path in files:
            for line, language, text in blocks(path):
                count += 1
                result = check(language, text, source, build, pathlib.Path(scratch))
                where = f"{path.relative_to(source)}:{line} ({language})"
                if result.returncode:
                    failures.append(
                        f"{where}: exit {result.returncode}\n{result.stdout}{result.stderr}"
                    )
                else:
                    print(f"ok {where}")
    if not count:
        failures.append("no runnable snippet found")
    for failure in failures:
        print("FAIL", failure)
    print(f"{count - len(failures)} of {count} runnable snippets ran")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
