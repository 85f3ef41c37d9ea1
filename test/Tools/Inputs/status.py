#!/usr/bin/env python3
"""status.py CODE COMMAND...: runs COMMAND (output passed through) and
succeeds exactly when it exits with CODE."""
import subprocess
import sys

sys.exit(0 if subprocess.call(sys.argv[2:]) == int(sys.argv[1]) else 1)
