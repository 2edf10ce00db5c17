"""Converters from other eval tools' configs to assay's goldens and candidates files.

Each importer has one job, converting: it reads the other tool's files and returns plain data
(goldens as dicts, a candidates-file dict, what it could not convert). Writing the files is the
command line's job (``assay import``).
"""
