from ui.launch import main

raise SystemExit(main())
