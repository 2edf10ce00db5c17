"""``python -m assay``: the same command line as the ``assay`` script."""

from assay.cli import main

main()
