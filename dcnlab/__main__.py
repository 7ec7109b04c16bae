import sys

from dcnlab.cli import main

sys.exit(main())
