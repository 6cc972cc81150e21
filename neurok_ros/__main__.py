"""`python -m neurok_ros` is the `neurok` command line."""
import sys

from neurok_ros.cli import main

sys.exit(main())
