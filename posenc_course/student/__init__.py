"""A student's tools: ``posenc-check`` (:mod:`.check`), and ``posenc-lab``, the course's JupyterLab (:mod:`.lab`).
"""
