"""What ``read`` and ``notebook_edit`` are built on for files that are not plain text:
Jupyter notebooks (:mod:`.notebook`, :mod:`.cells`) and PDFs (:mod:`.pdf`, :mod:`.pdfwork`).

Every module here is imported on first use (a session that never reads a notebook or a PDF
imports none of them, nor nbformat, pypdf or pypdfium2).
"""
