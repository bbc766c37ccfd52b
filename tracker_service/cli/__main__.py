"""``python -m tracker_service.cli``: the meshnet-tracker command."""

import sys

from tracker_service.cli.commands import main

sys.exit(main())
