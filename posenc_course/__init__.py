"""Course tooling for posenc: build the source notebook, make submissions, report grades, run the demo."""
