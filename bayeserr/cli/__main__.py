import sys

from bayeserr.cli import run

sys.exit(run())
