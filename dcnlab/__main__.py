import sys

from dcnlab.experiments.cli import main

sys.exit(main())
