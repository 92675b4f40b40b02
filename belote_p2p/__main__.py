import sys

from belote_p2p.app.cli import main

sys.exit(main())
