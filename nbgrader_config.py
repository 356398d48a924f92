"""nbgrader configuration for the posenc course. This folder is the course directory."""

c = get_config()  # noqa: F821  (nbgrader provides get_config when it loads this file)

c.CourseDirectory.course_id = "posenc"

# A student who deleted or edited a test cell is graded with the original cell, not left in
# "needs manual grading".
c.OverwriteCells.add_missing_cells = True

# Per-cell time limit while grading: an endless loop is interrupted after this many seconds,
# that cell (and its exercise's tests) fail, and grading goes on. Every honest cell takes well
# under a second.
c.Execute.timeout = 20

# The written reflections (part (c) of each exercise) are ungraded markdown cells whose model
# answer sits between solution markers. nbgrader clears markers outside solution cells only when
# this check is off; every graded answer is still a proper solution cell.
c.ClearSolutions.enforce_metadata = False
c.ClearSolutions.text_stub = "*Write your answer here.*"
