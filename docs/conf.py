"""The course site: Sphinx with MyST-NB (docs/maintainers/docs.md says why). Build it with `make docs`."""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS / "_ext"), str(DOCS.parent)]

project = "posenc"
author = "the posenc authors"
copyright = "the posenc authors, MIT licence"

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx-mathjax-offline", "posenc_docs"]
# The contract's functions: signatures and numpy docstrings only (autodoc shows no function body)
napoleon_google_docstring = False
autodoc_default_options = {}
add_module_names = False
# _generated/layout.md is included by maintainers/layout.md, not a page of its own
exclude_patterns = ["_build", "README.md", "requirements.lock", "measured/README.md", ".theory-cache",
                    "_generated/layout.md"]
# The notebooks arrive executed (the theory, in _generated/) or are shown as students get them: never run here.
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings = ["mystnb.unknown_mime_type"]

html_theme = "sphinx_book_theme"
html_title = "posenc: positional encodings in transformers"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
# The tab's icon: without one the browser asks the server for /favicon.ico, a 404 in its console.
html_favicon = "_static/favicon.svg"
# The theme's light/dark mode before the reader picks one: without it the theme's script finds no mode and logs
# "Got invalid theme mode" on every first visit. "auto" follows the reader's system.
html_context = {"default_mode": "auto"}
html_theme_options = {
    "show_toc_level": 2,
    "home_page_in_toc": True,
    "use_download_button": False,  # each notebook page names its release file to download
}
