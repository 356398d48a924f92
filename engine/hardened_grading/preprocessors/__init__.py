"""nbgrader preprocessors, one per module.

- :mod:`.execute`: ``ResilientExecute``, nbgrader's ``Execute`` in the sandbox, with the trusted judge;
- :mod:`.restore`: ``RestoreReleaseCells``, the release's locked cells restored in the student's notebook;
- :mod:`.inert`: ``InertContent``, outputs and markdown made inert;
- :mod:`.mathml`: ``tex_to_mathml``, the feedback's math as MathML, for ``inert``'s ``markdown2html``;
- :mod:`.metadata`: ``CheckCellMetadata``, nbgrader's check with its schema checked once;
- :mod:`.feedback_summary`: ``FeedbackSummary``, the feedback's summary, hidden tests hidden;
- :mod:`.model_answers`: ``ModelAnswers``, each manually graded answer's model answer in the feedback, after the due date;
- :mod:`.release`: ``generate_assignment``'s preprocessors (stubs a student can run).
"""
