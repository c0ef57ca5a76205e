"""``python -m tenure``: the runtime's command line (see :mod:`tenure.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m tenure"))
