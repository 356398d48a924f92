"""The tests' helper library: what several test modules share (the classes they grade, the wrong and alternative
answers, the cells they build, the graders they start, the site they build and serve; the Slurm cluster and the
PostgreSQL server, which the benchmarks start too, are in posenc_course/qa/). No test is in it, and no test module
imports from another: each imports what it shares from here (tests/conftest.py checks both at collection)."""
