"""What a student leaves behind, handled without trusting it.

- :mod:`.folder`: a student's folder, scanned and rebuilt without following a link;
- :mod:`.terminal`: a student's text, escaped for the grader's terminal and logs.
"""
