import sys

from nlue.space.serve import main

sys.exit(main())
