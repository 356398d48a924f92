"""nbgrader configuration for the posenc course (this folder is the course directory)."""

c = get_config()  # noqa: F821  (provided by nbgrader when it loads this file)

c.CourseDirectory.course_id = "posenc"
c.CourseDirectory.root = "."

# Grade a student who deleted or edited a test cell with the original cell.
c.OverwriteCells.add_missing_cells = True

# Stop a cell that runs for too long (an endless loop) instead of hanging the whole class.
c.ExecutePreprocessor.timeout = 60
