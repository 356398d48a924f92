"""What nbgrader writes: the graded notebook, the feedback page, the grades' CSV.

- :mod:`.notebook`: ``TolerantNotebookExporter``, an unreadable notebook graded rather than skipped;
- :mod:`.feedback_html`: ``SummaryFirstHTMLExporter``, the feedback page with its summary first;
- :mod:`.grades_csv`: ``RoundedCsvExportPlugin``, ``nbgrader export`` with scores to 2 decimals.
"""
