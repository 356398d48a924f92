"""``hardened-grade``: a whole class graded in parallel, with progress, resumable and shardable.

- :mod:`.command`: the command line and :func:`~.command.run`;
- :mod:`.students`: which students (patterns, shards);
- :mod:`.gradebook`: the gradebook's URL, checked and prepared;
- :mod:`.pool`: the workers, one submission each at a time;
- :mod:`.worker`: one worker, grading one submission with nbgrader's API;
- :mod:`.progress`: the progress bar and the summary;
- :mod:`.ahead`: the next submission's kernel, started while this one is graded.
"""
