from app.launcher import main

raise SystemExit(main())
