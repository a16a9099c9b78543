from nexus_ark.cli import main

raise SystemExit(main())
