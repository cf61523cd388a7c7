"""A whole program instead of a snippet: `program.py` runs the file as `__main__` with
`torch.compile` replaced by `program_compiles.py`'s recorder of each compiled callable, and
`program_reference.py` runs it again eagerly in the reference process, as far as the compared
calls reach, and `program_compare.py` compares the two call by call.
"""
