"""``hardened-grade``: a whole class graded in parallel, with progress, resumable and shardable.

Run it in the course directory (or give ``--course``). It is ``nbgrader autograde ASSIGNMENT`` for many
students at once, and nothing else: each worker process imports nbgrader once and calls its own
``Autograde`` (through ``NbGraderAPI.autograde``) for one student after another, with the course's
``nbgrader_config.py``, so every submission is graded exactly as a serial run grades it, sandbox and
hardening included, into the same ``autograded/`` folders and gradebook.

- A submission that crashes its worker costs only itself: the worker is replaced, and the submission is
  reported as failed.
- Ctrl-C, or a run killed part-way, leaves the submissions graded so far; running the same command again
  finishes the class (half-graded folders are removed first, as ``nbgrader autograde`` does here), and
  skips what was graded unless ``--force``.
- Another run may grade in the same course at once (``nbgrader autograde``, another ``hardened-grade``, of any
  assignment): each worker holds the lock of the submission it grades (:mod:`hardened_grading.locks`), so no
  clean-up removes a live run's folder, and two runs that come to the same submission take turns.
- The gradebook is nbgrader's ``CourseDirectory.db_url``: the course's SQLite file by default, which every
  worker writes to with a busy timeout (``GradeClass.sqlite_timeout``), or a PostgreSQL database
  (``postgresql://...``) shared by shards on several machines.

A progress bar (count, rate, time left, of the submissions graded: skipped ones take no time) on a terminal;
otherwise one line per submission. At the end: how many were graded, skipped and failed (and why); every
graded submission that could not be read (graded as the blank release), had a cell that timed out, crashed
its kernel or ran out of memory, with the cell and the grader's message (read from its graded notebook);
and where the log is. Exit code 0 when none failed,
1 when some did, 2 when nothing could be graded.

Its modules:

- :mod:`.command`: the command line and :func:`~.command.run`;
- :mod:`.students`: which students (patterns, shards);
- :mod:`.gradebook`: the gradebook's URL, checked and prepared;
- :mod:`.pool`: the workers, one submission each at a time;
- :mod:`.worker`: one worker, grading one submission with nbgrader's API;
- :mod:`.progress`: the progress bar and the summary.

And what comes after grading, keyed by the course's parts (a part pattern over grade ids):

- :mod:`.grade_table`: ``hardened-scores``, each student's score per part, from the gradebook;
- :mod:`.report`: ``hardened-report``, the class report (histograms, mistakes grouped, not attempted apart);
- :mod:`.slurm`: ``hardened-slurm``, a class graded as a Slurm job array, with its batch scripts (``sbatch/``);
- :mod:`.course`: what these read of a course when not told (its only assignment and notebook, its parts).
"""
